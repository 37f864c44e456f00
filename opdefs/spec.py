"""Loading and validating op specs: YAML -> checked OpDef, every problem as file:line: field: message.

Validation is three layers, all reported together so one run of lint shows everything:
1. YAML syntax (safe_load only: a spec is data and nothing in it is ever executed);
2. the JSON Schema (``schema/opdef.schema.json``), via ``jsonschema``;
3. the constraint language: every ``check`` and ``derived`` expression parses under the whitelist,
   and every name it uses is an input, output, parameter, dim, rank symbol or enum member of the op.

A spec is untrusted input, and loading one is bounded: a file that is not a regular file (a FIFO would
block the reader forever) or is larger than ``MAX_SPEC_BYTES`` is refused, YAML aliases are refused
(each use is a copy of its anchor's whole tree, so ten nested ones make a kilobyte into billions of
nodes for every walk of the document), a scalar longer than ``MAX_SCALAR_CHARS`` is refused with its
line, expressions are bounded by ``opdefs.expr``, and ``load_each`` gives each file a time budget
(``opdefs.budget``). Whatever goes wrong loading one spec becomes that op's SpecError, never the run's.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import json
import os
import re
import stat
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from opdefs import budget, computed_as, expr
from opdefs.computed_as import ComputedAs
from opdefs.views import ParamSpec, TensorSpec, scalar_drawn_tensors

HERE = Path(__file__).resolve().parent
SCHEMA_PATH = HERE / "schema" / "opdef.schema.json"
# Extra spec directories (os.pathsep-separated), searched before the built-in one: an op package's
# specs, or a scratch copy. Set by the conformance plugin's --specs so xdist workers see it too.
SPECS_ENV = "QNN_CONFORMANCE_SPECS"
MAX_SPEC_BYTES = 1 << 20  # the largest built-in spec is 24 KB
MAX_SCALAR_CHARS = 20_000  # the longest built-in text (a summary) is under 2000 characters


@dataclass
class Problem:
    file: str
    line: int
    field: str
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.field}: {self.message}"


class SpecError(ValueError):
    def __init__(self, problems: list[Problem]):
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))


@functools.cache
def schema() -> dict[str, Any]:
    return json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))


# ---------------------------------------------------------------------------------------------
# YAML with line numbers
# ---------------------------------------------------------------------------------------------
def _line_map(node: yaml.Node, path: tuple = (), out: dict[tuple, int] | None = None) -> dict[tuple, int]:
    """JSON path (tuple of keys/indexes) -> 1-based line of the node, from the composed YAML."""
    out = {} if out is None else out
    out[path] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            key = k.value
            _line_map(v, path + (key,), out)
            out[path + (key,)] = k.start_mark.line + 1  # a field's line is its key's, not its value's
    elif isinstance(node, yaml.SequenceNode):
        for i, v in enumerate(node.value):
            _line_map(v, path + (i,), out)
    return out


def _duplicate_keys(node: yaml.Node, path: str = "") -> list[tuple[int, str]]:
    """(line, field) of every mapping key written twice: YAML loaders keep the last one silently, so a
    second ``generate:`` block would drop the first without a word."""
    found: list[tuple[int, str]] = []
    if isinstance(node, yaml.MappingNode):
        seen: set[str] = set()
        for k, v in node.value:
            field = f"{path}.{k.value}" if path else str(k.value)
            if k.value in seen:
                found.append((k.start_mark.line + 1, field))
            seen.add(k.value)
            found += _duplicate_keys(v, field)
    elif isinstance(node, yaml.SequenceNode):
        for i, v in enumerate(node.value):
            found += _duplicate_keys(v, f"{path}[{i}]")
    return found


def _line_for(lines: dict[tuple, int], path: tuple) -> int:
    while path and path not in lines:
        path = path[:-1]
    return lines.get(path, 1)


def _field_name(data: Any, path: tuple) -> str:
    """A readable field path: ``inputs[in[1]].constraints[in1_dynamic].check``."""
    parts: list[str] = []
    cur = data
    for p in path:
        if isinstance(p, int) and isinstance(cur, list) and p < len(cur):
            item = cur[p]
            label = item.get("name") or item.get("id") if isinstance(item, dict) else None
            parts[-1:] = [f"{parts[-1]}[{label if label is not None else p}]"] if parts else [f"[{p}]"]
            cur = item
        else:
            parts.append(str(p))
            cur = cur.get(p) if isinstance(cur, dict) else None
    return ".".join(parts) or "(top)"


# libyaml's C parser keeps every node's line (the start marks) and is ~5x faster than the pure-Python
# one; every process loads the 157 specs, so start-up time is mostly this. Without libyaml, the same
# result comes from the Python parser.
_FAST_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _refuse_unbounded(node: yaml.Node, path: Path) -> None:
    """SpecError at the first alias or over-long scalar, walking each node once (an alias is a node met a
    second time: the composer hands the anchor's node itself to every use)."""
    seen: set[int] = set()
    todo = [node]
    while todo:
        n = todo.pop()
        if id(n) in seen:
            why = "YAML aliases (*name) are not allowed in a spec: write the value out"
            raise SpecError([Problem(str(path), n.start_mark.line + 1, "(yaml)", why)])
        seen.add(id(n))
        if isinstance(n, yaml.ScalarNode):
            if len(n.value) > MAX_SCALAR_CHARS:
                raise SpecError([Problem(str(path), n.start_mark.line + 1, "(yaml)",
                                         f"a value of {len(n.value)} characters (at most {MAX_SCALAR_CHARS})")])
        elif isinstance(n, yaml.MappingNode):
            for k, v in n.value:
                todo += [v, k]
        elif isinstance(n, yaml.SequenceNode):
            todo += n.value


def read_yaml(path: Path, raw: bytes | None = None) -> tuple[Any, dict[tuple, int]]:
    text = (raw if raw is not None else _read_spec_bytes(path)).decode("utf-8")
    try:
        node = yaml.compose(text, Loader=_FAST_LOADER)
        if node is not None:
            _refuse_unbounded(node, path)
        data = yaml.SafeLoader("").construct_document(node) if node is not None else None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None) or getattr(e, "context_mark", None)
        line = mark.line + 1 if mark else 1
        msg = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise SpecError([Problem(str(path), line, "(yaml)", f"YAML syntax error: {msg}")]) from None
    except SpecError:
        raise
    except (ValueError, TypeError, OverflowError, RecursionError) as e:  # a value YAML reads but Python cannot hold
        raise SpecError([Problem(str(path), 1, "(yaml)", f"cannot be read as data: {type(e).__name__}: {e}")]) from None
    if node is not None:
        twice = _duplicate_keys(node)
        if twice:
            raise SpecError([Problem(str(path), line, field, "key written twice (YAML would keep only the last)")
                             for line, field in twice])  # fmt: skip
    return data, (_line_map(node) if node is not None else {})


# ---------------------------------------------------------------------------------------------
# The OpDef
# ---------------------------------------------------------------------------------------------
@dataclass
class Constraint:
    id: str
    kind: str
    seed: str
    owner: str
    line: int | None
    check: expr.Expr | None

    @property
    def checkable(self) -> bool:
        return self.check is not None


@dataclass
class OpDef:
    name: str
    raw: dict[str, Any]
    path: Path | None = None
    constraints: list[Constraint] = field(default_factory=list)
    # facts derived from ``raw``, computed on first use: the generator asks for them on every draw, and an
    # OpDef is never changed after loading (nothing writes to ``raw``)
    _memo: dict[str, Any] = field(default_factory=dict, init=False, repr=False, compare=False)

    def _once(self, key: str, make: Callable[[], Any]) -> Any:
        try:
            return self._memo[key]
        except KeyError:
            value = self._memo[key] = make()
            return value

    @property
    def inputs(self) -> list[dict[str, Any]]:
        return self.raw.get("inputs", [])

    @property
    def input_specs(self) -> list[TensorSpec]:
        """``inputs`` as typed views, in the spec's order."""
        return self._once("input_specs", lambda: [TensorSpec(d) for d in self.inputs])

    @property
    def output_specs(self) -> list[TensorSpec]:
        return self._once("output_specs", lambda: [TensorSpec(d) for d in self.outputs])

    @property
    def param_specs(self) -> dict[str, ParamSpec]:
        """``params`` as typed views, by name, in the spec's order."""
        return self._once("param_specs", lambda: {n: ParamSpec(p) for n, p in self.params.items()})

    @property
    def outputs(self) -> list[dict[str, Any]]:
        return self.raw.get("outputs", [])

    @property
    def params(self) -> dict[str, dict[str, Any]]:
        return self._once("params", lambda: {p["name"]: p for p in self.raw.get("params", [])})

    @property
    def deprecated(self) -> str | None:
        return self.raw.get("deprecated")

    @property
    def computed_as(self) -> ComputedAs | None:
        """The general op this op is with some parameters fixed (``computed_as:``), or None: Relu6 is
        ElementWiseNeuron RELU_MIN_MAX between 0 and 6, ElementWiseAdd is ElementWiseBinary ADD."""
        block = self.raw.get("computed_as")
        if not block:
            return None
        return ComputedAs(str(block["op"]), dict(block["params"]), int(block["line"]), str(block["why"]))

    def computed_as_params(self, general: OpDef) -> dict[str, Any]:
        """The fixed parameters of ``computed_as`` as ``general`` takes them: enum members by number."""
        fixed = self.computed_as.params if self.computed_as else {}
        return {k: general.enum_value(k, v) if isinstance(v, str) else v for k, v in fixed.items()}

    # ---- curation, read through the OpDef so no consumer reaches into the YAML's layout ----------
    @property
    def family(self) -> str:
        """The op family (``family:`` in the spec): how reports group rows."""
        return self.raw.get("family") or "other"

    @property
    def no_reference(self) -> str | None:
        """Why reference/ has no implementation of this op yet (``reference: {why: ...}``), or None."""
        return (self.raw.get("reference") or {}).get("why")

    @property
    def no_onnx_lowering(self) -> dict[str, str] | None:
        """Why the ONNX Runtime adapters cannot run this op (``onnx:`` in the spec: ``lowering`` is
        "none" or "not written", ``why`` one line), or None when a lowering is expected to exist."""
        return self.raw.get("onnx")

    @property
    def generation(self) -> dict[str, Any]:
        """The ``generate`` block: configurations, typical-tier hints, skip and unsatisfiable reasons."""
        return self.raw.get("generate") or {}

    @property
    def model_layers(self) -> list[dict[str, Any]]:
        """Layers of public models the op runs in (``generate.model_layers``): the model tier's cases, one a row."""
        return list(self.generation.get("model_layers") or [])

    @property
    def tolerance(self) -> dict[str, Any]:
        """The ``tolerance`` block: overrides, accumulation length, random-output judgement."""
        return self.raw.get("tolerance") or {}

    @property
    def dims(self) -> dict[str, list[int]]:
        """Curated generation domains of symbolic dims."""
        return self.raw.get("dims") or {}

    @property
    def derived(self) -> dict[str, str]:
        """Dims computed from others (the seed's output-size formulas)."""
        return self.raw.get("derived") or {}

    @property
    def decisions(self) -> list[dict[str, Any]]:
        """Where the MasterOpDef is unclear: what the reference reads it as, and why."""
        return self.raw.get("decisions") or []

    def output_decl(self, i: int) -> dict[str, Any] | None:
        """The declaration output ``i`` falls under (a repeated declaration such as ``out[2..4]`` covers a range)."""
        found = None
        for d in self.outputs:
            m = re.match(r"^out\[(\d+)", d["name"])
            if m and int(m.group(1)) <= i:
                found = d
        return found

    def fixed_encoding(self, i: int, dtype: str) -> tuple[float, int] | None:
        """(scale, offset) the spec fixes for output ``i`` of ``dtype`` (``fixed_encoding``: a bounded function's
        grid that converters fix and backends require), or None."""
        d = self.output_decl(i)
        entry = ((d or {}).get("fixed_encoding") or {}).get(dtype)
        return (float(entry["scale"]), int(entry["offset"])) if isinstance(entry, dict) else None

    def valid_rows(self, n_outputs: int) -> dict[int, dict[str, Any]]:
        """Outputs whose number of valid rows depends on the data (``valid_rows`` in the spec), by index:
        ``count`` (the output holding it, or ``current``: the backend's current dimension), ``axis``,
        ``order`` (fixed or free) and ``beyond`` (rows past the count unspecified, or checked)."""
        out = {}
        for i in range(n_outputs):
            d = self.output_decl(i)
            if d and d.get("valid_rows"):
                out[i] = d["valid_rows"]
        return out

    def enum_names(self) -> dict[str, int]:
        """Enum member names of every parameter (usable as names in expressions)."""
        return self._once("enum_names", self._enum_names)

    def _enum_names(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for p in self.raw.get("params", []):
            out.update(p.get("values") or {})
        return out

    def symbols(self) -> frozenset[str]:
        """Dims and rank symbols the op's shapes declare, plus curated dims and derived names."""
        return self._once("symbols", lambda: frozenset(self._symbols()))

    def _symbols(self) -> set[str]:
        out: set[str] = set(self.raw.get("dims") or {}) | set(self.raw.get("derived") or {})
        for t in self.inputs + self.outputs + self.raw.get("params", []):
            sh = t.get("shape") or {}
            for d in (sh.get("dims") or []) + (sh.get("trailing") or []):
                if isinstance(d, str):
                    out |= {n for n in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", d)}
            if isinstance(sh.get("rank"), str) and sh["rank"] != "any":
                out.add(sh["rank"])
            r = t.get("repeated") or {}
            if isinstance(r.get("last"), str):
                out.add(r["last"])
        return out

    # ---- spec facts other modules used to read out of the YAML's layout ----------------------------
    @property
    def package(self) -> str | None:
        """The op package the op belongs to (``package:``), None for the built-in ``qti.aisw`` ops."""
        return self.raw.get("package")

    @property
    def summary(self) -> str:
        return str(self.raw.get("summary") or "")

    @property
    def sections_none(self) -> list[str]:
        """MasterOpDef sections the seed states as "None" (an op with no outputs says so here)."""
        return list(self.raw.get("sections_none") or [])

    @property
    def references(self) -> list[dict[str, Any]]:
        """Catalogue references of the op (``references:``)."""
        return list(self.raw.get("references") or [])

    def as_dict(self) -> dict[str, Any]:
        """A deep copy of the whole spec as plain data (for dumps and comparisons; code asks the properties)."""
        return copy.deepcopy(self.raw)

    # ---- enums: the numbering lives in the YAML only ---------------------------------------------
    def enum(self, param: str) -> dict[str, int]:
        """Member name -> value of enum parameter ``param``; KeyError when it is not an enum."""
        values = (self.params.get(param) or {}).get("values")
        if not values:
            raise KeyError(f"{self.name}: {param} is not an enum parameter")
        return dict(values)

    def enum_name(self, param: str, value: Any) -> str:
        """The member name of ``value`` (an int, a numpy scalar or 1-element array, or a member name)
        for enum parameter ``param``; ValueError naming the valid members when it is none of them."""
        members = self.enum(param)
        if isinstance(value, str) and value in members:
            return value
        try:
            v = int(np.asarray(value).reshape(-1)[0]) if not isinstance(value, str) else None
        except (TypeError, ValueError, IndexError):
            v = None
        for k, n in members.items():
            if v is not None and n == v:
                return k
        listed = ", ".join(f"{k} ({n})" for k, n in members.items())
        raise ValueError(f"{self.name}: {param} {value!r} is not one of {listed}")

    def enum_value(self, param: str, name: str) -> int:
        """The number of member ``name`` of enum parameter ``param``."""
        members = self.enum(param)
        if name not in members:
            raise KeyError(f"{self.name}: {param} has no member {name!r} (members: {', '.join(members)})")
        return members[name]

    # ---- defaults ----------------------------------------------------------------------------------
    def rank_symbols(self, ranks: Sequence[int | None]) -> dict[str, int]:
        """Rank symbols of the inputs (``rank: N``) bound to the ranks of a case's inputs, in order; a
        variadic input binds its symbol to its first tensor's rank."""
        env: dict[str, int] = {}
        for spec_in, r in zip(self.inputs, ranks, strict=False):
            sym = (spec_in.get("shape") or {}).get("rank")
            if isinstance(sym, str) and sym != "any" and r is not None and sym not in env:
                env[sym] = int(r)
        return env

    def resolved_params(self, params: Mapping[str, Any], ranks: Sequence[int | None] = ()) -> dict[str, Any]:
        """Every parameter a case runs with: the value it gives, else the default for its ``operation``
        (``default: {by_operation: ...}``), else the spec's concrete default, else a symbolic default
        (``default: {expr: N-1}``) evaluated on the input ranks. The one place defaults are resolved,
        so the reference and every lowering read the same numbers. A ``fill`` default (a vector whose
        length the spec leaves open) and a default that cannot be evaluated stay absent."""
        out: dict[str, Any] = {**self.param_defaults(), **params}
        spec = self.params
        operation: str | None = None
        if "operation" in out and spec.get("operation", {}).get("values"):
            try:
                operation = self.enum_name("operation", out["operation"])
            except ValueError:
                operation = None
        env: dict[str, Any] | None = None
        for name, p in spec.items():
            if name in params and params[name] is not None:
                continue
            d = p.get("default")
            if not isinstance(d, dict):
                continue
            if "by_operation" in d:
                if operation is not None and operation in d["by_operation"]:
                    out[name] = d["by_operation"][operation]
            elif "expr" in d:
                env = self.rank_symbols(ranks) if env is None else env
                try:
                    out[name] = _default_expr(str(d["expr"])).evaluate(env)
                except (expr.ExprError, expr.EvalError, TypeError, ValueError):
                    pass
        return out

    def param_defaults(self) -> dict[str, Any]:
        """Concrete parameter defaults (symbolic / per-operation ones are left to the consumer)."""
        return dict(self._once("param_defaults", self._param_defaults))

    def _param_defaults(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for p in self.raw.get("params", []):
            if "default" not in p:
                continue
            d = p["default"]
            if d is None or isinstance(d, dict):
                continue
            if isinstance(d, list):
                out[p["name"]] = np.asarray(d)
                out[p["name"]].flags.writeable = False  # shared by every caller: a default is never edited
            elif p.get("dtype") == "BOOL_8":
                out[p["name"]] = bool(d)
            else:
                out[p["name"]] = d
        return out

    def tensor(self, name: str) -> dict[str, Any] | None:
        for t in self.inputs + self.outputs:
            if t["name"] == name:
                return t
        return None


@functools.lru_cache(maxsize=256)
def _default_expr(source: str) -> expr.Expr:
    return expr.parse(source)


def _validate_schema(data: Any, lines: dict[tuple, int], path: Path) -> list[Problem]:
    import jsonschema  # here, not at the top: a process that reads specs from the cache never needs it (35 ms)

    problems = []
    validator = jsonschema.Draft202012Validator(schema())
    for err in sorted(validator.iter_errors(data), key=lambda e: list(map(str, e.absolute_path))):
        p = tuple(err.absolute_path)
        msg = err.message
        if err.validator == "additionalProperties":
            extra = re.findall(r"'([^']+)' was unexpected", msg)
            msg = f"unknown field {', '.join(repr(x) for x in extra)}" if extra else msg
            if extra and isinstance(data, dict):
                p = p + (extra[0],)
        if len(msg) > 200:
            msg = msg[:200] + "..."
        problems.append(Problem(str(path), _line_for(lines, p), _field_name(data, p), msg))
    return problems


def _tensor_refs(op: dict[str, Any]) -> set[str]:
    """Every ``in[k]``/``out[k]`` an expression may name, variadic ranges expanded to their first."""
    refs = set()
    for side in ("inputs", "outputs"):
        for t in op.get(side) or []:
            m = re.match(r"^(in|out)\[(\d+)(?:\.\.(\d+|\w+))?\]$", t.get("name", ""))
            if not m:
                continue
            first = int(m.group(2))
            last = m.group(3)
            hi = int(last) if last and last.isdigit() else first + (8 if last else 0)
            refs |= {f"{m.group(1)}[{i}]" for i in range(first, hi + 1)}
    return refs


def _check_expressions(op: dict[str, Any], lines: dict[tuple, int], path: Path) -> tuple[list[Problem], list]:
    problems: list[Problem] = []
    constraints: list[Constraint] = []
    tmp = OpDef(op.get("name", "?"), op)
    known = tmp.symbols() | set(tmp.params) | set(tmp.enum_names()) | {"in", "out"}
    refs = _tensor_refs(op)

    def check_one(source: str, p: tuple) -> expr.Expr | None:
        try:
            e = expr.parse(source)
        except expr.ExprError as ex:
            problems.append(Problem(str(path), _line_for(lines, p), _field_name(op, p), str(ex)))
            return None
        unknown = sorted(e.names() - known)
        if unknown:
            problems.append(Problem(str(path), _line_for(lines, p), _field_name(op, p),
                                    f"unknown name(s) {', '.join(unknown)}: not an input, output, parameter, "
                                    f"dim or enum value of {op.get('name')}"))  # fmt: skip
            return None
        bad_refs = sorted(e.tensor_refs() - refs)
        if bad_refs:
            problems.append(Problem(str(path), _line_for(lines, p), _field_name(op, p),
                                    f"{', '.join(bad_refs)} does not exist in {op.get('name')}"))  # fmt: skip
            return None
        return e

    for side in ("inputs", "params", "outputs"):
        for i, ent in enumerate(op.get(side) or []):
            owner = ent.get("name", "?")
            for j, c in enumerate(ent.get("constraints") or []):
                p = (side, i, "constraints", j, "check")
                e = check_one(c["check"], p) if "check" in c else None
                constraints.append(Constraint(c.get("id", "?"), c.get("kind", "?"), c.get("seed", ""), owner,
                                              c.get("line"), e))  # fmt: skip
    for i, p in enumerate(op.get("params") or []):
        d = p.get("default")
        if isinstance(d, dict) and "expr" in d:
            check_one(str(d["expr"]), ("params", i, "default", "expr"))
    for k, src in (op.get("derived") or {}).items():
        check_one(src, ("derived", k))
    for i, src in enumerate((op.get("generate") or {}).get("typical_when") or []):
        check_one(src, ("generate", "typical_when", i))
    for i, t in enumerate(op.get("outputs") or []):
        vr = t.get("valid_rows") or {}
        if vr.get("count", "current") != "current" and vr["count"] not in refs:
            problems.append(Problem(str(path), _line_for(lines, ("outputs", i, "valid_rows", "count")),
                                    _field_name(op, ("outputs", i, "valid_rows", "count")),
                                    f"{vr['count']} does not exist in {op.get('name')}"))  # fmt: skip
        if "capacity" in vr:
            check_one(vr["capacity"], ("outputs", i, "valid_rows", "capacity"))
    for i, t in enumerate(op.get("inputs") or []):
        if "shape_from" in t:
            check_one(t["shape_from"], ("inputs", i, "shape_from"))
    extra = (op.get("generate") or {}).get("extra_configs")
    if extra:
        from opdefs import presets

        declared = {t.get("name", "") for t in [*(op.get("inputs") or []), *(op.get("outputs") or [])]}
        for message in presets.problems(extra, declared):
            where = _line_for(lines, ("generate", "extra_configs"))
            problems.append(Problem(str(path), where, "generate.extra_configs", message))
    for i, why in scalar_drawn_tensors(op.get("params") or []):
        where = ("params", i, "shape")
        problems.append(Problem(str(path), _line_for(lines, where), _field_name(op, where[:2]), why))
    return problems, constraints


# ---------------------------------------------------------------------------------------------
# A cache of specs already parsed and schema-checked, keyed by content: every process (each pytest-xdist
# worker, each backend of the main job) loads all specs, and YAML parsing plus schema validation were
# most of its start-up. An entry is used only when the file's bytes, the schema and this module and the
# expression language are byte-identical to when it was written, so it is never stale; expressions are
# still parsed and checked on every load. JSON, not pickle: nothing read back is ever executed.
# ---------------------------------------------------------------------------------------------
CACHE_ENV = "QNN_CONFORMANCE_CACHE"


def _cache_file() -> Path | None:
    if os.environ.get(CACHE_ENV, "") == "off":
        return None
    root = Path(os.environ.get(CACHE_ENV) or Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
                / "qnn-opdef-conformance")  # fmt: skip
    return root / "specs.json"


@functools.cache
def _code_key() -> str:
    h = hashlib.sha256()
    for f in (SCHEMA_PATH, Path(__file__), HERE / "expr.py"):
        h.update(f.read_bytes())
    return h.hexdigest()


class _SpecCache:
    def __init__(self) -> None:
        self.path = _cache_file()
        self.entries: dict[str, Any] = {}
        self.dirty = False
        if self.path is None:
            return
        try:
            doc = json.loads(self.path.read_text(encoding="utf-8"))
            if isinstance(doc, dict) and doc.get("code") == _code_key() and isinstance(doc.get("specs"), dict):
                self.entries = doc["specs"]
        except (OSError, ValueError, RecursionError):  # unreadable or not ours: parsed afresh, written anew
            self.entries = {}

    def get(self, digest: str) -> tuple[Any, dict[tuple, int]] | None:
        """The cached spec, or None when there is none or the entry is not what ``put`` writes (a cache file
        edited or cut short is a miss, never an error)."""
        e = self.entries.get(digest)
        if e is None:
            return None
        try:
            data, lines = e["data"], {tuple(k): int(v) for k, v in e["lines"]}
        except (TypeError, KeyError, ValueError):
            return None
        return (data, lines) if isinstance(data, dict) else None

    def put(self, digest: str, data: Any, lines: dict[tuple, int]) -> None:
        self.entries[digest] = {"data": data, "lines": [[list(k), v] for k, v in lines.items()]}
        self.dirty = True

    def save(self) -> None:
        if not (self.dirty and self.path):
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(json.dumps({"code": _code_key(), "specs": self.entries}), encoding="utf-8")
            os.replace(tmp, self.path)  # atomic: a concurrent reader sees the old or the new file, whole
            self.dirty = False
        except OSError:
            pass  # a read-only home: no cache, same results


@functools.cache
def _spec_cache() -> _SpecCache:
    return _SpecCache()


def _read_spec_bytes(path: Path) -> bytes:
    """The file's bytes, once it is known to be a regular file of a bounded size (a FIFO would block here)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise SpecError([Problem(str(path), 1, "(file)", "not a regular file: a spec is a YAML file")])
        if info.st_size > MAX_SPEC_BYTES:
            raise SpecError([Problem(str(path), 1, "(file)",
                                     f"{info.st_size} bytes: a spec may hold at most {MAX_SPEC_BYTES}")])  # fmt: skip
        with os.fdopen(os.dup(fd), "rb") as fh:
            return fh.read(MAX_SPEC_BYTES + 1)
    finally:
        os.close(fd)


def load_file(path: str | Path) -> OpDef:
    """Load and validate one spec; raises SpecError listing every problem."""
    path = Path(path)
    raw = _read_spec_bytes(path)
    digest = hashlib.sha256(raw).hexdigest()
    cache = _spec_cache()
    hit = cache.get(digest)
    if hit is not None:  # parsed and schema-valid when cached; the expressions are checked below as always
        data, lines = hit
        problems: list[Problem] = []
    else:
        data, lines = read_yaml(path, raw)
        if not isinstance(data, dict):
            raise SpecError([Problem(str(path), 1, "(top)", "a spec must be a YAML mapping")])
        problems = _validate_schema(data, lines, path)
        if not problems:
            cache.put(digest, data, lines)
    if not problems:
        more, constraints = _check_expressions(data, lines, path)
        problems += more
        if data.get("name") != path.stem:
            problems.append(Problem(str(path), _line_for(lines, ("name",)), "name",
                                    f"{data.get('name')!r} does not match the file name {path.stem!r}"))  # fmt: skip
    if problems:
        raise SpecError(problems)
    return OpDef(data["name"], data, path, constraints)


def spec_dirs() -> list[Path]:
    """Where specs are looked up, first match wins: $QNN_CONFORMANCE_SPECS, then the built-in ones."""
    extra = [Path(p) for p in os.environ.get(SPECS_ENV, "").split(os.pathsep) if p]
    return [*extra, HERE]


@functools.lru_cache(maxsize=8)
def _spec_dir_strings(extra: str) -> tuple[str, ...]:
    return tuple(str(p) for p in [*(Path(p) for p in extra.split(os.pathsep) if p), HERE])


def spec_files(directory: Path = HERE) -> list[Path]:
    return sorted(p for p in directory.glob("*.yaml"))


def _all_files(directory: Path | None) -> dict[str, Path]:
    if directory is not None:
        return {p.stem: p for p in spec_files(Path(directory))}
    found: dict[str, Path] = {}
    for d in reversed(spec_dirs()):
        found.update({p.stem: p for p in spec_files(d)})
    return dict(sorted(found.items()))


@functools.cache
def _load_cached(path: str, mtime: float) -> OpDef:
    return load_file(path)


def load(name: str, directory: Path | None = None) -> OpDef:
    """The spec of ``name``, re-read when its file changed. One ``os.stat`` per directory: a case asks for
    its op's spec several times (generation, reference, comparison, record), through pathlib that was
    a tenth of a millisecond per case."""
    for d in [str(directory)] if directory is not None else _spec_dir_strings(os.environ.get(SPECS_ENV, "")):
        path = os.path.join(d, f"{name}.yaml")
        try:
            mtime = os.stat(path).st_mtime
        except OSError:
            continue
        return _load_cached(path, mtime)
    where = directory if directory is not None else ", ".join(map(str, spec_dirs()))
    raise KeyError(f"no spec for op {name!r} in {where}")


def load_all(directory: Path | None = None) -> dict[str, OpDef]:
    """Every spec, or SpecError at the first malformed one (lint and coverage want all or nothing)."""
    out = {name: _bounded(lambda p=p: _load_cached(str(p), p.stat().st_mtime), p)
           for name, p in _all_files(directory).items()}  # fmt: skip
    _spec_cache().save()
    return out


def load_each(directory: Path | None = None) -> tuple[dict[str, OpDef], dict[str, SpecError]]:
    """Every spec that loads, and each one that does not with its problems: a malformed spec costs its
    own op, never the run of the others."""
    good: dict[str, OpDef] = {}
    bad: dict[str, SpecError] = {}
    for name, p in _all_files(directory).items():
        try:
            good[name] = _bounded(lambda p=p: _load_cached(str(p), p.stat().st_mtime), p)
        except SpecError as e:
            bad[name] = e
    _spec_cache().save()
    return good, bad


def _bounded(load: Callable[[], OpDef], p: Path) -> OpDef:
    """``load()`` within the load budget, any failure of it as the spec's own SpecError: a spec is untrusted
    input, and whatever it does to the loader (an exception of any kind, a budget run out) costs its op."""
    try:
        with budget.time_budget(budget.seconds("load"), f"loading {p.name}"):
            return load()
    except SpecError:
        raise
    except (OSError, UnicodeDecodeError) as e:
        raise SpecError([Problem(str(p), 1, "(file)", f"cannot read: {e}")]) from None
    except Exception as e:  # noqa: BLE001 - see the docstring
        raise SpecError([Problem(str(p), 1, "(load)", f"{type(e).__name__}: {str(e)[:300]}")]) from None


def lint(paths: list[Path]) -> list[Problem]:
    problems: list[Problem] = []
    for p in paths:
        try:
            spec = _bounded(lambda p=p: load_file(p), Path(p))
        except SpecError as e:
            problems += e.problems
            continue
        problems += computed_as.problems(spec, Path(p))
    return problems
