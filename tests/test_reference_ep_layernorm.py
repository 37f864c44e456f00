"""A 16-bit LayerNorm as the HTP computes the ONNX Runtime QNN EP's float graph for it (finding
ep-layernorm-16bit-as-float16-graph): the model centred-in-float16 against the EP's measured codes."""

from pathlib import Path

import numpy as np

# The finding's case (main job cbb50dd5c0bc6758) through the EP (onnxruntime-qnn 2.7.0, simulator), out[0] [1, 4, 4, 3]
EP_CODES = np.array([23178, 65531, 30696, 41317, 26182, 28544, 38076, 32730, 29069, 37014, 43882, 26642, 14702, 39434,
                     44522, 37912, 41324, 26707, 41776, 7, 35754, 41868, 3576, 34645, 36587, 29240, 31181, 15253, 52427,
                     40372, 23480, 8719, 46857, 21184, 11527, 47754, 14361, 46488, 42754, 14492, 50641, 41455, 23991,
                     4573, 47670, 42124, 5806, 33819], np.uint16)  # fmt: skip
MODEL = {"diagnosis": "centred-in-float16"}
WORST = (0, 2, 0, 1)  # the element 71 steps off the spec: x near its row's mean


def _case():  # noqa: ANN202 - a Case
    from cases.case import Case

    return Case.load(Path(__file__).resolve().parents[1] / "findings/cases/LayerNorm/"
                     "ep-layernorm-16bit-as-float16-graph.json")  # fmt: skip


def test_float16_layernorm_model_reproduces_the_eps_codes_of_its_finding() -> None:
    from reference import models

    c = _case()
    assert models.check(c, [EP_CODES.reshape(c.outputs[0].shape)], MODEL)["matches"]


def test_float16_layernorm_model_refuses_the_spec_and_a_planted_error() -> None:
    from cases.quant import quantize
    from reference import models
    from reference.expected import expected

    c = _case()
    spec = quantize(expected(c)[0], c.outputs[0].encoding, c.outputs[0].dtype)
    assert not models.check(c, [spec], MODEL)["matches"]
    planted = EP_CODES.reshape(c.outputs[0].shape).copy()
    planted[WORST] -= 100  # 100 steps: twice the 16-bit budget
    assert not models.check(c, [planted], MODEL)["matches"]
