"""How far a backend's output may be from the reference: budgets per datatype class, each with its source.

A budget is data, not code: the defaults below fit the output type's bit width, an op's YAML
``tolerance`` block overrides them (with a written ``reason``), and an ``accumulation`` expression
(K, the length of the op's dot products, evaluated by the caller on the case) scales float budgets.
Every verdict records the budget it was judged with, so a PASS shows how close it was.

Float outputs pass an element when ``|a - e| <= atol + rtol * |e|`` (the NNAPI CTS form) or when
the two are at most ``ulp`` units in the last place apart (the WebNN form); fixed-point outputs are
compared in quantization steps: ``steps`` plus ``rtol * |e|`` expressed in steps; integer and bool
outputs must match exactly. Never loosen a budget to make a backend pass: a backend less accurate
than its budget is a finding.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from opdefs import dtypes

FP16_EPS = 2.0**-10  # one binary16 ULP at 1.0
FP32_EPS = 2.0**-23
BF16_EPS = 2.0**-7


@dataclass(frozen=True)
class Budget:
    atol: float = 0.0  # real units
    rtol: float = 0.0  # of |expected|
    ulp: float = 0.0  # units in the last place of the output type
    steps: float = 0.0  # quantization steps of the output encoding
    range_rtol: float = 0.0  # of the output grid's largest magnitude (fixed point), in real units
    exact: bool = False
    source: str = ""

    def text(self) -> str:
        """One line for reports: what the element had to satisfy."""
        if self.exact:
            return "exact"
        parts = []
        if self.steps:
            parts.append(f"{self.steps:g} step" + ("" if self.steps == 1 else "s"))
        if self.range_rtol:
            parts.append(f"{self.range_rtol:.3g} of full scale")
        if self.atol or (self.rtol and not self.steps):
            parts.append(f"atol {self.atol:.3g}")
        if self.rtol:
            parts.append(f"rtol {self.rtol:.3g}")
        text = " + ".join(parts) if self.steps else ", ".join(parts)
        if self.ulp:
            text = f"{text} or {self.ulp:g} ulp" if text else f"{self.ulp:g} ulp"
        return text or "exact"

    def as_dict(self) -> dict[str, Any]:
        d = {k: v for k, v in vars(self).items() if v and k != "source"}
        d["source"] = self.source
        return d


# Defaults per datatype class. The figures are facts from public conformance suites, not tuned here.
DEFAULTS: dict[str, Budget] = {
    # NNAPI CTS (frameworks/ml nn/runtime/test, TestGenerated): float32 atol 1e-5, rtol 5 x FLT_EPSILON.
    "FLOAT_32": Budget(atol=1e-5, rtol=5 * FP32_EPS, source="NNAPI CTS float32: atol 1e-5, rtol 5 FLT_EPSILON"),
    "FLOAT_64": Budget(atol=1e-12, rtol=5 * 2.0**-52, source="NNAPI CTS form scaled to binary64"),
    # NNAPI CTS relaxed / float16 models: atol = rtol = 5 ULP of binary16 at 1.0.
    "FLOAT_16": Budget(atol=5 * FP16_EPS, rtol=5 * FP16_EPS, source="NNAPI CTS float16: atol = rtol = 5 x 2^-10"),
    "BFLOAT_16": Budget(atol=5 * BF16_EPS, rtol=5 * BF16_EPS, source="NNAPI's float16 rule at bfloat16's 8 bits"),
    # NNAPI CTS quant8: 1 step; ONNX Runtime's QNN EP tests allow 0.4% of the output range, "1 int8 step".
    "fixed_point_8": Budget(steps=1, source="NNAPI CTS quant8 and ORT QNN EP tests: 1 step"),
    "fixed_point_4": Budget(steps=1, source="the 8-bit rule: 1 step"),
    # A 16-bit grid is 256x finer than the 11-bit float16 arithmetic accelerators use inside, so 1 step would
    # demand more than binary16 precision. A fixed-point pipeline's error is absolute (set by its internal
    # precision against full scale, not by the value), so the budget is 1 step plus one binary16 ULP at the
    # grid's largest magnitude (2^-10 of full scale, ~32-64 steps). For scale: ORT's QNN EP tests allow
    # 0.4% of the output range, "262 int16 quantization units".
    "fixed_point_16": Budget(steps=1, range_rtol=FP16_EPS, source="1 step + 2^-10 of full scale (binary16 precision)"),
    "fixed_point_32": Budget(steps=1, rtol=5 * FP32_EPS, source="1 step + float32 relative precision"),
    "integer": Budget(exact=True, source="integer and bool results are exact"),
}

_OVERRIDE_KEYS = {"FLOAT_32": "float32", "FLOAT_16": "float16"}


def class_of(dtype: str) -> str:
    d = dtypes.get(dtype)
    if d.kind == "float":
        return dtype
    if d.quantized:
        return f"fixed_point_{d.bits}"
    return "integer"


def budget_for(dtype: str, op_tolerance: dict[str, Any] | None = None, accumulation: float | None = None,
               precision: str | None = None) -> Budget:  # fmt: skip
    """The budget for one output of ``dtype``: the class default, the op's override, then the K-long
    accumulation scaling of float budgets (a K-term sum in floating point can lose K roundings;
    WebNN's conv2d/matmul budgets grow with K the same way). Fixed-point budgets do not grow with K:
    integer accumulators are exact and only the final requantization rounds.

    ``precision``: the float arithmetic the backend ran the case in, where it says (a QNN HTP graph's
    precision config, which the qnn adapter sets to float16 for a case holding a FLOAT_16 tensor). A
    FLOAT_32 output of a float16 graph holds float16-accurate values, so it gets float16's budget: judging
    it by float32's would judge the configuration, not the backend (DetectionOutput's FLOAT_32 boxes of a
    FLOAT_16 case were 3.8e-5 off at 4.0, inside float16 and outside float32)."""
    if precision == "float16" and dtype == "FLOAT_32":
        b = budget_for("FLOAT_16", op_tolerance, accumulation)
        return replace(b, source=f"{b.source}; a FLOAT_32 output of a graph run at float16 precision")
    cls = class_of(dtype)
    b = DEFAULTS.get(cls, DEFAULTS["integer"])
    op_tolerance = op_tolerance or {}
    if op_tolerance.get("exact"):
        return Budget(exact=True, source=op_tolerance.get("reason", "the op moves data: exact"))
    for key in ("fixed_point" if cls.startswith("fixed_point") else None, _OVERRIDE_KEYS.get(dtype, cls),
                cls.replace("fixed_point_", "fixed_point") if cls.startswith("fixed_point") else None):  # fmt: skip
        override = op_tolerance.get(key) if key else None
        if override:
            numbers = {k: float(v) for k, v in override.items() if k in ("atol", "rtol", "ulp", "steps")}
            reason = override.get("reason") or op_tolerance.get("reason") or "op override"
            b = replace(b, exact=False, **numbers, source=f"{b.source}; {reason}")
    if accumulation and accumulation > 1 and dtypes.get(dtype).kind == "float":
        k = float(accumulation)
        b = replace(b, atol=b.atol * k, rtol=b.rtol * k, ulp=b.ulp * k,
                    source=f"{b.source}; x K={k:g} (accumulation: {op_tolerance.get('accumulation')})")  # fmt: skip
    return b
