"""The planted bugs: one per mutant, of the kinds real backends have, over every family the generator draws.

Each mutant names its op, its kind (``kinds.KINDS``), what it does in one sentence, and the condition under which
it changes anything. The names are Python identifiers: ``--backend bench.mutants:qnn_htp.<name>`` runs the
suite on qnn-htp with that bug. ``reproduces`` marks a mutant that plants exactly the bug a finding records:
that finding taking its failures is the one swallowing that is right.

Families with no mutant: control flow (If) and sparse (CreateSparse, GetSparseIndices, GetSparseValues,
SparseToDense), whose ops the generator does not draw at all (``python -m cases configs If`` says why).
"""

from __future__ import annotations

import numpy as np

from bench.mutants.kinds import (
    AXIS_REVERSED,
    CLEAN_GROUND,
    ENUM_AS_OTHER,
    FINDING_GROUND,
    FP16,
    INPUT_DROPPED,
    LAYOUT,
    PARAM_IGNORED,
    PRECISION,
    REQUANT,
    SIGN_S8,
    SIZE,
    TAIL,
    Mutant,
    accumulated_in_float16,
    axes_swapped,
    budget_steps,
    fault_when,
    input_dropped,
    input_zeroed,
    is_type,
    low_byte_dropped,
    matmul_float16_accumulator,
    odd_tail,
    other_end,
    outputs_altered,
    param_as,
    present,
    rank,
    rounded_to_float16,
    shifted,
    short_table,
    sign_bit_flipped,
    tail_repeated,
    tile_seam,
    tile_seams,
    truncated_to_bfloat16,
    value,
    vector_tail,
    vector_tail_unwritten,
    without_input,
    zero_data,
)
from cases.case import Case, Encoding
from cases.quant import quantize, real_value

FIXED_8 = ("UFIXED_POINT_8", "SFIXED_POINT_8")
FIXED_16 = ("UFIXED_POINT_16", "SFIXED_POINT_16")


def _flip_last(case: Case, i: int) -> Case:
    t = case.inputs[i]
    case.inputs[i] = type(t)(t.name, t.dtype, t.shape, np.ascontiguousarray(np.flip(t.data, -1)), t.encoding, t.static)
    return case


def _not_palindrome(case: Case, i: int) -> bool:
    data = case.inputs[i].data
    return data.shape[-1] > 1 and not np.array_equal(data, np.flip(data, -1))


def _flipped_out_offset(case: Case) -> Case:
    t = case.outputs[0]
    enc = t.encoding
    case.outputs[0] = type(t)(t.name, t.dtype, t.shape, t.data, Encoding(enc.scales, tuple(-o for o in enc.offsets),
                                                                         enc.axis), t.static)  # fmt: skip
    return case


def _reversed_inputs(case: Case) -> Case:
    case.inputs = list(reversed(case.inputs))
    return case


def _same_shapes_differing(case: Case) -> bool:
    ins = [t for t in case.inputs if t is not None]
    return (len(ins) >= 2 and len({(t.shape, t.dtype, t.encoding) for t in ins}) == 1
            and not all(np.array_equal(ins[0].data, t.data) for t in ins[1:]))  # fmt: skip


def _last_axis_tail_dropped(case: Case) -> Case:
    t = case.inputs[0]
    data = np.array(t.data, copy=True)
    data[..., -1] = zero_data(t)[..., -1]
    case.inputs[0] = type(t)(t.name, t.dtype, t.shape, data, t.encoding, t.static)
    return case


def _reduces_odd_last_axis(case: Case) -> bool:
    n = rank(case)
    axes = {a % n for a in np.ravel(value(case, "axes")).tolist()}
    return (n - 1) in axes and case.inputs[0].shape[-1] % 2 == 1 and case.inputs[0].shape[-1] >= 3


def _condition_inverted(case: Case) -> Case:
    t = case.inputs[0]
    case.inputs[0] = type(t)(t.name, t.dtype, t.shape, np.logical_not(t.data).astype(t.data.dtype), t.encoding,
                             t.static)  # fmt: skip
    return case


def _hard_sigmoid_unclamped(case: Case, outcome):  # noqa: ANN001 - an Outcome, as every alter
    from dataclasses import replace

    from adapters.base import OK

    if outcome.status != OK:
        return outcome
    x = real_value(case.inputs[0])
    y = value(case, "alpha") * x + value(case, "beta")
    out = case.outputs[0]
    stored = quantize(y, out.encoding, out.dtype) if out.encoding is not None else y.astype(outcome.outputs[0].dtype)
    return replace(outcome, outputs=[stored, *outcome.outputs[1:]])


def _hard_sigmoid_leaves_01(case: Case) -> bool:
    if value(case, "operation") != 2:
        return False
    y = value(case, "alpha") * real_value(case.inputs[0]) + value(case, "beta")
    return bool(np.any((y < -0.05) | (y > 1.05)))


def _square_in1(case: Case) -> bool:
    s = case.inputs[1].shape
    return s[-1] == s[-2]


def _pads(case: Case) -> bool:
    return bool(np.any(np.asarray(value(case, "pad_amount")) != 0))


MUTANTS: tuple[Mutant, ...] = (
    # ---- activation --------------------------------------------------------------------------------------
    param_as("softmax_beta_ignored", "Softmax", "beta", 1.0, "Softmax computes every beta as 1, its default"),
    param_as("logsoftmax_axis_reversed", "LogSoftmax", "axis", other_end("axis"),
             "LogSoftmax normalises along axis rank - 1 - axis", kind=AXIS_REVERSED, recompute=True),
    Mutant("prelu_slope_reversed", ("Prelu",), AXIS_REVERSED, "Prelu reads its slope's last axis from the other end",
           lambda c: _not_palindrome(c, 1), rewrite=lambda c: _flip_last(c, 1)),
    param_as("elu_alpha_ignored", "Elu", "alpha", 1.0, "Elu computes every alpha as 1, its default"),
    param_as("reluminmax_max_as_six", "ReluMinMax", "max_value", 6.0,
             "ReluMinMax clamps at 6 whatever max_value says (a Relu6 kernel reused)",
             when=lambda c: value(c, "min_value") < 6.0),
    outputs_altered("sigmoid_16bit_requant", "Sigmoid", REQUANT,
                    "16-bit Sigmoid outputs one step past the budget off (a requantization shift off)",
                    shifted(budget_steps), is_type(*FIXED_16, output=True)),
    outputs_altered("tanh_8bit_requant", "Tanh", REQUANT, "8-bit Tanh outputs 2 steps off (requantization)",
                    shifted(budget_steps), is_type(*FIXED_8, output=True)),
    outputs_altered("sigmoid_f32_as_f16", "Sigmoid", FP16, "FLOAT_32 Sigmoid outputs rounded to float16",
                    rounded_to_float16, is_type("FLOAT_32", output=True)),
    sign_bit_flipped("tanh_s8_sign", "Tanh", "SFIXED_POINT_8 Tanh reads its codes as unsigned (sign bit flipped)"),
    # ---- conversion --------------------------------------------------------------------------------------
    Mutant("quantize_s8_offset_sign", ("Quantize",), SIGN_S8,
           "Quantize to SFIXED_POINT_8 applies the output offset with the wrong sign",
           lambda c: c.outputs[0].dtype == "SFIXED_POINT_8" and any(o != 0 for o in c.outputs[0].encoding.offsets),
           rewrite=_flipped_out_offset),
    sign_bit_flipped("dequantize_s8_sign", "Dequantize", "SFIXED_POINT_8 Dequantize reads its codes as unsigned"),
    outputs_altered("convert_requant", "Convert", REQUANT, "Convert's fixed-point output one step past the budget off",
                    shifted(budget_steps), is_type(*FIXED_8, *FIXED_16, output=True)),
    # ---- convolution -------------------------------------------------------------------------------------
    input_zeroed("conv2d_bias_dropped", "Conv2d", 2, "Conv2d ignores its bias"),
    axes_swapped("conv2d_filter_hw_swapped", "Conv2d", 1, (0, 1), "Conv2d reads its filter's height as its width"),
    sign_bit_flipped("conv2d_s8_sign", "Conv2d", "SFIXED_POINT_8 Conv2d reads its activations as unsigned"),
    outputs_altered("conv2d_f32_as_f16", "Conv2d", FP16, "FLOAT_32 Conv2d outputs rounded to float16",
                    rounded_to_float16, is_type("FLOAT_32", output=True)),
    input_zeroed("depthwiseconv2d_bias_dropped", "DepthWiseConv2d", 2, "DepthWiseConv2d ignores its bias"),
    outputs_altered("transposeconv2d_width_tail", "TransposeConv2d", TAIL,
                    "TransposeConv2d never writes the last column of an odd-width output (it repeats the one before)",
                    tail_repeated(2), odd_tail(2)),
    # ---- data movement -----------------------------------------------------------------------------------
    param_as("pad_reflect_as_symmetric", "Pad", "scheme", 1, "Pad computes MIRROR_REFLECT as MIRROR_SYMMETRIC",
             kind=ENUM_AS_OTHER, when=lambda c: value(c, "scheme") == 2),
    param_as("pad_constant_ignored", "Pad", "pad_constant_value", 0, "Pad CONSTANT pads with 0 whatever the value",
             when=lambda c: value(c, "scheme") == 0),
    param_as("depthtospace_mode_swapped", "DepthToSpace", "mode", lambda c: 1 - value(c, "mode"),
             "DepthToSpace computes DCR as CRD and CRD as DCR", kind=ENUM_AS_OTHER),
    param_as("spacetodepth_mode_swapped", "SpaceToDepth", "mode", lambda c: 1 - value(c, "mode"),
             "SpaceToDepth computes DCR as CRD and CRD as DCR", kind=ENUM_AS_OTHER),
    param_as("channelshuffle_groups_transposed", "ChannelShuffle", "num_groups",
             lambda c: c.inputs[0].shape[value(c, "axis") % rank(c)] // value(c, "num_groups"),
             "ChannelShuffle takes the group size for the number of groups", kind=LAYOUT),
    Mutant("concat_inputs_reversed", ("Concat",), LAYOUT, "Concat takes its inputs in reverse order",
           _same_shapes_differing, rewrite=_reversed_inputs),
    outputs_altered("transpose_odd_tail", "Transpose", TAIL,
                    "Transpose never writes the last element of an odd-length innermost axis", tail_repeated(-1),
                    odd_tail(-1)),
    fault_when("expanddims_trailing_crash", "ExpandDims", "ExpandDims crashes adding a trailing axis",
               lambda c: value(c, "axis") == rank(c), crash=True),
    fault_when("pack_axis0_finalize", "Pack", "Pack fails to finalize when packing along axis 0",
               lambda c: value(c, "axis") == 0, crash=False),
    param_as("scatternd_add_as_none", "ScatterNd", "reduction", 0, "ScatterNd computes reduction ADD as NONE",
             kind=ENUM_AS_OTHER, when=lambda c: value(c, "reduction") == 1),
    # ---- detection ---------------------------------------------------------------------------------------
    param_as("nms_score_threshold_ignored", "NonMaxSuppression", "score_threshold", 0.0,
             "NonMaxSuppression keeps boxes under score_threshold (taken as 0, its default)"),
    param_as("nms_max_boxes_ignored", "NonMaxSuppression", "max_boxes_selected", 0,
             "NonMaxSuppression ignores max_boxes_selected (0, its default: no limit)"),
    input_zeroed("detectionoutput_deltas_ignored", "DetectionOutput", 1,
                 "DetectionOutput ignores its box deltas (every box comes back as its anchor)"),
    param_as("detectionoutput_confidence_threshold_ignored", "DetectionOutput", "confidence_threshold", 0.0,
             "DetectionOutput keeps detections under confidence_threshold (taken as 0)"),
    # ---- elementwise -------------------------------------------------------------------------------------
    param_as("binary_floordiv_as_divide", "ElementWiseBinary", "operation", 2,
             "ElementWiseBinary computes FLOOR_DIV as DIVIDE", kind=ENUM_AS_OTHER,
             when=lambda c: value(c, "operation") == 4),
    param_as("unary_ceil_as_floor", "ElementWiseUnary", "operation", 6, "ElementWiseUnary computes CEIL as FLOOR",
             kind=ENUM_AS_OTHER, when=lambda c: value(c, "operation") == 3),
    outputs_altered("add_16bit_requant", "ElementWiseAdd", REQUANT,
                    "16-bit ElementWiseAdd outputs one step past the budget off", shifted(budget_steps),
                    is_type(*FIXED_16, output=True)),
    outputs_altered("multiply_8bit_requant", "ElementWiseMultiply", REQUANT, "8-bit ElementWiseMultiply 2 steps off",
                    shifted(budget_steps), is_type(*FIXED_8, output=True)),
    outputs_altered("divide_f32_as_f16", "ElementWiseDivide", FP16, "FLOAT_32 ElementWiseDivide rounded to float16",
                    rounded_to_float16, is_type("FLOAT_32", output=True)),
    sign_bit_flipped("greater_s8_sign", "ElementWiseGreater", "SFIXED_POINT_8 ElementWiseGreater compares its codes "
                     "as unsigned", inputs=(0, 1)),
    Mutant("neuron_hard_sigmoid_unclamped", ("ElementWiseNeuron",), PARAM_IGNORED,
           "ElementWiseNeuron HARD_SIGMOID leaves alpha x + beta unclamped to [0, 1]", _hard_sigmoid_leaves_01,
           alter=_hard_sigmoid_unclamped),
    fault_when("neuron_hard_swish_finalize", "ElementWiseNeuron", "ElementWiseNeuron fails to finalize HARD_SWISH",
               lambda c: value(c, "operation") == 3, crash=False),
    Mutant("select_broadcast_condition_inverted", ("ElementWiseSelect",), TAIL,
           "ElementWiseSelect inverts a condition of lower rank than its output (broadcast)",
           lambda c: rank(c, 0) < len(c.outputs[0].shape), rewrite=_condition_inverted),
    # ---- image -------------------------------------------------------------------------------------------
    param_as("nv12torgb_bgr_as_rgb", "Nv12ToRgb", "output_order", 0, "Nv12ToRgb writes RGB when asked for BGR",
             kind=ENUM_AS_OTHER),
    # ---- linear algebra ----------------------------------------------------------------------------------
    input_zeroed("fullyconnected_bias_dropped", "FullyConnected", 2, "FullyConnected ignores its bias"),
    outputs_altered("fullyconnected_f32_as_f16", "FullyConnected", FP16, "FLOAT_32 FullyConnected rounded to float16",
                    rounded_to_float16, is_type("FLOAT_32", output=True)),
    param_as("matmul_transpose_in1_ignored", "MatMul", "transpose_in1", False,
             "MatMul ignores transpose_in1 (square in[1] only: the shapes still agree)", when=_square_in1),
    # ---- normalization -----------------------------------------------------------------------------------
    input_zeroed("batchnorm_bias_dropped", "Batchnorm", 2, "Batchnorm ignores its bias"),
    input_dropped("layernorm_gamma_dropped", "LayerNorm", 1, "LayerNorm ignores gamma (computes it as 1)"),
    param_as("l2norm_axes_reversed", "L2Norm", "axes", other_end("axes"),
             "L2Norm normalises along axes counted from the other end (k read as rank - 1 - k)", kind=AXIS_REVERSED,
             recompute=True, when=lambda c: "axes" in c.params and set(other_end("axes")(c)) != set(value(c, "axes"))),
    param_as("lrn_within_as_across", "Lrn", "region", 0, "Lrn computes WITHIN_CHANNEL as ACROSS_CHANNEL",
             kind=ENUM_AS_OTHER),
    Mutant("rmsnorm_beta_dropped", ("RmsNorm",), INPUT_DROPPED, "RmsNorm ignores beta",
           lambda c: present(c, 2), recompute=lambda c: without_input(c, 2),
           reproduces="rmsnorm-beta-ignored"),  # the HTP's own bug (findings/qnn-htp.yaml): planted, it is that one
    # ---- pooling -----------------------------------------------------------------------------------------
    param_as("poolavg2d_count_pad_ignored", "PoolAvg2d", "count_pad_for_edges", False,
             "PoolAvg2d never counts the padding in the average", when=_pads),
    outputs_altered("poolmax2d_width_tail", "PoolMax2d", TAIL,
                    "PoolMax2d never writes the last column of an odd-width output", tail_repeated(2), odd_tail(2)),
    # ---- random ------------------------------------------------------------------------------------------
    param_as("randomuniformlike_high_ignored", "RandomUniformLike", "high", 1.0,
             "RandomUniformLike draws up to 1 whatever high says"),
    # ---- recurrent ---------------------------------------------------------------------------------------
    param_as("gru_direction_ignored", "Gru", "direction", 0, "Gru runs REVERSE as FORWARD"),
    param_as("lstm_cell_clip_ignored", "Lstm", "cell_clip_threshold", 0.0, "Lstm never clips its cell state"),
    # ---- reduction ---------------------------------------------------------------------------------------
    Mutant("reducesum_odd_tail", ("ReduceSum",), TAIL,
           "ReduceSum skips the last element of an odd-length innermost axis it reduces", _reduces_odd_last_axis,
           rewrite=_last_axis_tail_dropped),
    param_as("topk_largest_ignored", "TopK", "largest", True, "TopK always returns the largest (largest ignored)"),
    param_as("cumulativesum_exclusive_ignored", "CumulativeSum", "exclusive", False,
             "CumulativeSum computes an exclusive sum as an inclusive one"),
    sign_bit_flipped("reducemax_s8_sign", "ReduceMax", "SFIXED_POINT_8 ReduceMax reads its codes as unsigned"),
    outputs_altered("reducemean_f32_as_f16", "ReduceMean", FP16, "FLOAT_32 ReduceMean rounded to float16",
                    rounded_to_float16, is_type("FLOAT_32", output=True)),
    # ---- resampling --------------------------------------------------------------------------------------
    param_as("resizebilinear_align_corners_ignored", "ResizeBilinear", "align_corners", False,
             "ResizeBilinear ignores align_corners"),
    param_as("resizenearest_half_pixel_ignored", "ResizeNearestNeighbor", "half_pixel_centers", False,
             "ResizeNearestNeighbor ignores half_pixel_centers"),
    param_as("gridsample_border_as_zeros", "GridSample", "padding_mode", 0,
             "GridSample pads BORDER as ZEROS", kind=ENUM_AS_OTHER, when=lambda c: value(c, "padding_mode") == 1),
    param_as("resize_cubic_coeff_ignored", "Resize", "cubic_coeff", -0.75, "Resize CUBIC always uses -0.75",
             when=lambda c: value(c, "interpolation_mode") == 2 and "cubic_coeff" in c.params),
    # ---- spectral ----------------------------------------------------------------------------------------
    input_dropped("stft_window_ignored", "Stft", 1, "Stft ignores its window (a rectangular one)",
                  when=lambda c: present(c, 1)),
)


def _precision(name: str, op: str, what: str, ground: str, when, *, alter=None, recompute=None) -> Mutant:  # noqa: ANN001
    return Mutant(name, (op,), PRECISION, what, when, alter=alter, recompute=recompute, ground=ground)


def _long_float_rows(case: Case) -> bool:
    """A FLOAT_32 MatMul of two inputs (no bias) whose rows are 64 long or more, without the transposes."""
    return (case.inputs[0].dtype == "FLOAT_32" and case.inputs[0].shape[-1] >= 64 and len(case.inputs) == 2
            and not value(case, "transpose_in0") and not value(case, "transpose_in1"))  # fmt: skip


def _u16_out(case: Case) -> bool:
    return case.outputs[0].dtype in FIXED_16


# The precision family (issue 40): planted on cells an accuracy finding covers and on clean cells alike, so the
# headline says whether a band hides a bug of its own size. And bugs only deployed sizes reach (issue 43).
PRECISION_AND_SIZE: tuple[Mutant, ...] = (
    _precision("conv2d_16x8_low_byte", "Conv2d", "16x8 Conv2d keeps only the high byte of each 16-bit result code",
               FINDING_GROUND, lambda c: c.config == "UFIXED_POINT_16+UFIXED_POINT_8+SFIXED_POINT_32",
               alter=low_byte_dropped),
    _precision("power_u16_low_byte", "ElementWisePower", "UFIXED_POINT_16 Power keeps only the high byte of its codes",
               FINDING_GROUND, _u16_out, alter=low_byte_dropped),
    _precision("gelu_16bit_low_byte", "Gelu", "16-bit Gelu keeps only the high byte of its codes", FINDING_GROUND,
               _u16_out, alter=low_byte_dropped),
    _precision("hadamard_16bit_low_byte", "HadamardTransform", "16-bit HadamardTransform keeps only the high byte",
               FINDING_GROUND, _u16_out, alter=low_byte_dropped),
    _precision("elementwiseadd_u16_low_byte", "ElementWiseAdd", "16-bit Add keeps only the high byte of its codes",
               CLEAN_GROUND, _u16_out, alter=low_byte_dropped),
    _precision("softmax_16bit_short_table", "Softmax", "16-bit Softmax reads its exponentials from a 256-entry "
               "table indexed by the input's top 8 bits", FINDING_GROUND, is_type(*FIXED_16),
               recompute=short_table(8)),
    _precision("exp_16bit_short_table", "ElementWiseExp", "16-bit Exp from a 256-entry table (the input's top 8 bits)",
               CLEAN_GROUND, is_type(*FIXED_16), recompute=short_table(8)),
    _precision("sigmoid_8bit_short_table", "Sigmoid", "8-bit Sigmoid from a 16-entry table (the input's top 4 bits)",
               CLEAN_GROUND, is_type(*FIXED_8), recompute=short_table(4)),
    _precision("softmax_f32_bfloat16_truncated", "Softmax", "FLOAT_32 Softmax rounds its results toward zero to "
               "bfloat16", CLEAN_GROUND, is_type("FLOAT_32", output=True), alter=truncated_to_bfloat16),
    _precision("layernorm_f32_bfloat16_truncated", "LayerNorm", "FLOAT_32 LayerNorm rounds its results toward zero "
               "to bfloat16", CLEAN_GROUND, is_type("FLOAT_32", output=True), alter=truncated_to_bfloat16),
    Mutant("relu_vector_tail", ("Relu",), SIZE, "Relu never writes the lanes past the last whole 128-byte vector of "
           "its innermost axis", vector_tail(), alter=vector_tail_unwritten()),
    Mutant("elementwiseadd_vector_tail", ("ElementWiseAdd",), SIZE, "Add never writes the lanes past the last whole "
           "128-byte vector of its innermost axis", vector_tail(), alter=vector_tail_unwritten()),
    Mutant("softmax_vector_tail", ("Softmax",), SIZE, "Softmax never writes the lanes past the last whole 128-byte "
           "vector of its innermost axis", vector_tail(), alter=vector_tail_unwritten()),
    Mutant("conv2d_width_tile_seam", ("Conv2d",), SIZE, "Conv2d computes the first column of every 8-wide tile "
           "with its left neighbour's (a halo not exchanged)", tile_seams(8, 2), alter=tile_seam(8, 2)),
    Mutant("poolavg2d_height_tile_seam", ("PoolAvg2d",), SIZE, "PoolAvg2d computes the first row of every 8-high "
           "tile with the row above's", tile_seams(8, 1), alter=tile_seam(8, 1)),
    Mutant("matmul_f32_float16_accumulator", ("MatMul",), SIZE, "FLOAT_32 MatMul accumulates its products in "
           "float16: the error grows with the inner dimension", _long_float_rows,
           alter=accumulated_in_float16(matmul_float16_accumulator)),
)

MUTANTS = MUTANTS + PRECISION_AND_SIZE
_BY_NAME = {m.name: m for m in MUTANTS}


def get(name: str) -> Mutant:
    """The mutant called ``name``; an AttributeError for another name, which is what ``--backend`` reports."""
    try:
        return _BY_NAME[name]
    except KeyError:
        raise AttributeError(f"no mutant {name!r}; python -m bench mutants --list names them") from None
