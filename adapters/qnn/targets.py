"""Simulated HTP targets and backend variants: ``qnn-htp@2.47``, ``qnn-htp@v73``, ``qnn-htp@2.47+soc43``.

Why names: a release or a target is a column of the matrix, and everything downstream (results files,
reports, replay commands, pytest-xdist workers) already keys on the backend's name. So the main job
runs ``--backend qnn-htp@2.47`` and the name carries what to load, with nothing else to hand around.

The SoC ids per HTP generation were measured on the onnxruntime-qnn 2.7.0 simulator (QNN 2.51): with
a device custom config naming the SoC, the backend logs the architecture it switches to ("will
overwrite it to 73"), and a FLOAT_32 Gelu that has no kernel on the default target (SM8350, v68)
runs. Ids it does not know (79, 9999) fail deviceCreate with error 14001.
"""

from __future__ import annotations

import re
from typing import Any

# generation -> SoC model id the simulator accepts for it (and the chip it names)
GENERATIONS: dict[str, int] = {"v68": 30, "v69": 36, "v73": 43, "v75": 57, "v79": 69, "v81": 87}
CHIPS: dict[int, str] = {30: "SM8350", 36: "SM8450", 43: "SM8550", 57: "SM8650", 69: "SM8750", 87: "SM8850"}
DEFAULT = "default"  # the simulator's own target: SM8350 (v68)
SEPARATOR = "@"  # backend@variant
# The first generation whose simulated HTP computes FLOAT_32 graphs in float16, as Qualcomm documents for the HTP. At
# v68 (SM8350, the simulator's default) FLOAT_32 Softmax, Sigmoid and Conv2d come back within a few float32 ulps and
# ElementWiseAdd exactly; from v69 (SM8450) on the same cases are off by up to 1.7e7 ulps, inside binary16's budget.
# Measured with onnxruntime-qnn 2.7.0 (QNN 2.51), 5 typical cases per cell, graph precision option float32, on
# qnn-htp and ort-qnn alike: the records' metrics.max_ulp of ``pytest --backend qnn-htp@v69 -k "FLOAT_32 and typical"``.
FLOAT16_ARITHMETIC_FROM = 69
# The ops whose FLOAT_32 results come back at float16 precision at v68 too, as documented for every target: LayerNorm
# (every case within binary16's budget, up to 0.0029 off near 1.3), SpaceToDepth with fewer than 4 channels (its
# values rounded to binary16) and DetectionOutput (boxes up to 6782 float32 ulps off, from float16 intermediates).
# Measured: the typical tier of seeds 0-4 and the edge tier of seeds 0-2 at v68, every FLOAT_32 result outside
# binary32's budget and inside binary16's (FP16_ACCURATE while every target was declared float16) listed by op.
FLOAT16_AT_V68 = ("DetectionOutput", "LayerNorm", "SpaceToDepth")
JOIN = "+"  # a release and a target in one variant: 2.47+v73


def split_name(name: str) -> tuple[str, str]:
    """"qnn-htp@2.47+v73" -> ("qnn-htp", "2.47+v73"); a name without a variant -> (name, "")."""
    base, _, variant = name.partition(SEPARATOR)
    return base, variant


def parse_variant(variant: str) -> dict[str, Any]:
    """The adapter options a variant names: ``sdk`` (a QNN version or ``ort-qnn-X.Y.Z``), ``soc`` or
    ``arch``. ValueError (one line) for anything else."""
    out: dict[str, Any] = {}
    for part in filter(None, variant.split(JOIN)):
        low = part.lower()
        key, value = _target(low)
        if key is None:
            m = re.fullmatch(r"(?:ort-qnn-|onnxruntime-qnn-)(\d+\.\d+\.\d+)", low)
            if m:
                key, value = "sdk", f"ort-qnn=={m.group(1)}"
            elif re.fullmatch(r"(?:qnn-?|v)?\d+\.\d+(?:\.\d+)?", low):
                key, value = "sdk", low
            else:
                raise ValueError(f"variant {part!r}: expected a QNN release (2.47, ort-qnn-2.3.0) or a target "
                                 f"({DEFAULT}, {', '.join(GENERATIONS)}, socN, archN)")  # fmt: skip
        if key in out and key != "target":
            raise ValueError(f"variant {variant!r} names two values for {key}")
        out[key] = value
    return out


def _target(low: str) -> tuple[str | None, Any]:
    if low == DEFAULT:
        return "target", DEFAULT
    if low in GENERATIONS:
        return "soc", GENERATIONS[low]
    m = re.fullmatch(r"(soc|arch)=?(\d+)", low)
    if m:
        return m.group(1), int(m.group(2))
    return None, None


def target_label(soc: int | None, arch: int | None) -> str:
    """How a column names a target: the generation where the SoC is one of GENERATIONS', else socN/archN."""
    if soc is None and arch is None:
        return DEFAULT
    for generation, sid in GENERATIONS.items():
        if soc == sid and arch is None:
            return generation
    return JOIN.join(x for x in (f"soc{soc}" if soc is not None else "", f"arch{arch}" if arch is not None else "")
                     if x)  # fmt: skip


def float32_declaration(soc: int | None, arch: int | None, source: str) -> dict[str, Any]:
    """What an HTP adapter declares about FLOAT_32 arithmetic on this target (``capabilities()["arithmetic"]``,
    read by conformance/execute.py): float16 for every op from v69 on, for the ops of FLOAT16_AT_V68 only at v68."""
    if float32_arithmetic(soc, arch) == "float16":
        return {"FLOAT_32": {"computes_in": "float16", "source": source}}
    return {"FLOAT_32": {"computes_in": "float16", "ops": list(FLOAT16_AT_V68),
                         "source": f"{source}; at v68 measured for {', '.join(FLOAT16_AT_V68)} only, the other ops "
                                   "computing float32 in float32 (adapters/qnn/targets.py)"}}  # fmt: skip


def float32_arithmetic(soc: int | None, arch: int | None) -> str:
    """"float16" where the simulated HTP computes FLOAT_32 graphs in float16 (v69 and later), "float32" at v68
    (but for FLOAT16_AT_V68).

    Why it matters: a backend that computes in float16 has its FLOAT_32 results judged against binary16's budget
    (FP16_ACCURATE), 2^13 times binary32's. Declared for every target, that budget hid on the default target (v68)
    every error below it, a result truncated to bfloat16 included (``bench mutants``: softmax_f32_bfloat16_truncated),
    where the backend computes float32 in float32. A SoC or architecture the table does not name keeps Qualcomm's
    documented float16."""
    if arch is not None:
        return "float16" if arch >= FLOAT16_ARITHMETIC_FROM else "float32"
    if soc is None or soc == GENERATIONS["v68"]:
        return "float32"
    return "float16"


def parse_targets(text: str) -> list[str]:
    """``--targets default,v73,v75,v79`` -> the variants, each checked; ValueError for an unknown one."""
    out = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        key, _ = _target(part.lower())
        if key is None:
            raise ValueError(f"--targets: unknown target {part!r}; choose from {DEFAULT}, "
                             f"{', '.join(GENERATIONS)}, socN or archN")  # fmt: skip
        out.append(part.lower())
    if not out:
        raise ValueError("--targets names no target")
    return out
