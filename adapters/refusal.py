"""Why a backend refused a case: its log lines, normalised, and one short reason a matrix cell can show.

Why: every refusal used to read "error 3110", and "REJ" then meant both "the HTP has no such op" and "this
datatype set is refused" and "the output's offset must be -32768". The QNN backends say which in their log
(written at validation, before the error code is returned): this module keeps those lines with what varies
between runs and nodes taken out (node names, addresses, hex handles, the backend's own bookkeeping lines)
and the numbers and names kept, and names the reason in a few words.

Pure Python and data only: the adapter calls it when it records a refusal (with the case at hand, to name
the tensor or parameter a value belongs to), and ``python -m reports`` calls it on the logs of results files
written before refusals carried a reason (without the case).
"""

from __future__ import annotations

import numbers
import re
from collections.abc import Iterable
from typing import Any

import numpy as np

from opdefs import dtypes

# Lines that say nothing about this case: the call that failed and where to read more.
_NOISE = (
    re.compile(r"validateOpConfig failed \d+"),
    re.compile(r"^Failed to validate op \S+ with error"),
    re.compile(r"Please refer to the 'HTP Backend Op Definition Supplement'"),
    re.compile(r"^Op specific validation failed\.?$"),
    re.compile(r"^validateNativeOps master op validator .* failed \d+$"),
)
_NODE = re.compile(r"\b(?:c\d+_)?node\d+\b")
# ONNX Runtime's QNN EP names nodes its own way: a name in backquotes, "Node name: X", "{ name: X," and value names
# in quotes; a merged session's parts carry a "c<k>_" prefix. Taken out as the HTP's node names are.
_EP_NAMES = (
    (re.compile(r"node `[^`]*`"), "node <node>"),
    (re.compile(r"Node name: \S*"), "Node name: <node>"),
    (re.compile(r"\{ name: [^,]*,"), "{ name: <node>,"),
    (re.compile(r"OrtValueInfo '[^']*'"), "OrtValueInfo <value>"),
    (re.compile(r"\s*Node index: \d+"), ""),
)
_HEX = re.compile(r"\b0x[0-9a-fA-F]{5,}\b")
_UNSIGNED_MINUS_ONE = re.compile(r"\[4294967295\]\s*")  # the validator's "no index" marker
_LEVEL = re.compile(r"^<[EWIVD]>\s*")
_TYPE = re.compile(r"QNN_DATATYPE_(\w+)")
_SET_ENTRY = re.compile(r"^\s*((?:in|out)\[\d+\]):QNN_DATATYPE_(\w+)", re.M)
# HTP architecture numbers (v68 ... v81): "Value 68, expected >= 73" is the simulated target's arch
HTP_ARCHES = frozenset({66, 68, 69, 73, 75, 79, 81})
NO_REASON = "refused at validation; the backend logged no reason"
NOT_REGISTERED = "op not registered"


def normalise(lines: Iterable[str]) -> list[str]:
    """The log lines of a refusal as a reader needs them: level marks, node names, addresses and the
    validator's "no index" marker dropped, repeats and bookkeeping lines left out; numbers and names kept."""
    out: list[str] = []
    for raw in lines:
        line = _LEVEL.sub("", str(raw).strip())
        line = _UNSIGNED_MINUS_ONE.sub("", line)
        line = _NODE.sub("<node>", line)
        for pattern, stands_in in _EP_NAMES:
            line = pattern.sub(stands_in, line)
        line = _HEX.sub("<address>", line)
        if not line or any(p.search(line) for p in _NOISE) or line in out:
            continue
        out.append(line)
    return out


def _datatype_sets(lines: list[str]) -> tuple[dict[str, str] | None, list[dict[str, str]]]:
    """The requested datatype set and the supported ones an HTP "Unsupported input/output datatypes" refusal
    lists (tensor -> datatype without the QNN_DATATYPE_ prefix)."""
    requested: dict[str, str] | None = None
    supported: list[dict[str, str]] = []
    for line in lines:
        if line.startswith("Requested I/O datatype set"):
            requested = dict(_SET_ENTRY.findall(line))
        elif line.startswith("Supported I/O datatype sets"):
            for block in re.split(r"^\s*\d+:\s*$", line, flags=re.M)[1:]:
                entry = dict(_SET_ENTRY.findall(block))
                if entry and entry not in supported:
                    supported.append(entry)
    return requested, supported


def nearest(requested: dict[str, str], supported: list[dict[str, str]]) -> list[dict[str, str]]:
    """The changes (tensor -> datatype) that turn the requested set into each supported set differing from it
    in the fewest tensors; a tensor the request leaves out may be left out."""
    best: list[dict[str, str]] = []
    fewest = None
    for s in supported:
        if set(requested) - set(s):
            continue
        change = {k: v for k, v in s.items() if k in requested and requested[k] != v}
        if not change:
            continue
        if fewest is None or len(change) < fewest:
            fewest, best = len(change), [change]
        elif len(change) == fewest and change not in best:
            best.append(change)
    return best


def _change_text(change: dict[str, str]) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(change.items()))


def _owners(value: int, case: Any) -> list[str]:
    """What in ``case`` holds ``value``, most telling kind first: an integer or boolean scalar parameter (an axis,
    an enum member), an encoding offset, an element of a tensor parameter, a tensor parameter's length, a rank,
    a dimension. Only the first kind with a match is returned (the validator names none of them)."""
    kinds: list[list[str]] = [[], [], [], [], [], []]
    tensors = [t for t in [*(case.inputs or []), *(case.outputs or [])] if t is not None]
    for t in tensors:
        enc = t.encoding
        if enc is not None and not enc.per_axis and enc.offsets and int(enc.offsets[0]) == value:
            kinds[1].append(f"{t.name} offset")
    for name, p in (case.params or {}).items():
        v = p.value
        if getattr(v, "shape", None) is not None and getattr(v, "ndim", 0) > 0:
            flat = [x for x in v.reshape(-1).tolist() if isinstance(x, int | bool)]
            if value in flat:
                kinds[2].append(name)
            if v.shape[0] == value:
                kinds[3].append(f"{name} length")
        elif isinstance(v, numbers.Integral | bool | np.bool_) and int(v) == value:
            kinds[0].append(name)
    for t in tensors:
        if len(t.shape) == value:
            kinds[4].append(f"{t.name} rank")
    for t in tensors:
        kinds[5] += [f"{t.name} dim {k}" for k, d in enumerate(t.shape) if d == value]
    return next((k for k in kinds if k), [])


def explain(lines: Iterable[str], message: str = "", case: Any = None) -> dict[str, Any]:
    """``{"reason": short text, "lines": normalised log}`` for a refusal, plus for a datatype refusal
    ``requested`` and ``supported`` (the sets the backend lists) and ``nearest`` (the fewest changes that
    reach one). With ``case`` a value the validator reports is named by what holds it ("out[0] offset")."""
    norm = normalise(lines)
    out: dict[str, Any] = {"lines": norm[:12]}
    text = "\n".join(norm)
    requested, supported = _datatype_sets(norm)
    m_value = re.search(r"has incorrect Value (-?\d+), expected (equal to|>=|<=|>|<) (-?\d+)", text)
    m_rank = re.search(r"(Input|Output)\[(\d+)\] has incorrect Rank (\d+)", text)
    m_any_rank = re.search(r"has incorrect Rank (\d+)", text)  # a validator that names no tensor (OneHot's)
    m_type = re.search(r"(Input|Output)\[(\d+)\] has incorrect Datatype 0x([0-9a-fA-F]+)", text)
    m_param = re.search(r"Param (\w+) expected to be (tensor|scalar) but is of type", text)
    m_minmax = re.search(r"Minimum value \S+ is not less than Maximum value", text)
    if "OpValidator not found" in text:
        reason = NOT_REGISTERED
    elif requested is not None or "Unsupported input/output datatypes" in text:
        reason = "datatype set not supported"
        options = nearest(requested or {}, supported)
        if options:
            out["nearest"] = options
            reason += "; nearest accepted: " + " | ".join(_change_text(c) for c in options[:3])
        if requested:
            out["requested"] = requested
        if supported:
            out["supported"] = supported
    elif m_value:
        got, relation, want = int(m_value.group(1)), m_value.group(2), int(m_value.group(3))
        if relation == ">=" and got in HTP_ARCHES and want in HTP_ARCHES:
            reason = f"needs HTP arch >= {want}"
        else:
            owners = _owners(got, case) if case is not None else []
            must = "must be" if relation == "equal to" else f"must be {relation}"
            what = " or ".join(owners[:2]) if owners else "a value"
            reason = f"{what} {must} {want}" + ("" if owners else f" (is {got})")
    elif m_rank:
        reason = f"{'in' if m_rank.group(1) == 'Input' else 'out'}[{m_rank.group(2)}] rank {m_rank.group(3)} refused"
    elif m_any_rank:
        rank = int(m_any_rank.group(1))
        owners = [t.name for t in [*(case.inputs or []), *(case.outputs or [])] if t is not None
                  and len(t.shape) == rank] if case is not None else []  # fmt: skip
        reason = f"{' or '.join(owners[:2]) if owners else 'a tensor'} rank {rank} refused"
    elif m_type:
        try:
            name = dtypes.by_code(int(m_type.group(3), 16)).name
        except KeyError:
            name = f"0x{m_type.group(3)}"
        reason = f"{'in' if m_type.group(1) == 'Input' else 'out'}[{m_type.group(2)}] datatype {name} refused"
    elif m_param:
        reason = f"param {m_param.group(1)} must be a {m_param.group(2)}"
    elif m_minmax:
        reason = "min_value must be < max_value"
    elif "None of the combinations match the provided case" in text:
        reason = "no accepted combination of datatypes and parameters"
    elif norm:
        reason = norm[0].split("\n", 1)[0][:160]
    else:
        code = re.search(r"error (\d+)", message or "")
        reason = NO_REASON + (f" (error {code.group(1)})" if code else "")
        members = _enum_members(case) if case is not None else ""
        if members:  # the one thing the case says about which variant of the op was refused
            reason += f" for {members}"
    out["reason"] = reason
    return out


def _enum_members(case: Any) -> str:
    """The case's enum parameters by member name ("operation=ROUND"), from the op's spec."""
    try:
        import opdefs

        spec = opdefs.load(case.op)
    except Exception:  # noqa: BLE001 - no spec for a hand-made case: nothing to add
        return ""
    parts = []
    for name, p in sorted((case.params or {}).items()):
        members = {v: k for k, v in (spec.params.get(name, {}).get("values") or {}).items()}
        if members and isinstance(p.value, numbers.Integral | np.integer) and int(p.value) in members:
            parts.append(f"{name}={members[int(p.value)]}")
    return ", ".join(parts)
