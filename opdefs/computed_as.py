"""``computed_as:`` in a spec: a dedicated op (Relu6, ElementWiseAdd) as its general op with some parameters fixed,
stated once in the YAML and read by the reference and the ONNX lowering; here its typed view and its lint."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from opdefs.spec import OpDef, Problem  # spec imports this module: the names are looked up at run time


@dataclass(frozen=True)
class ComputedAs:
    """A dedicated op as its general op: ``op`` with ``params`` fixed (enum members by name), the MasterOpDef
    ``line`` that says what the dedicated op computes, and ``why`` the two are the same."""

    op: str
    params: dict[str, Any]
    line: int
    why: str


def problems(spec: OpDef, path: Path) -> list[Problem]:
    """A ``computed_as`` must name a general op that has a spec, parameters that op declares, and members of
    its enums: the reference and the ONNX lowering compute the dedicated op through it."""
    from opdefs.spec import Problem, load

    ca = spec.computed_as
    if ca is None:
        return []
    text = path.read_text(encoding="utf-8").splitlines()
    line = next((i for i, t in enumerate(text, 1) if t.startswith("computed_as:")), 1)
    try:
        general = load(ca.op, path.parent) if (path.parent / f"{ca.op}.yaml").exists() else load(ca.op)
    except KeyError:
        return [Problem(str(path), line, "computed_as.op", f"no spec for op {ca.op!r}")]
    out = []
    for name, value in ca.params.items():
        if name not in general.params:
            out.append(Problem(str(path), line, f"computed_as.params.{name}", f"{ca.op} has no parameter {name!r}"))
        elif isinstance(value, str):
            try:
                general.enum_value(name, value)
            except KeyError as e:
                out.append(Problem(str(path), line, f"computed_as.params.{name}", str(e.args[0])))
    return out
