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
