"""MasterOpDef text -> one YAML spec per op, re-runnable without losing curation.

Each import writes the freshly derived specs to ``opdefs/<Op>.yaml`` through a three-way merge:

* base   = what the previous import derived (kept in ``opdefs/imported-base.json``),
* ours   = the YAML as it is now (possibly hand-curated),
* theirs = what this import derives.

Per field: unchanged by curators -> take the new derivation (a new SDK's fix flows in); unchanged by
the source -> keep the curation; changed by both -> keep the curation and report a conflict. Lists of
named things (inputs, params, outputs, constraints) merge item by item, keyed by name / seed text.
The printed report lists ops added and removed and every field the source changed, so a new
MasterOpDef can be reviewed as a diff.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path
from typing import Any

import yaml

from opdefs import expr, rules
from opdefs import masteropdef as mod

SCHEMA_HEADER = "# yaml-language-server: $schema=schema/opdef.schema.json\n"
BASE_FILE = "imported-base.json"
_CATALOGUES = {"000": "hexagon_nn", "001": "hexagon_nn", "002": "nhwc_schema", "003": "nnapi_1_0"}


# ---------------------------------------------------------------------------------------------
# Field parsers
# ---------------------------------------------------------------------------------------------
def parse_dtypes(text: str) -> list[str]:
    out = []
    for part in text.split(","):
        p = part.strip().replace("\\", "")
        if not p:
            continue
        if p.lower() in ("backend specific", "backend_specific"):
            out.append("backend_specific")
        else:
            out.append(p.removeprefix("QNN_DATATYPE_"))
    return out


def _split_top(s: str) -> list[str]:
    depth, cur, out = 0, "", []
    for ch in s:
        if ch in "[(":
            depth += 1
        elif ch in "])":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def _dim_token(tok: str) -> str | int | None:
    tok = tok.strip().replace(" ", "")
    if re.fullmatch(r"\d+", tok):
        return int(tok)
    try:
        ast.parse(tok, mode="eval")
    except SyntaxError:
        return None
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*|[A-Za-z0-9_+\-*/%()]+", tok):
        return tok
    return None


def parse_shape(text: str) -> dict[str, Any]:
    """Seed shape text -> {text, dims|rank|scalar}. Unparseable text is kept as text only."""
    t = text.strip()
    out: dict[str, Any] = {"text": t}
    if t == "":
        out["rank"] = "any"
        return out
    if t.lower() == "scalar":
        out["scalar"] = True
        return out
    lead = re.match(r"^(?:\dD (?:tensor )?of shape |[A-Za-z]-dimensional with shape )(?=\[)", t)
    if lead:  # "1D of shape [M]", "4D tensor of shape [batch, ...]"
        t = t[lead.end():]
    if t.startswith("["):
        depth, end = 0, None
        for i, ch in enumerate(t):
            depth += ch == "["
            depth -= ch == "]"
            if depth == 0:
                end = i
                break
        inner = t[1:end] if end else ""
        if inner and not inner.startswith("["):
            toks = [_dim_token(x) for x in _split_top(inner)]
            if all(x is not None for x in toks) and "..." not in inner:
                out["dims"] = toks
                return out
    m = (
        re.search(r"(?:rank|Rank)\s+(?:=\s+)?([A-Za-z])\b(?!\s*[-+(])", t)
        or re.match(r"^([A-Za-z])-dimensional", t)
        or re.match(r"^[Aa] tensor of ([A-Za-z]) dimension", t)
    )
    if m:
        out["rank"] = m.group(1)
        return out
    if re.match(r"^(Any|any|a tensor|N-dimensional)", t):
        out["rank"] = "any"
    elif re.match(r"^1D\b", t):  # "1D. For batch normalization: ..." (Moments' axes): a vector, length unsaid
        out["rank"] = 1
    return out


def _number(s: str) -> int | float | None:
    s = s.strip()
    if re.fullmatch(r"-?\d+", s):
        return int(s)
    if re.fullmatch(r"-?(\d+\.\d*|\d*\.\d+|\d+)(e-?\d+)?", s, re.IGNORECASE):
        return float(s)
    return None


def parse_default(text: str, dtype: list[str], items: list[mod.Item]) -> dict[str, Any]:
    """Seed default -> {default: value, default_text?}; symbolic and per-enum defaults kept as data."""
    t = text.strip()
    is_bool = dtype == ["BOOL_8"]
    if items and not t:  # per-enum alternatives: "1.0 for QNN_OP_..._ELU"
        by: dict[str, Any] = {}
        for it in items:
            m = re.match(r"^(\S+) for QNN_OP_[A-Z_]+?_OPERATION_([A-Z0-9_]+)$", it.text)
            if m:
                by[m.group(2)] = _number(m.group(1))
        return {"default": {"by_operation": by}, "default_text": "; ".join(i.text for i in items)}
    n = _number(t)
    if n is not None:
        return {"default": bool(n) if is_bool else n}
    m = re.fullmatch(r"\{(-?[\d.]+),\.\.,(-?[\d.]+)\}", t.replace(" ", ""))
    if m and m.group(1) == m.group(2):
        return {"default": {"fill": _number(m.group(1))}, "default_text": t}
    if t.startswith("["):
        try:
            return {"default": json.loads(t)}
        except ValueError:
            pass
    if t.lower() in ("none", "parameter not used unless set", "no limit is applied"):
        return {"default": None, "default_text": t}
    if re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*(\s*[-+]\s*\d+)?", t):
        return {"default": {"expr": t.replace(" ", "")}, "default_text": t}
    return {"default": None, "default_text": t}


def _names_known(check: str, known: set[str]) -> bool:
    """A rule's output is kept only if it parses and names nothing the op lacks (lint would refuse it)."""
    try:
        return expr.parse(check).names() <= known
    except expr.ExprError:
        return False


# ---------------------------------------------------------------------------------------------
# One op -> spec dict
# ---------------------------------------------------------------------------------------------
def _constraint_id(owner: str, kind: str, used: set[str]) -> str:
    base = re.sub(r"[^A-Za-z0-9]+", "", owner.replace("[", "").replace("]", "").replace("..", "_")) + "_" + kind
    cid, k = base, 2
    while cid in used:
        cid, k = f"{base}{k}", k + 1
    used.add(cid)
    return cid


def _entry_common(e: mod.Entry) -> dict[str, Any]:
    d: dict[str, Any] = {"name": e.heading, "line": e.line}
    if e.latex:
        d["symbol"] = e.latex
    if e.description:
        d["description"] = e.description
    if e.notes:
        d["notes"] = e.notes
    mand = e.fields.get("Mandatory")
    d["mandatory"] = None if mand is None else mand.lower() == "true"
    return d


def build_spec(op: mod.Op, crosswalk: dict[str, dict[str, list[str]]] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"name": op.name, "package": "qti.aisw", "source": {"lines": [op.line, op.end_line]}}
    first = re.split(r"(?<=\.)\s", op.description.replace("\n", " "), maxsplit=1)[0] if op.description else ""
    spec["summary"] = first
    spec["deprecated"] = op.deprecated
    spec["description"] = op.description
    spec["formulas"] = op.formulas
    spec["references"] = [
        {k: v for k, v in {"catalogue": r.kind, "label": r.label, "name": r.name, "url": r.url, "line": r.line,
                           "for": r.scope}.items() if v is not None}
        for r in op.references
    ]  # fmt: skip
    eq: dict[str, list[str]] = {}
    onnx = sorted({r.name.removeprefix("ops::") for r in op.references if r.kind == "onnx"})
    if onnx:
        eq["onnx"] = onnx
    nnapi = sorted({r.name.removeprefix("ANEURALNETWORKS_") for r in op.references if r.kind == "nnapi"})
    if nnapi:
        eq["nnapi"] = nnapi
    for cat, names in (crosswalk or {}).get(op.name, {}).items():
        eq[cat] = sorted(set(names))
    spec["equivalents"] = eq

    # rank symbols and dims bound by tensor shapes (first declaration wins)
    rank_symbols: dict[str, str] = {}
    dims: dict[str, tuple[str, int]] = {}
    tensor_dims: dict[str, list[str]] = {}
    tensors: list[tuple[str, mod.Entry, dict[str, Any]]] = []
    for side, entries in (("in", op.inputs), ("out", op.outputs)):
        for e in entries:
            sh = parse_shape(e.fields.get("Shape", ""))
            tensors.append((side, e, sh))
            th = mod.tensor_heading(e.heading)
            owner = f"{th[0]}[{th[1]}]" if th else e.heading
            if isinstance(sh.get("rank"), str) and len(sh["rank"]) == 1:
                rank_symbols.setdefault(sh["rank"], owner)
            for i, dname in enumerate(sh.get("dims", [])):
                if isinstance(dname, str) and dname.isidentifier():
                    dims.setdefault(dname, (owner, i))
            tensor_dims[owner] = [str(x) for x in sh.get("dims", [])]
    params = {p.heading for p in op.params}
    enums = {m.group(1) for p in op.params for it in p.quoted.get("Values", [])
             if (m := re.match(r"^([A-Za-z0-9_]+)\s*=", it.text))}  # fmt: skip
    known = set(params) | set(rank_symbols) | set(dims) | enums | {"in", "out"}
    for ds in tensor_dims.values():
        for d in ds:
            known |= set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", d))
    used_ids: set[str] = set()

    def constraints(e: mod.Entry, owner: str, is_tensor: bool) -> list[dict[str, Any]]:
        ctx = rules.Context(owner, is_tensor, rank_symbols, params, dims, tensor_dims)
        out = []
        for it in e.quoted.get("Constraints", []):
            kind, _ = rules.split_kind(it.text)
            c: dict[str, Any] = {"id": _constraint_id(owner, kind, used_ids), "kind": kind, "seed": it.text,
                                 "line": it.line}  # fmt: skip
            check = rules.translate(it.text, ctx)
            if check is not None and _names_known(check, known):
                c["check"] = check
            out.append(c)
        return out

    def tensor_spec(side: str, e: mod.Entry, sh: dict[str, Any]) -> dict[str, Any]:
        d = _entry_common(e)
        th = mod.tensor_heading(e.heading)
        owner = e.heading
        if th and th[2] is not None:
            d["repeated"] = {"first": th[1], "last": th[2]}
            owner = f"{th[0]}[{th[1]}]"
        elif e.repeated and th:
            d["repeated"] = {"first": th[1], "last": None}
        dt = e.fields.get("Data type")
        d["dtypes"] = parse_dtypes(dt) if dt is not None else None
        by_class = {}
        for n in e.notes:
            m = re.match(r"^(Numerical|Comparison|Logical): (.*)$", n)
            if m:
                by_class[m.group(1)] = parse_dtypes(m.group(2))
        if by_class:
            d["dtypes_by_class"] = by_class
        d["shape"] = sh
        if "Dynamic Shape" in e.fields:
            d["dynamic"] = e.fields["Dynamic Shape"]
        if "Default" in e.fields:
            d.update(parse_default(e.fields["Default"], d["dtypes"] or [], e.quoted.get("Default", [])))
        d["constraints"] = constraints(e, owner, True)
        return d

    spec["inputs"] = [tensor_spec(s, e, sh) for s, e, sh in tensors if s == "in"]
    spec["params"] = []
    for p in op.params:
        d = _entry_common(p)
        dt = p.fields.get("Data type", "")
        d["dtype"] = parse_dtypes(dt)[0] if parse_dtypes(dt) else None
        d["shape"] = parse_shape(p.fields.get("Shape", ""))
        if "Default" in p.fields:
            d.update(parse_default(p.fields["Default"], [d["dtype"]], p.quoted.get("Default", [])))
        if "Values" in p.quoted:
            vals = {}
            for it in p.quoted["Values"]:
                m = re.match(r"^([A-Za-z0-9_]+)\s*=\s*(-?\d+),?$", it.text)
                if m:
                    vals[m.group(1)] = int(m.group(2))
            d["values"] = vals
        d["constraints"] = constraints(p, p.heading, False)
        spec["params"].append(d)
    spec["outputs"] = [tensor_spec(s, e, sh) for s, e, sh in tensors if s == "out"]
    spec["sections_none"] = op.sections_none
    return spec


# ---------------------------------------------------------------------------------------------
# Crosswalk (equivalents in the other seed catalogues)
# ---------------------------------------------------------------------------------------------
def parse_crosswalk(path: Path, seeds_dir: Path | None = None) -> dict[str, dict[str, list[str]]]:
    """op -> {catalogue: [names]} from the crosswalk tables, keeping only rows whose catalogue op
    name really occurs in its seed file (the crosswalk is a starting point, not gospel)."""
    out: dict[str, dict[str, list[str]]] = {}
    cat = seed = None
    seed_text: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        m = re.match(r"^## Seed (\d{3})", line)
        if m:
            seed, cat = m.group(1), _CATALOGUES.get(m.group(1))
            continue
        if line.startswith("## "):
            cat = None
        if not cat or not line.startswith("|") or line.startswith("|---"):
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        if seed == "003":
            if len(cells) < 5 or cells[0] == "NNAPI 1.0 op":
                continue
            name, qnn, match = cells[0], cells[3], cells[4]
        else:
            if len(cells) < 4 or cells[0] in ("hexagon_nn op", "op"):
                continue
            name, qnn, match = cells[0], cells[2], cells[3]
        if match not in ("exact", "partial") or not re.fullmatch(r"[A-Za-z0-9]+", qnn):
            continue
        if seeds_dir is not None:
            if seed not in seed_text:
                files = sorted(seeds_dir.glob(f"{seed}_*.txt"))
                seed_text[seed] = files[0].read_text(encoding="utf-8", errors="replace") if files else ""
            if name not in seed_text[seed]:
                continue
        out.setdefault(qnn, {}).setdefault(cat, []).append(name)
    return out


# ---------------------------------------------------------------------------------------------
# Three-way merge
# ---------------------------------------------------------------------------------------------
_KEYS = {"inputs": "name", "params": "name", "outputs": "name", "constraints": "seed", "references": "url"}
_MISSING = object()


def merge3(base: Any, ours: Any, theirs: Any, path: str, conflicts: list[str]) -> Any:
    if ours == base:
        return theirs
    if theirs == base or ours == theirs:
        return ours
    if isinstance(base, dict) and isinstance(ours, dict) and isinstance(theirs, dict):
        out = {}
        for k in list(ours) + [k for k in theirs if k not in ours]:
            b, o, t = base.get(k, _MISSING), ours.get(k, _MISSING), theirs.get(k, _MISSING)
            v = merge3(b, o, t, f"{path}.{k}", conflicts)
            if v is not _MISSING:
                out[k] = v
        return out
    key = _KEYS.get(path.rsplit(".", 1)[-1])
    if key and all(isinstance(x, list) and all(isinstance(i, dict) for i in x) for x in (base, ours, theirs)):
        index = {name: {i.get(key): i for i in lst} for name, lst in (("b", base), ("o", ours), ("t", theirs))}
        order = [i.get(key) for i in theirs] + [i.get(key) for i in ours if i.get(key) not in index["t"]]
        out_list = []
        for k in dict.fromkeys(order):
            v = merge3(index["b"].get(k, _MISSING), index["o"].get(k, _MISSING), index["t"].get(k, _MISSING),
                       f"{path}[{k}]", conflicts)  # fmt: skip
            if v is not _MISSING:
                out_list.append(v)
        return out_list
    conflicts.append(path)
    return ours


def changed_paths(old: Any, new: Any, path: str = "") -> list[str]:
    """Field paths whose value differs (for the source-change report)."""
    if old == new:
        return []
    if isinstance(old, dict) and isinstance(new, dict):
        out = []
        for k in sorted(set(old) | set(new), key=str):
            out += changed_paths(old.get(k), new.get(k), f"{path}.{k}" if path else str(k))
        return out
    key = _KEYS.get(path.rsplit(".", 1)[-1])
    if key and isinstance(old, list) and isinstance(new, list) and all(isinstance(i, dict) for i in old + new):
        o, n = {i.get(key): i for i in old}, {i.get(key): i for i in new}
        out = []
        for k in list(dict.fromkeys(list(o) + list(n))):
            out += changed_paths(o.get(k), n.get(k), f"{path}[{k}]")
        return out
    return [path]


# ---------------------------------------------------------------------------------------------
# YAML output
# ---------------------------------------------------------------------------------------------
class _Dumper(yaml.SafeDumper):
    pass


def _str_rep(dumper: yaml.SafeDumper, data: str) -> yaml.Node:
    style = "|" if "\n" in data else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)


_Dumper.add_representer(str, _str_rep)


def _dict_rep(dumper: yaml.SafeDumper, data: dict[str, Any]) -> yaml.Node:
    """Mappings in block style: a flow mapping that wraps mid-string (a constraint's seed sentence) is hard to
    read and to edit; one key a line is neither."""
    return dumper.represent_mapping("tag:yaml.org,2002:map", data, flow_style=False)


def _list_rep(dumper: yaml.SafeDumper, data: list[Any]) -> yaml.Node:
    """A short list of scalars stays on one line (``dtypes: [FLOAT_32, FLOAT_16]``, ``lines: [3040, 3080]``);
    any other list is one item a line."""
    short = all(isinstance(v, (str, int, float, bool)) or v is None for v in data) and len(repr(data)) <= 80
    return dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=short)


_Dumper.add_representer(dict, _dict_rep)
_Dumper.add_representer(list, _list_rep)


def dump(spec: dict[str, Any]) -> str:
    body = yaml.dump(spec, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=120, default_flow_style=None)
    return SCHEMA_HEADER + body


def run_import(source: Path, out_dir: Path, crosswalk: Path | None = None, seeds_dir: Path | None = None,
               dry_run: bool = False) -> dict[str, Any]:  # fmt: skip
    """Import ``source`` into ``out_dir``; returns a report dict (also what the CLI prints)."""
    ops = mod.parse_file(source)
    cw = parse_crosswalk(crosswalk, seeds_dir) if crosswalk and crosswalk.exists() else {}
    derived = {op.name: build_spec(op, cw) for op in ops}
    base_path = out_dir / BASE_FILE
    base: dict[str, Any] = json.loads(base_path.read_text()) if base_path.exists() else {}
    report: dict[str, Any] = {"added": [], "removed": [], "changed": {}, "conflicts": {}, "written": []}
    for name, theirs in derived.items():
        path = out_dir / f"{name}.yaml"
        ours = yaml.safe_load(path.read_text(encoding="utf-8")) if path.exists() else None
        b = base.get(name)
        if b is None:
            if base:  # a first import adds everything; only later ones report additions
                report["added"].append(name)
        else:
            ch = changed_paths(b, theirs)
            if ch:
                report["changed"][name] = ch
        if ours is None:
            merged = theirs
        else:
            conflicts: list[str] = []
            merged = merge3(b if b is not None else theirs, ours, theirs, "", conflicts)
            if conflicts:
                report["conflicts"][name] = conflicts
        # compare data, not text: a curator's own YAML layout is left alone when nothing changed
        if ours is None or ours != merged:
            report["written"].append(name)  # with dry_run: would be written
            if not dry_run:
                path.write_text(dump(merged), encoding="utf-8")
    report["removed"] = sorted(set(base) - set(derived))
    if not dry_run:
        new_base = json.dumps(derived, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
        if not base_path.exists() or base_path.read_text() != new_base:
            base_path.write_text(new_base)
    report["ops"] = len(derived)
    return report
