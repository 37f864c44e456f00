"""Op families: a coarse grouping so a 157-row matrix can be filtered to the ops one person owns.

The grouping is a reading aid, not a semantic claim, so it lives in one small table of name
patterns (first match wins) instead of per-op metadata that would have to be kept in sync.
"""

from __future__ import annotations

import re

# (family, regular expression matched against the whole QNN op name). Order matters: "Convert"
# must be claimed by conversion before the convolution pattern sees it.
FAMILY_PATTERNS: tuple[tuple[str, str], ...] = (
    ("elementwise", r"ElementWise\w*|IsInf|IsNan"),
    ("conversion", r"Quantize|Dequantize|Cast|Convert"),
    ("convolution", r"(Transpose|DepthWise)?Conv\dd|Correlation1D"),
    ("pooling", r"Pool\w*|L2Pool\dd"),
    ("reduction", r"Reduce\w*|Argmax|Argmin|TopK|CumulativeSum|Moments"),
    ("normalization", r"\w*Norm\w*|Batchnorm|Lrn"),
    ("resampling", r"Resize\w*|GridSample|RoiAlign|RoiPooling|CropAndResize|ExtractGlimpse|ImageProjectionTransform"),
    ("detection", r"\w*(Nms|NonMaxSuppression|Bbox|Proposals|DetectionOutput|KeyPoint)\w*"),
    ("activation", r"Relu\w*|Prelu|Elu|Gelu|HardSwish|Sigmoid|Tanh|Logit|\w*Softmax"),
    ("linear algebra", r"MatMul|FullyConnected|HadamardTransform"),
    ("recurrent", r"Lstm|Gru"),
    ("image", r"ArgbToRgb|Nv12ToRgb|Nv21ToRgb"),
    ("sparse", r"CreateSparse|GetSparse\w+|SparseToDense"),
    (
        "data movement",
        r"BatchPermutation|BatchToSpace|Buffer|ChannelShuffle|Col2Im|Concat|ConstantOfShape|DepthToSpace|ExpandDims"
        r"|ExtractPatches|Gather\w*|Im2Col|NonZero|OneHot|Pack|UnPack|Pad|Reshape|Scatter\w*|Shape|SpaceToBatch"
        r"|SpaceToDepth|Split|Squeeze|StridedSlice|Tile|Transpose",
    ),
)
OTHER = "other"

_COMPILED = tuple((family, re.compile(pattern)) for family, pattern in FAMILY_PATTERNS)


def family_of(op: str) -> str:
    """The family of a QNN op name; ``"other"`` when no pattern claims it (e.g. If, Stft)."""
    for family, pattern in _COMPILED:
        if pattern.fullmatch(op):
            return family
    return OTHER


def families() -> list[str]:
    """Every family name in table order, ``"other"`` last: the order filters and legends use."""
    return [family for family, _ in FAMILY_PATTERNS] + [OTHER]


# ---------------------------------------------------------------------------------------------
# Datatype families: the matrix columns, so a backend is six columns instead of forty combinations
# ---------------------------------------------------------------------------------------------
FLOAT32, FLOAT16, BITS8, BITS16, MIXED, INTEGER = "float32", "float16", "8-bit", "16-bit", "mixed", "integer"
DTYPE_FAMILIES: tuple[str, ...] = (FLOAT32, FLOAT16, BITS8, BITS16, MIXED, INTEGER)
SHORT_DTYPE_FAMILY = {FLOAT32: "f32", FLOAT16: "f16", BITS8: "8b", BITS16: "16b", MIXED: "mix", INTEGER: "int"}

# The precision class of one QNN datatype; None for the index, mask and bias types (INT_32, UINT_32,
# BOOL_8, 32-bit fixed point) that ride along with a data type without deciding what a user calls it.
_DATA_CLASS = {
    "FLOAT_32": FLOAT32, "FLOAT_16": FLOAT16,
    "UFIXED_POINT_8": BITS8, "SFIXED_POINT_8": BITS8, "UFIXED_POINT_16": BITS16, "SFIXED_POINT_16": BITS16,
    "UFIXED_POINT_4": "4-bit", "SFIXED_POINT_4": "4-bit",
}  # fmt: skip


def dtype_family(config: str) -> str:
    """The datatype family of a configuration label ("UFIXED_POINT_8+SFIXED_POINT_8/axis+SFIXED_POINT_32").

    Index, mask and bias types beside a data type do not change its family (Gather's FLOAT_32+INT_32
    is float32, a quantized Conv2d with 32-bit bias is 8-bit); two data precisions in one configuration
    (16-bit activations with 8-bit weights, Quantize from FLOAT_32) make it mixed; only integer and
    bool types make it integer."""
    types = [t.split("/", 1)[0] for t in config.split("+") if t]
    classes = {_DATA_CLASS[t] for t in types if t in _DATA_CLASS}
    if any(t.endswith("FIXED_POINT_32") for t in types) and not classes & {BITS8, BITS16, "4-bit"}:
        classes.add("32-bit")  # no narrower fixed-point type beside it: the 32-bit one is data, not a bias
    if not classes:
        return INTEGER
    if len(classes) > 1 or (types and types[0] not in _DATA_CLASS and not types[0].endswith("FIXED_POINT_32")):
        return MIXED  # two precisions, or integer data converted to or from a data type (Cast INT_32 -> FLOAT_32)
    family = classes.pop()
    return family if family in DTYPE_FAMILIES else MIXED  # 4-bit or 32-bit data on its own


def family_sort_key(family: str) -> tuple[int, str]:
    """The table's order for the known op families, then any other name (from a spec's ``family:``),
    ``"other"`` last."""
    order = [f for f, _ in FAMILY_PATTERNS]
    if family in order:
        return (0, f"{order.index(family):03d}")
    return (2, family) if family == OTHER else (1, family)
