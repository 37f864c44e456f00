"""Catalogue coverage: how much of each older op catalogue the suite covers, from specs and results.

The seed catalogues (Hexagon NN, NNAPI 1.0, the NHWC schema) are the op lists people migrating to
QNN start from, so the question they ask is "of *my* ops, how many have a QNN equivalent, a spec, a
reference implementation, and pass on backend X". Specs are read as plain YAML data (only ``name``
and ``equivalents``); nothing from ``opdefs`` is imported, so this works on a bare checkout plus a
results file. For the seed catalogues "with QNN equivalent" and "with spec" coincide by
construction (equivalents are declared in specs); both are shown so the QNN row reads the same way.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from tabulate import tabulate

from reports.matrix import REFERENCE_BACKEND, backend_sort_key
from reports.record import PASS, SKIP, Record
from reports.render_text import md

REPO = Path(__file__).resolve().parents[1]
DEFAULT_SPECS = REPO / "opdefs"
DEFAULT_SEEDS = REPO.parent / "shared" / "seeds"
# The op lists read out of the seed documents, shipped with the package (the documents are not): what the report
# uses where the documents are not beside the checkout. ``python -m reports catalogues --derive SEEDS`` rewrites it.
SHIPPED = Path(__file__).with_name("catalogue_ops.json")
QNN = "qnn"


# ---- op names out of the seed files -------------------------------------------------------------

# Column-0 "Name:" lines are op headers in the Hexagon NN op list; these words are section labels.
_HEXAGON_NOT_OPS = frozenset({"Examples", "Example", "Notes", "Note"})
_HEXAGON_HEADER = re.compile(r"^([A-Za-z_]\w*(?:/[A-Za-z_]\w*)*)\s*(?:\([^)]*\))?\s*:?\s*$")


def hexagon_nn_ops(text: str) -> list[str]:
    """Ops of a Hexagon NN op list: column-0 lines holding only an op name.

    The files are hand-written, so a header is ``Name:``, ``Name`` or ``Name (Reducing Sum):``, and
    ``A/B:`` names two ops; prose at column 0 ("Theory of execution:", "for Close_f:") has spaces.
    """
    ops: list[str] = []
    for line in text.splitlines():
        m = _HEXAGON_HEADER.match(line)
        if m:
            ops += [name for name in m.group(1).split("/") if name not in _HEXAGON_NOT_OPS and name not in ops]
    return ops


# NNAPI's vendor escape hatch is an operation code but not an operation anyone can implement.
_NNAPI_NOT_OPS = frozenset({"OEM_OPERATION"})


def nnapi_ops(text: str) -> list[str]:
    """Ops of the NNAPI HAL ``enum OperationType { ADD = 0, ... };`` (types.hal), OEM_OPERATION excluded."""
    m = re.search(r"enum\s+OperationType\b[^{]*\{(.*?)\n\s*\};", text, re.S)
    if not m:
        raise ValueError("no 'enum OperationType { ... };' block")
    names = re.findall(r"^\s*([A-Z][A-Z0-9_]*)\s*=\s*\d+\s*,?\s*$", m.group(1), re.M)
    return [n for n in dict.fromkeys(names) if n not in _NNAPI_NOT_OPS]


def nhwc_schema_ops(text: str) -> list[str]:
    """Ops of the NHWC operator-schemas document: its index list of ``* <a href="#Op">Op</a>`` items."""
    return list(dict.fromkeys(re.findall(r'^\s*\*\s*<a href="#([^"]+)">', text, re.M)))


@dataclass(frozen=True)
class SeedCatalogue:
    key: str  # the key of spec ``equivalents`` that names this catalogue's ops
    title: str
    seed_ids: tuple[str, ...]  # file-name prefixes in the seeds directory ("000" -> 000_*.txt)
    parse: Callable[[str], list[str]]
    strip_prefixes: tuple[str, ...] = ()  # spellings specs may use ("ANEURALNETWORKS_ADD" for ADD)


SEED_CATALOGUES: tuple[SeedCatalogue, ...] = (
    SeedCatalogue("hexagon_nn", "Hexagon NN", ("000", "001"), hexagon_nn_ops, ("OP_",)),
    SeedCatalogue("nnapi_1_0", "NNAPI 1.0", ("003",), nnapi_ops, ("ANEURALNETWORKS_",)),
    SeedCatalogue("nhwc_schema", "NHWC schema", ("002",), nhwc_schema_ops),
)


def seed_files(seeds_dir: str | Path, seed_id: str) -> list[Path]:
    return sorted(Path(seeds_dir).glob(f"{seed_id}_*"))


def catalogue_ops(cat: SeedCatalogue, seeds_dir: str | Path | None) -> tuple[list[str], list[str]]:
    """(op names, files read) of one seed catalogue; the union over its seed files, first-seen order. Without the
    seed documents (``seeds_dir`` None or absent: an installed package), the op lists shipped in ``SHIPPED``."""
    if seeds_dir is None or not Path(seeds_dir).is_dir():
        shipped = json.loads(SHIPPED.read_text(encoding="utf-8"))["catalogues"][cat.key]
        return list(shipped["ops"]), [f"{SHIPPED.name} ({', '.join(shipped['sources'])})"]
    ops: list[str] = []
    files: list[str] = []
    for seed_id in cat.seed_ids:
        found = seed_files(seeds_dir, seed_id)
        if not found:
            raise FileNotFoundError(f"{seeds_dir}: no seed file {seed_id}_* for {cat.title}")
        for path in found:
            try:
                names = cat.parse(path.read_text(encoding="utf-8"))
            except ValueError as e:
                raise ValueError(f"{path}: cannot list {cat.title} ops: {e}") from None
            files.append(str(path))
            ops += [n for n in names if n not in ops]
    return ops, files


# ---- specs --------------------------------------------------------------------------------------


@dataclass
class Specs:
    equivalents: dict[str, dict[str, list[str]]]  # QNN op -> catalogue key -> names in that catalogue
    files: dict[str, str]  # QNN op -> spec file
    ignored: list[str] = field(default_factory=list)  # YAML files without a top-level name


_SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_specs(specs_dir: str | Path) -> Specs:
    """``name`` and ``equivalents`` of every ``*.yaml`` in the directory, read with PyYAML's safe loader (its C
    form where built: the pure-Python one took 4.6 s for the 157 specs at the end of every main job)."""
    specs = Specs({}, {})
    for path in sorted(Path(specs_dir).glob("*.yaml")):
        try:
            data = yaml.load(path.read_text(encoding="utf-8"), Loader=_SAFE_LOADER)  # noqa: S506 - a safe loader
        except yaml.YAMLError as e:
            mark = getattr(e, "problem_mark", None)
            at = f":{mark.line + 1}" if mark is not None else ""
            raise ValueError(f"{path}{at}: not valid YAML: {getattr(e, 'problem', None) or e}") from None
        if not isinstance(data, dict) or not isinstance(data.get("name"), str):
            specs.ignored.append(str(path))
            continue
        name = data["name"]
        raw = data.get("equivalents") or {}
        if not isinstance(raw, dict):
            raise ValueError(f"{path}: 'equivalents' must be a mapping of catalogue -> list of op names")
        equivalents: dict[str, list[str]] = {}
        for key, names in raw.items():
            names = [names] if isinstance(names, str) else (names or [])
            if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
                raise ValueError(f"{path}: equivalents.{key} must be a list of op names")
            equivalents[str(key)] = names
        specs.equivalents[name] = equivalents
        specs.files[name] = str(path)
    return specs


# ---- coverage -----------------------------------------------------------------------------------


@dataclass
class CatalogueOp:
    name: str
    qnn_ops: list[str]  # QNN ops whose spec names this op as an equivalent (for QNN: the op itself)
    has_spec: bool
    has_reference: bool
    passes: dict[str, bool]  # backend -> some positive case of a QNN equivalent PASSed there


@dataclass
class CatalogueCoverage:
    key: str
    title: str
    sources: list[str]
    ops: list[CatalogueOp]
    unknown_names: dict[str, list[str]]  # names specs give as equivalents that the catalogue lacks -> QNN ops

    def count(self, what: str, backend: str | None = None) -> int:
        if what == "equivalent":
            return sum(1 for o in self.ops if o.qnn_ops)
        if what == "spec":
            return sum(1 for o in self.ops if o.has_spec)
        if what == "reference":
            return sum(1 for o in self.ops if o.has_reference)
        if what == "pass":
            return sum(1 for o in self.ops if o.passes.get(backend or "", False))
        raise ValueError(what)


@dataclass
class CoverageReport:
    backends: list[str]
    catalogues: list[CatalogueCoverage]
    ignored_spec_files: list[str]


def derive(seeds_dir: str | Path) -> dict[str, Any]:
    """The op lists of every seed catalogue, with the documents they came from: the data ``SHIPPED`` holds."""
    out: dict[str, Any] = {}
    for cat in SEED_CATALOGUES:
        ops, files = catalogue_ops(cat, seeds_dir)
        out[cat.key] = {"title": cat.title, "sources": [Path(f).name for f in files], "ops": ops}
    return {"about": "op names read out of the seed catalogues (facts: names only), by reports.catalogues.derive",
            "catalogues": out}


def coverage(
    records: Iterable[Record],
    specs_dir: str | Path = DEFAULT_SPECS,
    seeds_dir: str | Path = DEFAULT_SEEDS,
    catalogues: Iterable[SeedCatalogue] = SEED_CATALOGUES,
) -> CoverageReport:
    """Coverage of the QNN catalogue (the spec names) and of every seed catalogue."""
    specs = load_specs(specs_dir)
    referenced: set[str] = set()
    passed: dict[str, set[str]] = {}
    for r in records:
        if r.kind == "negative":
            continue
        passed.setdefault(r.backend, set())
        if r.backend == REFERENCE_BACKEND and r.verdict != SKIP:
            referenced.add(r.op)
        if r.verdict == PASS:
            passed[r.backend].add(r.op)
    backends = sorted(passed, key=backend_sort_key)

    def op_row(name: str, qnn_ops: list[str]) -> CatalogueOp:
        return CatalogueOp(
            name=name,
            qnn_ops=qnn_ops,
            has_spec=any(q in specs.files for q in qnn_ops),
            has_reference=any(q in referenced for q in qnn_ops),
            passes={b: any(q in passed[b] for q in qnn_ops) for b in backends},
        )

    qnn_names = sorted(specs.files)
    qnn_rows = [op_row(n, [n]) for n in qnn_names]
    result = [CatalogueCoverage(QNN, "QNN MasterOpDef (specs)", [str(specs_dir)], qnn_rows, {})]
    for cat in catalogues:
        names, sources = catalogue_ops(cat, seeds_dir)
        claimed: dict[str, list[str]] = {}
        for qnn_op, eq in sorted(specs.equivalents.items()):
            for raw in eq.get(cat.key, []):
                claimed.setdefault(_normalise(raw, cat), []).append(qnn_op)
        known = set(names)
        unknown = {n: q for n, q in sorted(claimed.items()) if n not in known}
        result.append(CatalogueCoverage(cat.key, cat.title, sources, [op_row(n, claimed.get(n, [])) for n in names],
                                        unknown))
    return CoverageReport(backends, result, specs.ignored)


def _normalise(name: str, cat: SeedCatalogue) -> str:
    name = name.strip()
    for prefix in cat.strip_prefixes:
        if name.startswith(prefix):
            return name[len(prefix):]
    return name


# ---- rendering ----------------------------------------------------------------------------------


def to_markdown(report: CoverageReport, detail: bool = False) -> str:
    """Summary table (one row per catalogue), then per seed catalogue what is missing or misnamed."""
    headers = ["catalogue", "ops", "with QNN equivalent", "with spec", "with reference",
               *[f"PASS on {md(b)}" for b in report.backends]]
    rows = []
    for c in report.catalogues:
        n = len(c.ops)
        rows.append([md(c.title), n, _share(c.count("equivalent"), n), _share(c.count("spec"), n),
                     _share(c.count("reference"), n), *[_share(c.count("pass", b), n) for b in report.backends]])
    out = ["# Catalogue coverage", "", tabulate(rows, headers=headers, tablefmt="github", disable_numparse=True), ""]
    out += ["A catalogue op counts when any QNN op whose spec names it as an equivalent has a spec / a reference "
            "(a non-SKIP positive record on the reference backend) / a PASS on that backend.", ""]
    if report.ignored_spec_files:
        out += ["YAML files without a top-level `name`, not read as specs: "
                + ", ".join(f"`{md(Path(p).name)}`" for p in report.ignored_spec_files), ""]
    for c in report.catalogues:
        if c.key == QNN and not detail:
            continue
        out += [f"## {md(c.title)}", "", "Read from: " + ", ".join(f"`{md(Path(s).name)}`" for s in c.sources), ""]
        missing = [o.name for o in c.ops if not o.qnn_ops]
        if c.key != QNN:
            out += [f"Without a QNN equivalent ({len(missing)}): " + (", ".join(md(m) for m in missing) or "none"), ""]
        if c.unknown_names:
            listed = "; ".join(f"{md(n)} (in {', '.join(md(q) for q in qs)})" for n, qs in c.unknown_names.items())
            out += [f"Equivalents named in specs that {md(c.title)} does not list: {listed}", ""]
        if detail:
            drows = [[md(o.name), md(", ".join(o.qnn_ops)) or "-", _yes(o.has_spec), _yes(o.has_reference),
                      *[_yes(o.passes.get(b, False)) for b in report.backends]] for o in c.ops]
            dheaders = ["op", "QNN ops", "spec", "reference", *[f"PASS on {md(b)}" for b in report.backends]]
            out += [tabulate(drows, headers=dheaders, tablefmt="github", disable_numparse=True), ""]
    return "\n".join(out).rstrip("\n") + "\n"


def to_json(report: CoverageReport) -> str:
    doc: dict[str, Any] = {
        "format": "qnn-conformance-catalogues",
        "version": 1,
        "backends": report.backends,
        "ignored_spec_files": report.ignored_spec_files,
        "catalogues": [
            {
                "key": c.key, "title": c.title, "sources": c.sources, "ops": len(c.ops),
                "with_equivalent": c.count("equivalent"), "with_spec": c.count("spec"),
                "with_reference": c.count("reference"),
                "with_pass": {b: c.count("pass", b) for b in report.backends},
                "unknown_equivalents": c.unknown_names,
                "op_rows": [vars(o) for o in c.ops],
            }
            for c in report.catalogues
        ],
    }
    return json.dumps(doc, indent=1) + "\n"


def _share(k: int, n: int) -> str:
    return f"{k}/{n}"


def _yes(flag: bool) -> str:
    return "yes" if flag else "-"
