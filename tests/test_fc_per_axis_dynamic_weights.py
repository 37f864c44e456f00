"""The model of FullyConnected with per-axis 8-bit weights given at run time on the HTP simulator
(reference/convolution_models_c.py, finding fullyconnected-per-axis-dynamic-weights-byte-channels): it reproduces the
finding's case and hand-made measurements, refuses the spec's answer and a planted error, and covers nothing it was not
measured on."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from cases.case import Case, Encoding, Param, Tensor
from reference import models
from reference.convolution_models_c import NAME, htp_per_axis_dynamic_codes, weight_bytes

REPO = Path(__file__).resolve().parents[1]
MODEL = {"diagnosis": NAME}
# the finding's case on the simulator (seed 0's edge be568be214852f0e: UFIXED_POINT_16, [5, 5] x [4, 5]), out[0]'s codes
CODES = np.array([[33, 17366, 0, 0], [0, 15235, 0, 0], [0, 16706, 0, 0], [0, 14889, 0, 0], [0, 11783, 0, 0]],
                 np.uint16)  # fmt: skip


def finding_case() -> Case:
    return Case.load(REPO / "findings" / "cases" / "FullyConnected" /
                     "fullyconnected-per-axis-dynamic-weights-byte-channels.json")  # fmt: skip


def identity_case(weights: np.ndarray, scales: list[float]) -> Case:
    """in[0] an identity of codes 1 (scale 1, offset 0), out[0] at scale 1, offset 0: out[0][i, j] is unit j's
    weight i times its scale, as the kernel uses it."""
    m, n = weights.shape
    x = Tensor("in[0]", "UFIXED_POINT_8", (n, n), np.eye(n, dtype=np.uint8), Encoding((1.0,), (0,)))
    w = Tensor("in[1]", "SFIXED_POINT_8", (m, n), weights.astype(np.int8), Encoding(tuple(scales), (0,) * m, axis=0))
    out = Tensor("out[0]", "UFIXED_POINT_8", (n, m), None, Encoding((1.0,), (0,)))
    return Case(op="FullyConnected", inputs=[x, w], params={"keep_dims": Param("keep_dims", "BOOL_8", False)},
                outputs=[out], config="UFIXED_POINT_8+SFIXED_POINT_8/axis+SFIXED_POINT_32")  # fmt: skip


def test_model_reproduces_its_findings_case_to_the_code() -> None:
    got = models.check(finding_case(), [CODES], MODEL)
    assert got["matches"] and got["max_steps"] == 0, got


def test_model_refuses_the_spec_answer_and_a_dropped_low_byte() -> None:
    from cases.quant import quantize
    from reference.expected import expected

    c = finding_case()
    spec = quantize(expected(c)[0], c.outputs[0].encoding, c.outputs[0].dtype)
    assert not models.check(c, [spec], MODEL)["matches"]
    dropped = ((CODES.astype(np.int64) >> 8) << 8).astype(np.uint16)  # bench mutants' 16-bit low byte cleared
    assert not models.check(c, [dropped], MODEL)["matches"]


def test_unit_2k_shows_row_k_and_unit_2k_plus_1_its_high_bytes() -> None:
    """Measured (UFIXED_POINT_8, an identity in[0]): with scales [0.5, 0.25, 1, 0.75] the largest is 1, so the 16-bit
    weights are the codes; unit 0 is row 0 at unit 0's scale 0.5 (0.5, 2, 3.5, 5, 6.5 rounded half up), unit 1 row 0's
    high bytes (0), unit 2 row 1 at scale 1, unit 3 row 1's high bytes; rows 2 and 3 are never read."""
    w = np.array([[1, 4, 7, 10, 13], [16, 19, 22, 25, 28], [31, 34, 37, 40, 43], [46, 49, 52, 55, 58]])
    measured = np.array([[1, 2, 4, 5, 7], [0] * 5, [16, 19, 22, 25, 28], [0] * 5])
    np.testing.assert_array_equal(htp_per_axis_dynamic_codes(identity_case(w, [0.5, 0.25, 1.0, 0.75])).T, measured)


def test_weights_are_requantized_in_binary32_so_a_near_half_can_round_down() -> None:
    """Measured: code 26 at a largest scale of 0.04203706466379712 is 618.50180 exactly, and the HTP gives 618 (low
    byte 106), as 26 x float32(1 / s_max) + 32768 in binary32 does; the exact quotient would give 619."""
    w = np.array([[26, 1], [1, 1]])
    w16, channels = weight_bytes(identity_case(w, [0.04203706466379712, 0.01]))
    assert w16[0, 0] == 618 and channels[0, 0] == 618 - 512 and channels[1, 0] == 2


def test_sixteen_bit_weights_past_32639_saturate_both_bytes() -> None:
    """Measured: code 33 at scale 0.001 (33000, past the 16-bit grid) gives low and high bytes of 127 each; -127
    (-127000) gives -32768, i.e. low byte 0 and high byte -128."""
    w = np.array([[33, -127], [1, 1]])
    w16, channels = weight_bytes(identity_case(w, [0.001, 0.001]))
    assert channels[0].tolist() == [127, 0] and channels[1].tolist() == [127, -128]
    assert w16[0].tolist() == [32639, -32768]


@pytest.mark.parametrize("change", ["static weights", "a bias", "4-bit weights", "per-tensor weights"])
def test_model_covers_nothing_it_was_not_measured_on(change: str) -> None:
    c = finding_case()
    x, w = c.inputs[0], c.inputs[1]
    if change == "static weights":
        c = replace(c, inputs=[x, replace(w, static=True)])
    elif change == "a bias":
        m = w.shape[0]
        b = Tensor("in[2]", "SFIXED_POINT_32", (m,), np.zeros(m, np.int32), Encoding((1e-6,) * m, (0,) * m, axis=0))
        c = replace(c, inputs=[x, w, b])
    elif change == "4-bit weights":
        c = replace(c, inputs=[x, replace(w, encoding=replace(w.encoding, bitwidth=4))])
    else:
        c = replace(c, inputs=[x, replace(w, encoding=Encoding((0.01,), (0,)))])
    with pytest.raises(ValueError):
        htp_per_axis_dynamic_codes(c)
    assert not models.check(c, [CODES], MODEL)["matches"]


# fullyconnected-16x8-zero-point-below-128-near-half-codes's case on the simulator (seed 1's edge c30e58fbfa376772:
# [4] x [5, 4] given at run time, in[1]'s zero point 94), out[0]'s codes
NEAR_HALF = {"symptom": "htp-16x8-weights-requantized-near-half-codes-either-way"}
NEAR_HALF_CODES = np.array([59954, 65205, 21138, 26790, 0], np.uint16)


def near_half_case() -> Case:
    return Case.load(REPO / "findings" / "cases" / "FullyConnected" /
                     "fullyconnected-16x8-zero-point-below-128-near-half-codes.json")  # fmt: skip


def test_the_16x8_case_has_one_code_near_a_half_in_row_2() -> None:
    """in[1][2] minus the zero point is [48, 137, 30, -73]: 48 x 127/137 = 44.4964, the HTP's 45."""
    from reference.convolution_models_b import _near_half_flips

    assert [index for _, index, _ in _near_half_flips(near_half_case())] == [(2, 0)]


def test_the_near_half_symptom_takes_the_fully_connected_case_the_plain_model_does_not() -> None:
    c = near_half_case()
    assert models.check(c, [NEAR_HALF_CODES], NEAR_HALF)["matches"] is True
    assert models.check(c, [NEAR_HALF_CODES], {"diagnosis": "htp-16x8-weights-requantized"})["matches"] is False


def test_the_near_half_symptom_refuses_an_output_planted_off_where_no_near_half_code_reaches() -> None:
    """Output 2 is the only one row 2 (the near-half code's) reaches; 150 steps on output 3 stay a failure."""
    c = near_half_case()
    planted = NEAR_HALF_CODES.astype(np.int64)
    planted[3] += 150
    assert models.check(c, [planted.astype(np.uint16)], NEAR_HALF)["matches"] is False


@pytest.mark.parametrize(("shape", "hangs"), [((1, 1), True), ((4, 1), True), ((1, 2), False), ((2, 2), False)])
def test_the_finalize_hang_finding_takes_weights_of_one_input_element(tmp_path: Path, shape: tuple[int, int],
                                                                      hangs: bool) -> None:  # fmt: skip
    """fullyconnected-per-axis-one-weight-finalize-hang: measured, per-axis weights [m, 1] hang at graphFinalize for
    m = 1, 2, 3, 4, 8; [1, 2], [1, 3] and [2, 2] run."""
    from reports.expectations import Expectations, case_env

    m, n = shape
    c = identity_case(np.ones((m, n), np.int64), [0.1] * m)
    path = c.save(tmp_path / "case")
    entry = next(e for e in Expectations.load(REPO / "findings" / "qnn-htp.yaml").entries
                 if e.info.get("id") == "fullyconnected-per-axis-one-weight-finalize-hang")  # fmt: skip
    assert entry.when_holds(case_env(Path(path), "FullyConnected")) is hangs


# fullyconnected-per-axis-dynamic-weights-byte-channels-v73's case at SoC 43 (v73): seed 0's edge 16707e2bea1a686a
V73 = {"diagnosis": "htp-per-axis-dynamic-weights-byte-channels-v73"}
V73_CODES = np.array([[78, 99, 0, 65], [35, 91, 0, 61], [50, 97, 0, 58], [73, 90, 18, 68], [39, 77, 0, 64]], np.uint8)


def v73_case() -> Case:
    return Case.load(REPO / "findings" / "cases" / "FullyConnected" /
                     "fullyconnected-per-axis-dynamic-weights-byte-channels-v73.json")  # fmt: skip


def test_v73_model_reproduces_its_findings_case_to_the_code() -> None:
    got = models.check(v73_case(), [V73_CODES], V73)
    assert got["matches"] and got["max_steps"] == 0, got


def test_v73_adds_the_output_offset_that_v68_drops() -> None:
    """The two generations differ by out[0]'s offset (-76 here: 76 codes, before clipping at 0 and 255)."""
    c = v73_case()
    v68 = htp_per_axis_dynamic_codes(c)
    v73 = htp_per_axis_dynamic_codes(c, v73=True)
    assert not models.check(c, [V73_CODES], MODEL)["matches"]
    assert np.all(v73 >= v68) and np.max(v73 - v68) == 76


def test_v73_model_refuses_the_spec_answer_and_16_bit_activations() -> None:
    from cases.quant import quantize
    from reference.expected import expected

    c = v73_case()
    spec = quantize(expected(c)[0], c.outputs[0].encoding, c.outputs[0].dtype)
    assert not models.check(c, [spec], V73)["matches"]
    with pytest.raises(ValueError):
        htp_per_axis_dynamic_codes(finding_case(), v73=True)
