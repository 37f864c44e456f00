"""Hypothesis strategies built from an OpDef: datatype configurations, shapes, params, values, encodings.

Everything here is driven by the spec; the generator knows no op by name. It builds cases
constructively where the spec's structure says how (symbolic dims shared between tensors, rank
symbols, "same shape as" and "same datatype as" constraints, enum values, unique-valued vectors,
positive-valued vectors) and then runs every checkable constraint on the result: a case that breaks
one is rejected (``hypothesis.assume``), never used. Array contents come from a numpy generator
seeded by a drawn integer, so hypothesis shrinks shapes, params and regimes, not 4096 floats one by one.

Output shapes and output encodings need the op's meaning. The caller may pass ``infer``, a function
returning the real-valued outputs for a case (the pytest module passes the reference): first asked
with no outputs declared; for ops that read their output size from the declared output (Resize,
CropAndResize...) asked again with the outputs the spec's dims give, so their grids are calibrated
on real results too. Without it, outputs are derived from the spec alone where the spec determines them.

The package, one job a module: ``configurations`` (the datatype columns and the draw settings), ``draws`` (the
hypothesis strategies, built once each), ``evaluate`` (spec expressions on what is drawn so far), ``shapes``,
``slots`` (the typical tier's schedule of enum and boolean values), ``params``, ``values`` (tensor contents and
encodings), ``outputs`` (output tensors and execution steps) and ``strategy`` (``case_strategy``, which draws a
case in that order). The names below are the package's interface; the private ones are re-exported for the tests.
"""

from __future__ import annotations

from cases import determinism

determinism.pin_hypothesis_constants()  # the same seed draws the same cases in any process (cases/determinism.py)

from cases.case import EDGE, TIERS, TYPICAL  # noqa: E402
from cases.generate.configurations import (  # noqa: E402
    Config,
    Infer,
    Settings,
    _curated_config,
    _first_index,
    _listed,
    configs,
    first_index,
    skip_reason,
)
from cases.generate.draws import (  # noqa: E402
    _bool_list,
    _default_or,
    _int_list,
    _ints,
    _n_of,
    _permutation,
    _permutation_picks,
    _pick,
    _pick_list,
    _picks,
)
from cases.generate.evaluate import _eval_int, _fits, _holds, _param_checks  # noqa: E402
from cases.generate.outputs import declared_rows, draw_steps  # noqa: E402
from cases.generate.params import (  # noqa: E402
    _deferred_params,
    _draw_param,
    _formula_default,
    _leaves_room,
    _needed_params,
    param_dtype,
)
from cases.generate.shapes import _draw_shape, _fold_last, _last_dim_limits  # noqa: E402
from cases.generate.slots import enumerated_slots, typical_slots  # noqa: E402
from cases.generate.strategy import _drawn_by, case_strategy, cell_strategies  # noqa: E402
from cases.generate.values import (  # noqa: E402
    EDGE_REGIMES,
    TYPICAL_REGIMES,
    TensorDraw,
    _tensor_with_data,
    code_range,
    encoding_covering,
    float_values,
    is_weight,
    random_encoding,
    symmetric_encoding,
)

__all__ = [
    "EDGE", "TIERS", "TYPICAL", "Config", "Infer", "Settings", "configs", "first_index", "skip_reason",
    "_curated_config", "_first_index", "_listed", "_bool_list", "_default_or", "_int_list", "_ints", "_n_of",
    "_permutation", "_permutation_picks", "_pick", "_pick_list", "_picks", "_eval_int", "_fits", "_holds",
    "_param_checks", "EDGE_REGIMES", "TYPICAL_REGIMES", "code_range", "encoding_covering", "float_values",
    "is_weight", "random_encoding", "symmetric_encoding", "TensorDraw", "_tensor_with_data", "_draw_shape",
    "_fold_last",
    "_last_dim_limits", "enumerated_slots", "typical_slots", "param_dtype", "_deferred_params", "_draw_param",
    "_formula_default", "_leaves_room", "_needed_params", "declared_rows", "draw_steps", "case_strategy",
    "cell_strategies", "_drawn_by",
]
