"""Datatype configurations (the columns of an op) and the settings a cell is drawn with."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from cases import check
from cases.case import EDGE, Case, Tensor
from opdefs import OpDef, TensorSpec, dtypes, expr, presets

Infer = Callable[[OpDef, Case], list[np.ndarray] | None]


@dataclass(frozen=True)
class Settings:
    """How cases are drawn. ``tier`` decides what a case looks like (see ``case_strategy``)."""

    max_elements: int = 4096  # per tensor of a case drawn at moderate sizes (the edge tier, a SMALL typical case)
    large_elements: int = 65536  # per tensor of a typical case drawn at a deployed size (``sizes.VECTOR``)
    max_rank: int = 4
    max_dim: int = 5  # free dims of the edge tier: 1..max_dim
    tier: str = EDGE
    typical_dims: tuple[int, int] = (2, 6)  # free dims of the typical tier: no size-1 degenerate axes
    typical_ranks: tuple[int, int] = (2, 4)  # free ranks of the typical tier
    onto: bool = False  # the spec's ``broadcast_onto``: later inputs stretch onto the first, never the other way
    infer: Infer | None = field(default=None, compare=False)
    # typical cells take every value of every boolean and enum parameter in turn first (``enumerated_slots``);
    # off for a strategy whose choices must replay to the same case (the shrinking step)
    stratify: bool = True
    # deployed sizes (``sizes``): a typical strategy draws batch-1 cases or not, at a deployed size or not; a cell
    # splits its cases between such strategies (``cell_parts``). None: drawn per case (a strategy of its own)
    batch_one: bool | None = None
    deployed: bool | None = None
    # the model tier: one row of the spec's ``generate.model_layers`` (shapes, parameters, dims) the case takes as it
    # stands, drawn typical in every other respect; and how many elements a tensor of such a case may hold
    model_row: Any = field(default=None, compare=False)
    model_elements: int = 1 << 21


@dataclass(frozen=True)
class Config:
    """One datatype configuration: a type for every declared tensor (repeated ones share it).

    ``per_axis`` names the declared tensors quantized per axis (the axis comes from the tensor's
    ``quantization: [per_axis(k)]`` curation); ``why`` says where the configuration comes from, so
    ``python -m cases configs OP`` can tell a user why a column exists."""

    label: str
    dtypes: tuple[tuple[str, str], ...]  # (declared tensor name, QNN dtype)
    per_axis: tuple[str, ...] = ()
    why: str = ""
    # (declared tensor name, bits): values that use fewer bits than their datatype holds, sent with QNN's
    # bit-width encoding (4-bit weights in an 8-bit container, as ONNX Runtime's QNN EP hands INT4 weights over)
    bitwidth: tuple[tuple[str, int], ...] = ()

    def dtype_of(self, decl_name: str) -> str:
        return dict(self.dtypes)[decl_name]

    def bits_of(self, decl_name: str) -> int | None:
        return dict(self.bitwidth).get(decl_name)


def _usable(name: str) -> bool:
    d = dtypes.get(name)
    return d.storage is not None and d.kind != "string"


def _label(chosen: list[tuple[str, str]], primary: str, per_axis: tuple[str, ...] = (),
           bitwidth: dict[str, int] | None = None) -> str:  # fmt: skip
    """``PRIMARY+the other types, sorted`` (the historical form, stable across runs), or for a
    configuration with per-axis or bit-width tensors every type in declaration order with ``/bw4`` and
    ``/axis`` marks."""
    bitwidth = bitwidth or {}
    if per_axis or bitwidth:
        def mark(n: str, t: str) -> str:
            return t + (f"/bw{bitwidth[n]}" if n in bitwidth else "") + ("/axis" if n in per_axis else "")

        return "+".join(dict.fromkeys(mark(n, t) for n, t in chosen))
    if primary:
        extra = sorted({t for _, t in chosen if t != primary})
        return "+".join([primary] + extra)
    return "+".join(dict.fromkeys(t for _, t in chosen))


def configs(op: OpDef) -> list[Config]:
    """Every datatype configuration worth a column, each with the reason it exists:

    - one per *primary* type (``dtypes.BACKEND_SPECIFIC_DEFAULT`` plus the spec's curated
      ``generate.primaries_extra``, e.g. INT_32 for ops converters use on shapes) for the tensors the
      spec leaves backend specific; tensors with explicit types take their first one;
    - one per further explicit type of a tensor (Quantize to every listed fixed-point type, an index
      output as UINT_32 as well as INT_32), with the first primary for the rest;
    - the curated ``generate.extra_configs`` (mixed precision: 16-bit activations with 8- or 4-bit
      weights, per-axis weights, 32-bit bias), each with its ``why``.

    ``generate.configs`` replaces all of this with an explicit list. Configurations a datatype
    constraint forbids outright are dropped. Empty for an op the spec says cannot be generated."""
    if skip_reason(op):
        return []
    gen = op.generation
    decls = op.input_specs + op.output_specs
    curated = gen.get("configs")
    if curated:
        return [c for c in (_curated_config(decls, c) for c in curated) if _dtypes_allowed(op, c)]
    flexible = any("backend_specific" in (d.dtypes or ["backend_specific"]) for d in decls)
    if flexible:
        primaries = tuple(dict.fromkeys([*dtypes.BACKEND_SPECIFIC_DEFAULT, *gen.get("primaries_extra", [])]))
    else:  # every type explicit: the float types the data tensors list are the primaries (Log: F32, F16)
        primaries = tuple(dict.fromkeys(t for d in decls if _prefer_primary(d) for t in _listed(d))) or ("",)
    out: list[Config] = []

    def base(primary: str) -> list[tuple[str, str]]:
        chosen = []
        for d in decls:
            listed = _listed(d)
            takes_any = "backend_specific" in (d.dtypes or ["backend_specific"])
            if primary and _prefer_primary(d) and (takes_any or primary in listed):
                chosen.append((d.name, primary))
            else:
                chosen.append((d.name, listed[0] if listed else primary or "FLOAT_32"))
        return chosen

    for primary in primaries:
        if not primary:
            why = "the first type the spec lists for each tensor"
        elif flexible:
            why = f"primary {primary}: the tensors the spec leaves backend specific take {primary}"
        else:
            why = f"{primary}: one of the float types the spec lists for its data tensors"
        chosen = base(primary)
        out.append(Config(_label(chosen, primary), tuple(chosen), why=why))
    first = primaries[0]
    for k, d in enumerate(decls):
        listed = _listed(d)
        if len(listed) < 2 or (first and _prefer_primary(d)):
            continue
        for alt in listed[1:]:
            chosen = base(first)
            chosen[k] = (d.name, alt)
            out.append(Config(_label(chosen, first), tuple(chosen), why=f"{d.name} also lists {alt}"))
    for c in presets.expand(gen.get("extra_configs")):
        out.append(_curated_config(decls, c))
    unique: dict[str, Config] = {}
    for c in out:
        unique.setdefault(c.label, c)
    return [c for c in unique.values() if _dtypes_allowed(op, c)]


def _listed(decl: TensorSpec) -> list[str]:
    return [x for x in decl.dtypes if x != "backend_specific" and _usable(x)]


def _curated_config(decls: list[TensorSpec], c: dict) -> Config:
    """A configuration written in the spec: tensor -> dtype, plus ``per_axis`` and ``why``."""
    per_axis = tuple(c.get("per_axis") or ())
    bitwidth = {str(k): int(v) for k, v in (c.get("bitwidth") or {}).items()}
    chosen = [(d.name, c.get(d.name, "FLOAT_32")) for d in decls]
    label = _label(chosen, "", per_axis, bitwidth)
    return Config(label, tuple(chosen), per_axis, c.get("why", "curated in the spec (generate.configs)"),
                  tuple(sorted(bitwidth.items())))


def skip_reason(op: OpDef) -> str | None:
    """Why the spec says no case can be generated for this op (subgraphs, STRING params...), or None."""
    return op.generation.get("skip")


def _dtypes_allowed(op: OpDef, config: Config) -> bool:
    """Drop configurations a datatype constraint forbids outright (ElementWiseMod on floats)."""
    tensors = {}
    for name, dt in config.dtypes:
        tensors[f"{name.split('[')[0]}[{_first_index(name)}]"] = Tensor(name, dt, ())
    ins = [tensors.get(f"in[{i}]") for i in range(max([d.first_index for d in op.input_specs] or [-1]) + 1)]
    outs = [tensors[f"out[{i}]"] for i in range(len(op.outputs)) if f"out[{i}]" in tensors]
    probe = Case(op.name, ins, {}, outs)
    env = check.environment(op, probe)
    for c in op.constraints:
        if c.kind == "datatype" and c.check is not None:
            try:
                if not expr.holds(c.check, env):
                    return False
            except expr.EvalError:
                continue
    return True


def _prefer_primary(decl: TensorSpec) -> bool:
    """'FLOAT_32, FLOAT_16, backend specific' reads as 'the data type'; 'BOOL_8, backend specific'
    (a comparison's output) or 'INT_32, UINT_32, backend specific' (an index) keeps its own type."""
    listed = [x for x in decl.dtypes if x != "backend_specific"]
    return all(dtypes.get(x).kind == "float" for x in listed)


def first_index(name: str) -> int:
    """The first index a declared tensor name covers: 2 for ``in[2]`` and for a repeated ``in[2..N]``."""
    return int(re.match(r"^\w+\[(\d+)", name).group(1))


_first_index = first_index
