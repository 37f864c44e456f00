"""How parameters reach a QNN backend: a tensor parameter as a tensor whatever its length, and a scalar of a datatype
the QNN scalar cannot hold (FLOAT_16) in the form converters send (a FLOAT_32 scalar), said in the outcome.

Why: Moments' ``axes`` reached the HTP as a scalar (its spec named no dims) and every case was refused "Param axes
expected to be tensor"; Pad, OneHot, ConstantOfShape and Lstm FLOAT_16 cells were SKIP "no scalar form for FLOAT_16"
though converters run them with a FLOAT_32 scalar. The first half needs no backend; the last tests run the simulator.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hyp_seed

import opdefs
from adapters.qnn import bindings as b
from adapters.qnn.graph import SCALAR_SENT_AS, _Builder, sent_as
from cases import generate
from cases.case import Case, Param, Tensor
from opdefs import dtypes
from reference.expected import infer
from tests.simulator import MISSING


def _typical(op_name: str, label: str, n: int) -> list[Case]:
    op = opdefs.load(op_name)
    config = next(c for c in generate.configs(op) if c.label == label)
    got: list[Case] = []

    @hyp_seed(0)
    @settings(max_examples=n, database=None, deadline=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))  # fmt: skip
    @given(generate.case_strategy(op, config, generate.Settings(infer=infer, tier=generate.TYPICAL)))
    def collect(case: Case) -> None:
        got.append(case)

    collect()
    return got


def test_every_vector_parameter_of_every_spec_names_its_dims_or_rank():
    offenders = {name: [i for i, _ in opdefs.views.scalar_drawn_tensors(list(op.params.values()))]
                 for name, op in opdefs.load_all().items()}  # fmt: skip
    assert not {k: v for k, v in offenders.items() if v}, "parameters a case would draw as scalars"


def test_moments_axes_is_drawn_as_a_one_dimensional_tensor_even_of_one_element():
    cases = _typical("Moments", "FLOAT_32", 20)
    shapes = {np.shape(c.params["axes"].value) for c in cases}
    assert cases and all(c.params["axes"].is_tensor for c in cases), f"axes drawn as {shapes}"
    assert all(len(s) == 1 for s in shapes), f"axes shapes {shapes}, all must be 1-D"


def test_moments_typical_axes_are_distinct_axes_of_the_input():
    for c in _typical("Moments", "FLOAT_32", 20):
        axes = c.params["axes"].value.tolist()
        rank = len(c.inputs[0].shape)
        assert len(set(axes)) == len(axes) and all(0 <= a < rank for a in axes), f"{axes} on rank {rank}"


def test_moments_typical_cases_never_reduce_every_axis_without_keep_dims():
    """The output rank of that case is contested (the spec's [1] against the QNN backends' rank 0)."""
    for c in _typical("Moments", "FLOAT_32", 20):
        every = len(c.params["axes"].value) == len(c.inputs[0].shape)
        assert not every or c.params["keep_dims"].value, c.describe()


def test_a_one_element_tensor_parameter_is_sent_as_a_tensor():
    struct, is_tensor = _Builder().param(Param("axes", "INT_32", np.asarray([2], np.int32)))
    assert is_tensor and struct.paramType == b.PARAM_TENSOR, "a 1-element vector went out as a scalar"


@pytest.mark.parametrize("dtype", sorted(SCALAR_SENT_AS))
def test_a_scalar_the_qnn_scalar_cannot_hold_is_sent_as_a_float32_scalar(dtype):
    struct, is_tensor = _Builder().param(Param("pad_constant_value", dtype, 1.5))
    assert not is_tensor
    assert struct.u.scalar.dataType == dtypes.get("FLOAT_32").code, f"{dtype} scalar sent with code " \
        f"{struct.u.scalar.dataType:#x}"
    assert struct.u.scalar.value.f32 == 1.5


def test_the_case_says_which_scalars_go_out_in_another_form():
    x = np.zeros((2, 2), np.float16)
    case = Case("Pad", [Tensor("in0", "FLOAT_16", (2, 2), x)],
                {"pad_constant_value": Param("pad_constant_value", "FLOAT_16", 1.0),
                 "scheme": Param("scheme", "UINT_32", 0)}, [Tensor("out0", "FLOAT_16", (2, 2))])  # fmt: skip
    assert sent_as(case) == {"pad_constant_value": "FLOAT_32 scalar (FLOAT_16 in the case)"}


# ---- on the simulator ------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def qnn():
    from adapters.qnn.adapter import QnnAdapter

    ad = QnnAdapter(timeout=20)
    ok, why = ad.available()
    if not ok:
        pytest.skip(f"QNN backend not usable here: {why}")
    yield ad
    ad.close()


@pytest.mark.qnn
@pytest.mark.skipif(bool(MISSING), reason=f"QNN HTP simulator not available: {MISSING}")
def test_float16_pad_runs_with_its_pad_value_sent_as_float32(qnn):
    x = np.arange(6, dtype=np.float16).reshape(2, 3)
    pads = np.asarray([[0, 1], [1, 0]], np.uint32)
    case = Case("Pad", [Tensor("in0", "FLOAT_16", (2, 3), x)],
                {"scheme": Param("scheme", "UINT_32", 0), "pad_amount": Param("pad_amount", "UINT_32", pads),
                 "pad_constant_value": Param("pad_constant_value", "FLOAT_16", 7.0)},
                [Tensor("out0", "FLOAT_16", (3, 4))])  # fmt: skip
    out = qnn.run(case)
    assert out.status == "ok", (out.status, out.message)
    # row 0: pad 7 before [0 1 2]; row 1: 7 before [3 4 5]; row 2, the added one: all 7
    want = np.asarray([[7, 0, 1, 2], [7, 3, 4, 5], [7, 7, 7, 7]], np.float64)
    assert np.array_equal(np.asarray(out.outputs[0], np.float64), want), out.outputs[0]
    assert out.details["params_sent_as"] == {"pad_constant_value": "FLOAT_32 scalar (FLOAT_16 in the case)"}


@pytest.mark.qnn
@pytest.mark.skipif(bool(MISSING), reason=f"QNN HTP simulator not available: {MISSING}")
def test_moments_with_one_axis_is_not_refused_for_the_form_of_its_axes(qnn):
    """The HTP has no Moments kernel ("OpValidator not found"); what it must no longer say is that axes is no
    tensor."""
    x = np.ones((1, 2, 2, 4), np.float32)
    case = Case("Moments", [Tensor("in0", "FLOAT_32", x.shape, x)],
                {"axes": Param("axes", "INT_32", np.asarray([3], np.int32)),
                 "keep_dims": Param("keep_dims", "BOOL_8", True)},
                [Tensor("out0", "FLOAT_32", (1, 2, 2, 1)), Tensor("out1", "FLOAT_32", (1, 2, 2, 1))])  # fmt: skip
    out = qnn.run(case)
    reason = (out.details.get("refusal") or {}).get("reason", "")
    assert "must be a tensor" not in reason, reason
