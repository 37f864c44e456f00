"""The model of finding scatterelements-fixed-add-updates-on-data-grid (reference/indexing.py): fixed-point
ScatterElements ADD reads in[2]'s codes on in[0]'s grid."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from cases.case import Case
from reference import load_families
from reference.models import check

REPO = Path(__file__).resolve().parents[1]
OWN_CASE = REPO / "findings/cases/ScatterElements/scatterelements-fixed-add-updates-on-data-grid.json"
MODEL = {"diagnosis": "updates-read-on-data-grid"}
# What the HTP simulator (QNN 2.51) returned for the finding's case, the same in every run.
HTP_CODES = np.array([[229, 203, 87], [220, 180, 63], [255, 255, 255]], np.uint8)


def test_the_model_reproduces_the_findings_case() -> None:
    load_families()
    c = Case.load(OWN_CASE)
    assert check(c, [HTP_CODES], MODEL)["matches"] is True


def test_the_model_refuses_updates_read_on_their_own_grid() -> None:
    """The spec's answer (each update on its own grid, the planted error for this model) is 98 steps from it."""
    from cases.quant import quantize
    from reference.expected import expected

    load_families()
    c = Case.load(OWN_CASE)
    spec_codes = quantize(np.asarray(expected(c)[0]), c.outputs[0].encoding, c.outputs[0].dtype)
    assert check(c, [spec_codes], MODEL)["matches"] is False


def test_the_model_is_the_reference_when_data_and_updates_share_a_grid() -> None:
    from dataclasses import replace

    from reference.expected import expected
    from tests.reference_helpers import modelled

    load_families()
    c = Case.load(OWN_CASE)
    one_grid = replace(c, inputs=[c.inputs[0], c.inputs[1], replace(c.inputs[2], encoding=c.inputs[0].encoding)])
    np.testing.assert_allclose(modelled(one_grid, "updates-read-on-data-grid")[0], expected(one_grid)[0])
