"""Op specs: one YAML file per QNN MasterOpDef op, validated by a JSON Schema and the constraint language.

Stable interface (DESIGN.md): ``load_all() -> dict[str, OpDef]``, ``load(name) -> OpDef``,
``python -m opdefs lint``.
"""

from opdefs.spec import OpDef, ParamSpec, Problem, SpecError, TensorSpec, lint, load, load_all, load_each, load_file

__all__ = ["OpDef", "ParamSpec", "Problem", "SpecError", "TensorSpec", "lint", "load", "load_all", "load_each",
           "load_file"]
