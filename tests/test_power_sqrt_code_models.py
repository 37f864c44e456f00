"""Models of the HTP simulator's 16-bit Power and SquareRoot as ElementWiseBinary POWER and ElementWiseUnary SQRT reach
them (issue 40, session 18: bands become models): each reproduces its finding's case from the backend's recorded
output codes (tests/data/got/<finding>.npz), and refuses the spec's answer and a planted error."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cases.case import Case, Param
from reference import models

REPO = Path(__file__).resolve().parents[1]
POWER = {"diagnosis": "base-floored-to-a-32768th-exponent-on-a-256th-grid"}
SQRT = {"diagnosis": "code-times-rsqrt-from-a-line-table-on-a-1024th-grid"}


def finding_case(op: str, finding: str) -> Case:
    return Case.load(REPO / "findings" / "cases" / op / f"{finding}.json")


def recorded(finding: str) -> np.ndarray:
    return np.load(REPO / "tests" / "data" / "got" / f"{finding}.npz")["out0"]


def low_byte_dropped(codes: np.ndarray) -> np.ndarray:
    """bench mutants' planted 16-bit bug: the low 8 bits of every result code cleared."""
    return ((codes.astype(np.int64) >> 8) << 8).astype(codes.dtype)


def spec_codes(c: Case) -> np.ndarray:
    from cases.quant import quantize
    from reference.expected import expected

    return quantize(expected(c)[0], c.outputs[0].encoding, c.outputs[0].dtype)


def with_operation(c: Case, operation: int) -> Case:
    c.params["operation"] = Param("operation", c.params["operation"].dtype, operation)
    return c


def test_binary_power_model_reproduces_its_findings_case() -> None:
    c = finding_case("ElementWiseBinary", "binary-power-u16-inaccurate")
    assert models.check(c, [recorded("binary-power-u16-inaccurate")], POWER)["matches"]


def test_binary_power_model_refuses_the_spec_answer_and_a_dropped_low_byte() -> None:
    c = finding_case("ElementWiseBinary", "binary-power-u16-inaccurate")
    assert not models.check(c, [spec_codes(c)], POWER)["matches"]
    assert not models.check(c, [low_byte_dropped(recorded("binary-power-u16-inaccurate"))], POWER)["matches"]


def test_binary_power_model_refuses_another_operation() -> None:
    c = with_operation(finding_case("ElementWiseBinary", "binary-power-u16-inaccurate"), 0)  # ADD
    result = models.check(c, [recorded("binary-power-u16-inaccurate")], POWER)
    assert not result["matches"] and "POWER only" in result["error"]


def test_sqrt_of_codes_is_exact_at_powers_of_four() -> None:
    from reference.elementwise_models_b import sqrt_of_codes

    np.testing.assert_array_equal(sqrt_of_codes(np.array([1.0, 4.0, 16.0, 4096.0, 65536.0])), [1, 2, 4, 64, 256])


def test_sqrt_of_codes_holds_one_1024th_of_rsqrt_over_a_run_of_codes() -> None:
    # measured: codes 4098-4104 (1.0005-1.002 at a 4096th) come back as code x 1023/1024 / 64, sqrt's slope twice over
    from reference.elementwise_models_b import sqrt_of_codes

    codes = np.arange(4098.0, 4105.0)
    np.testing.assert_allclose(sqrt_of_codes(codes), codes * 1023 / 1024 / 64)


def test_sqrt_of_codes_leaves_a_negative_code_open_and_takes_zero_to_zero() -> None:
    from reference.elementwise_models_b import sqrt_of_codes

    got = sqrt_of_codes(np.array([-4.0, 0.0]))
    assert np.isnan(got[0]) and got[1] == 0


@pytest.mark.parametrize(("op", "finding"), [("ElementWiseSquareRoot", "squareroot-16bit-inaccurate"),
                                             ("ElementWiseUnary", "unary-sqrt-16bit-inaccurate")])  # fmt: skip
def test_sqrt_model_reproduces_its_findings_case(op: str, finding: str) -> None:
    c = finding_case(op, finding)
    result = models.check(c, [recorded(finding)], SQRT)
    assert result["matches"] and result["max_steps"] <= 2


@pytest.mark.parametrize(("op", "finding"), [("ElementWiseSquareRoot", "squareroot-16bit-inaccurate"),
                                             ("ElementWiseUnary", "unary-sqrt-16bit-inaccurate")])  # fmt: skip
def test_sqrt_model_refuses_the_spec_answer_and_a_dropped_low_byte(op: str, finding: str) -> None:
    c = finding_case(op, finding)
    assert not models.check(c, [spec_codes(c)], SQRT)["matches"]
    assert not models.check(c, [low_byte_dropped(recorded(finding))], SQRT)["matches"]


def test_unary_sqrt_model_refuses_another_operation() -> None:
    c = with_operation(finding_case("ElementWiseUnary", "unary-sqrt-16bit-inaccurate"), 5)
    result = models.check(c, [recorded("unary-sqrt-16bit-inaccurate")], SQRT)
    assert not result["matches"] and "SQRT only" in result["error"]
