"""A spec's tensors and parameters as typed views: what the generator, the checks and the converter forms read of an
input, an output or a parameter, each field named once here instead of ``(decl.get("shape") or {}).get("dims")`` at
every use. ``raw`` is the spec's own mapping (an OpDef is read-only)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

_FIRST_INDEX = re.compile(r"^\w+\[(\d+)")
GIVEN_STATIC = ("preferred", "always")  # a tensor converters pass as a constant (weights, biases)


@dataclass(frozen=True)
class _Entry:
    """What a tensor and a parameter of a spec both have: a name, whether it is mandatory, a shape block."""

    raw: Mapping[str, Any]

    @property
    def name(self) -> str:
        """``in[0]``, ``in[1..n]`` (a repeated range), ``out[0]``, or a parameter's name."""
        return str(self.raw["name"])

    @property
    def mandatory(self) -> bool | None:
        return self.raw.get("mandatory")

    @property
    def shape(self) -> dict[str, Any]:
        """The ``shape`` block: ``text`` and ``dims``, ``rank`` or ``scalar`` ({} if none)."""
        return self.raw.get("shape") or {}

    @property
    def dims(self) -> list[Any]:
        return self.shape.get("dims") or []


@dataclass(frozen=True)
class TensorSpec(_Entry):
    """One input or output of a spec, typed: what the generator, the checks and the forms read of it, each field
    named once here instead of ``(decl.get("shape") or {}).get("dims")`` at every use. ``raw`` is the spec's
    mapping itself (never changed: an OpDef is read-only)."""

    @property
    def first_index(self) -> int:
        """The index of the first tensor this entry declares (``in[1..n]`` -> 1)."""
        return int(_FIRST_INDEX.match(self.name).group(1))

    @property
    def dtypes(self) -> list[str]:
        return list(self.raw.get("dtypes") or [])

    @property
    def repeated(self) -> dict[str, Any] | None:
        """``{first, last, min, max}`` for a range of tensors (Concat's inputs), else None."""
        return self.raw.get("repeated")

    @property
    def optional(self) -> bool:
        """An input a case may leave out (the spec says not mandatory; a repeated range has its own count)."""
        return self.mandatory is False and not self.repeated

    @property
    def static(self) -> str | None:
        """``always``, ``preferred`` or ``never``: how cases pass it."""
        return self.raw.get("static")

    @property
    def given_static(self) -> bool:
        """Passed as a constant, as converters pass weights and biases."""
        return self.static in GIVEN_STATIC

    @property
    def role(self) -> str | None:
        """``weights`` or ``bias``: how converters quantize it, where the spec says."""
        return self.raw.get("role")

    @property
    def shape_from(self) -> str | None:
        """A formula for the whole shape from the tensors drawn before it (ScatterNd's updates)."""
        return self.raw.get("shape_from")

    @property
    def values(self) -> dict[str, Any]:
        """The ``values:`` block: how its data are drawn (ranges, domains, curation tables)."""
        return self.raw.get("values") or {}

    @property
    def quantization(self) -> list[str]:
        """``per_tensor`` / ``per_axis(k)`` entries."""
        return list(self.raw.get("quantization") or [])

    @property
    def encoding_from(self) -> list[str] | None:
        """The two inputs whose scales multiply to this one's (a bias), in the typical tier."""
        refs = self.raw.get("encoding_from")
        return list(refs) if refs else None


@dataclass(frozen=True)
class ParamSpec(_Entry):
    """One parameter of a spec, typed: its datatype, default, enum members and the curation the spec gives it."""

    @property
    def dtype(self) -> str:
        """A QNN datatype, ``backend_specific`` (it follows the data) or ``STRING``."""
        return str(self.raw["dtype"])

    @property
    def optional(self) -> bool:
        return self.mandatory is False

    @property
    def default(self) -> Any:
        """The spec's default: a value, ``{expr: ...}`` for a formula, or None."""
        return self.raw.get("default")

    @property
    def members(self) -> dict[str, int]:
        """An enum's members, name -> number ({} for any other parameter)."""
        return dict(self.raw.get("values") or {})

    @property
    def scalar(self) -> bool:
        """One value: the spec says scalar, or names no dims and no rank."""
        sh = self.shape
        return bool(sh.get("scalar") or not (sh.get("dims") or sh.get("rank")))

    @property
    def curated(self) -> list[Any] | None:
        """The values the spec's curation lists to draw from (``generate:``), or None."""
        return self.raw.get("generate")

    @property
    def domain(self) -> list[Any] | None:
        """A curated ``[lo, hi]`` (expressions of constants and earlier parameters), or None."""
        return self.raw.get("domain")

    @property
    def rows(self) -> dict[str, Any]:
        """How a matrix parameter's rows describe axes (``rows: {along: in[0], ...}``), {} if it says nothing."""
        return self.raw.get("rows") or {}


# A shape text that opens with a tensor's dimensionality: "1D", "2D of shape [N, 2]", "ND".
_TENSOR_TEXT = re.compile(r"^\s*(?:\d+D|ND)\b")


def scalar_drawn_tensors(params: list[Mapping[str, Any]]) -> list[tuple[int, str]]:
    """(index, message) for each parameter whose shape text names a tensor but whose shape block gives neither dims
    nor rank: the generator would draw it as a scalar and the adapter send it as one, whatever the text says. Moments'
    ``axes`` ("1D") was such a parameter, and the HTP refused every case ("Param axes expected to be tensor")."""
    out = []
    for i, p in enumerate(params):
        view = ParamSpec(p)
        text = str((p.get("shape") or {}).get("text", ""))
        if view.scalar and not view.shape.get("scalar") and _TENSOR_TEXT.search(text):
            out.append((i, f"the shape text names a tensor ({text[:40]!r}) but no dims or rank: it would be drawn and "
                           "sent as a scalar"))  # fmt: skip
    return out
