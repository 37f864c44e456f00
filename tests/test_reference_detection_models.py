"""The models of the detection ops' known deviations (reference/detection_models.py, reference.models): what a
backend with the bug returns, each checked on a small case worked out by hand. Split from test_reference_detection.py,
which checks the references themselves."""

from __future__ import annotations

import numpy as np
import pytest

import reference


def _detection_case(scores, loc, anchors, **params):
    from tests.reference_helpers import case

    batch, n, classes = np.shape(scores)
    defaults = {"confidence_threshold": 0.5, "iou_threshold": 0.5, "delta_scaling_factors": [1.0, 1.0, 1.0, 1.0],
                "background_class_idx": 0, "nms_type": 0, "share_location": True}  # fmt: skip
    cap = n * classes
    return case("DetectionOutput", [np.asarray(scores, np.float32), np.asarray(loc, np.float32),
                                    np.asarray(anchors, np.float32)], {**defaults, **params},
                [("FLOAT_32", (batch, cap)), ("FLOAT_32", (batch, cap, 4)), ("INT_32", (batch, cap)),
                 ("UINT_32", (batch,))])  # fmt: skip


def test_detection_output_model_decodes_every_batch_against_the_first_anchors() -> None:
    """Two batches of one anchor each, zero deltas: batch 1's box is batch 0's anchor (rows 0), where its own (row 1)
    belongs."""
    from tests.reference_helpers import modelled

    c = _detection_case([[[0.1, 0.9]], [[0.1, 0.8]]], np.zeros((2, 1, 4)), [[1, 1, 2, 2], [10, 10, 4, 4]],
                        output_background=False)  # fmt: skip
    boxes = modelled(c, "batches-decoded-against-first-anchors")[1]
    np.testing.assert_array_equal(boxes[:, 0], [[0, 0, 2, 2], [0, 0, 2, 2]])
    right = reference.run("DetectionOutput", [t.data for t in c.inputs], {k: p.value for k, p in c.params.items()},
                          [t.shape for t in c.outputs])[1]  # fmt: skip
    np.testing.assert_array_equal(right[1, 0], [8, 8, 12, 12])


def test_detection_output_model_keeps_the_background_labelled_minus_one() -> None:
    """use_bg_in_nms with output_background false: the background detection (0.835, anchor 0) stays first with label
    -1, the class-1 one (0.647) follows with label 0, and the count is 2 where 1 belongs."""
    from tests.reference_helpers import modelled

    scores = [[[0.835, 0.1], [0.1, 0.647]]]
    anchors = [[1, 1, 2, 2], [9, 9, 2, 2]]
    c = _detection_case(scores, np.zeros((1, 2, 4)), anchors, use_bg_in_nms=True, output_background=False)
    out = modelled(c, "background-kept-labelled-minus-one")
    np.testing.assert_allclose(out[0][0, :2], [0.835, 0.647], rtol=1e-6)
    np.testing.assert_array_equal(out[2][0, :2], [-1, 0])
    np.testing.assert_array_equal(out[3], [2])


def test_detection_output_model_labels_every_kept_detection_class_minus_background_minus_one() -> None:
    """Background 1 of 3 classes (measured on the simulator): class 0 comes back -2, the background -1, class 2 0."""
    from tests.reference_helpers import modelled

    scores = [[[0.9, 0.1, 0.1], [0.1, 0.8, 0.1], [0.1, 0.1, 0.7]]]
    anchors = [[1, 1, 2, 2], [9, 9, 2, 2], [19, 19, 2, 2]]
    c = _detection_case(scores, np.zeros((1, 3, 4)), anchors, use_bg_in_nms=True, output_background=False,
                        background_class_idx=1)  # fmt: skip
    out = modelled(c, "background-kept-labelled-minus-one")
    np.testing.assert_array_equal(out[2][0, :3], [-2, -1, 0])
    np.testing.assert_array_equal(out[3], [3])


def test_detection_output_model_labels_class_minus_background_minus_one_with_the_background_dropped() -> None:
    """REGULAR, background 1 of 3 classes, use_bg_in_nms and output_background false (measured on the simulator): the
    background's detection is dropped as the reference drops it, class 0 comes back -2 and class 2 0 where the reference
    numbers them 0 and 1; with background 0 the model is the reference."""
    from tests.reference_helpers import modelled

    scores = [[[0.9, 0.1, 0.1], [0.1, 0.8, 0.1], [0.1, 0.1, 0.7]]]
    anchors = [[1, 1, 2, 2], [9, 9, 2, 2], [19, 19, 2, 2]]
    c = _detection_case(scores, np.zeros((1, 3, 4)), anchors, nms_type=1, output_background=False,
                        background_class_idx=1)  # fmt: skip
    out = modelled(c, "labels-class-minus-background-minus-one")
    np.testing.assert_allclose(out[0][0, :2], [0.9, 0.7], rtol=1e-6)
    np.testing.assert_array_equal(out[2][0, :2], [-2, 0])
    np.testing.assert_array_equal(out[3], [2])
    right = reference.run("DetectionOutput", [t.data for t in c.inputs], {k: p.value for k, p in c.params.items()},
                          [t.shape for t in c.outputs])  # fmt: skip
    np.testing.assert_array_equal(right[2][0, :2], [0, 1])
    first = _detection_case(scores, np.zeros((1, 3, 4)), anchors, nms_type=1, output_background=False)
    for got, want in zip(modelled(first, "labels-class-minus-background-minus-one"),
                         reference.run("DetectionOutput", [t.data for t in first.inputs],
                                       {k: p.value for k, p in first.params.items()}, [t.shape for t in first.outputs]),
                         strict=True):  # fmt: skip
        np.testing.assert_array_equal(got, want)


def test_detection_output_fast_model_writes_the_ranked_classes_of_each_kept_anchor_and_counts_anchors() -> None:
    """FAST, three anchors far apart, classes 1 and 2 above the threshold on anchors 0 and 1 (measured on the
    simulator): detection_limit 2 writes both classes of each kept anchor and counts 2 (the anchors) where the
    reference counts 4; the default -1 writes every class, the background (0.04, below the threshold) too; with
    output_background false the background is not ranked and the classes come back labelled c - 2."""
    from tests.reference_helpers import modelled

    scores = [[[0.04, 0.8, 0.6], [0.04, 0.7, 0.5], [0.04, 0.08, 0.1]]]
    anchors = [[1, 1, 2, 2], [9, 9, 2, 2], [19, 19, 2, 2]]
    two = _detection_case(scores, np.zeros((1, 3, 4)), anchors, confidence_threshold=0.3, detection_limit=2)
    out = modelled(two, "fast-classes-per-anchor-count-anchors")
    np.testing.assert_allclose(out[0][0, :4], [0.8, 0.6, 0.7, 0.5], rtol=1e-6)
    np.testing.assert_array_equal(out[2][0, :4], [1, 2, 1, 2])
    np.testing.assert_array_equal(out[3], [2])
    np.testing.assert_array_equal(out[1][0, 2], [8, 8, 10, 10])
    right = reference.run("DetectionOutput", [t.data for t in two.inputs], {k: p.value for k, p in two.params.items()},
                          [t.shape for t in two.outputs])  # fmt: skip
    np.testing.assert_array_equal(right[3], [4])
    every = modelled(_detection_case(scores, np.zeros((1, 3, 4)), anchors, confidence_threshold=0.3),
                     "fast-classes-per-anchor-count-anchors")  # fmt: skip
    np.testing.assert_allclose(every[0][0, :6], [0.8, 0.6, 0.04, 0.7, 0.5, 0.04], rtol=1e-6)
    np.testing.assert_array_equal(every[2][0, :6], [1, 2, 0, 1, 2, 0])
    np.testing.assert_array_equal(every[3], [2])
    hidden = modelled(_detection_case(scores, np.zeros((1, 3, 4)), anchors, confidence_threshold=0.3,
                                      output_background=False), "fast-classes-per-anchor-count-anchors")  # fmt: skip
    np.testing.assert_array_equal(hidden[2][0, :4], [-1, 0, -1, 0])
    np.testing.assert_array_equal(hidden[3], [2])
    # background 1 of 4, output_background false: class 0 (0.8 on anchor 0) is never ranked, classes 2 and 3 come back
    # labelled -2 and -1 (several rows), or 0 and 1 with detection_limit 1
    four = [[[0.8, 0.04, 0.2, 0.35], [0.5, 0.04, 0.7, 0.25], [0.04, 0.08, 0.1, 0.02]]]
    after = modelled(_detection_case(four, np.zeros((1, 3, 4)), anchors, confidence_threshold=0.3,
                                     output_background=False, background_class_idx=1),
                     "fast-classes-per-anchor-count-anchors")  # fmt: skip
    np.testing.assert_allclose(after[0][0, :4], [0.7, 0.25, 0.35, 0.2], rtol=1e-6)
    np.testing.assert_array_equal(after[2][0, :4], [-2, -1, -1, -2])
    np.testing.assert_array_equal(after[3], [2])
    one = modelled(_detection_case(four, np.zeros((1, 3, 4)), anchors, confidence_threshold=0.3, detection_limit=1,
                                   output_background=False, background_class_idx=1),
                   "fast-classes-per-anchor-count-anchors")  # fmt: skip
    np.testing.assert_array_equal(one[2][0, :2], [0, 1])
    with pytest.raises(ValueError, match="share_location false"):
        modelled(_detection_case(scores, np.zeros((1, 9, 4)), anchors, share_location=False),
                 "fast-classes-per-anchor-count-anchors")  # fmt: skip


def test_detection_output_fast_unshared_model_reads_box_row_a_and_leaves_the_count_open() -> None:
    """FAST, share_location false, 2 anchors, 2 classes, output_background false (one row per anchor; measured on the
    simulator): anchor 0 reads in[1]'s row 0 (zeros: its own anchor) and anchor 1 row 1 (dy 0.5: shifted by half its
    height), where the reference reads rows 1 and 3; the rows past those two and the count are open (NaN). Several
    rows per anchor, or several batches, are not modelled."""
    from tests.reference_helpers import modelled

    loc = np.zeros((1, 4, 4))
    loc[0, 1, 0] = 0.5
    anchors = [[1, 1, 2, 2], [9, 9, 2, 2]]
    c = _detection_case([[[0.04, 0.8], [0.04, 0.7]]], loc, anchors, confidence_threshold=0.3, share_location=False,
                        output_background=False)  # fmt: skip
    out = modelled(c, "fast-unshared-anchors-past-scores")
    np.testing.assert_allclose(out[0][0, :2], [0.8, 0.7], rtol=1e-6)
    np.testing.assert_allclose(out[1][0, :2], [[0, 0, 2, 2], [9, 8, 11, 10]])
    np.testing.assert_array_equal(out[2][0, :2], [0, 0])
    assert np.isnan(out[0][0, 2:]).all() and np.isnan(out[1][0, 2:]).all() and np.isnan(out[3]).all()
    right = reference.run("DetectionOutput", [t.data for t in c.inputs], {k: p.value for k, p in c.params.items()},
                          [t.shape for t in c.outputs])  # fmt: skip
    np.testing.assert_allclose(right[1][0, :2], [[1, 0, 3, 2], [8, 8, 10, 10]])
    several = _detection_case([[[0.04, 0.8, 0.6], [0.04, 0.7, 0.5]]], np.zeros((1, 6, 4)), anchors,
                              confidence_threshold=0.3, share_location=False)  # fmt: skip
    with pytest.raises(ValueError, match="several batches or rows per anchor"):
        modelled(several, "fast-unshared-anchors-past-scores")


def test_detection_output_fast_model_ranks_the_background_with_use_bg_in_nms_false() -> None:
    """FAST, use_bg_in_nms false, output_background true: anchor 1's background (0.8) outranks its class 1 (0.3) and is
    output; with output_background false the model is the reference (the background is ignored, as measured)."""
    from tests.reference_helpers import modelled

    scores = [[[0.1, 0.9], [0.8, 0.3]]]
    anchors = [[1, 1, 2, 2], [9, 9, 2, 2]]
    c = _detection_case(scores, np.zeros((1, 2, 4)), anchors, confidence_threshold=0.2, output_background=True)
    out = modelled(c, "fast-nms-ranks-background")
    np.testing.assert_allclose(out[0][0, :2], [0.9, 0.8], rtol=1e-6)
    np.testing.assert_array_equal(out[2][0, :2], [1, 0])
    assert list(reference.run("DetectionOutput", [t.data for t in c.inputs], {k: p.value for k, p in c.params.items()},
                              [t.shape for t in c.outputs])[2][0, :2]) == [1, 1]  # fmt: skip
    hidden = _detection_case(scores, np.zeros((1, 2, 4)), anchors, confidence_threshold=0.2, output_background=False)
    with_others = modelled(hidden, ["scores-as-input-codes", "fast-nms-ranks-background"])  # a float case: no codes
    right = reference.run("DetectionOutput", [t.data for t in hidden.inputs],
                          {k: p.value for k, p in hidden.params.items()}, [t.shape for t in hidden.outputs])
    for got, want in zip(with_others, right, strict=True):
        np.testing.assert_allclose(got, want)


def test_detection_output_models_add_up_where_the_case_meets_their_conditions() -> None:
    """A diagnosis list: the first model always, the others where they apply. share_location false with the background
    kept: the kept background detection's box is read from the per-class anchor row; with share_location true the
    unshared model does not apply and the list is the background model alone."""
    from tests.reference_helpers import modelled

    scores = [[[0.9, 0.1], [0.1, 0.1]]]
    anchors = [[1, 1, 2, 2], [5, 5, 2, 2]]
    c = _detection_case(scores, np.zeros((1, 4, 4)), anchors, share_location=False, use_bg_in_nms=True,
                        output_background=False)  # fmt: skip
    both = modelled(c, ["background-kept-labelled-minus-one", "unshared-boxes-against-anchor-rows"])
    np.testing.assert_array_equal(both[2][0, :1], [-1])
    np.testing.assert_array_equal(both[1][0, 0], [0, 0, 2, 2])  # anchor 0, class 0: row 0
    shared = _detection_case(scores, np.zeros((1, 2, 4)), anchors, use_bg_in_nms=True, output_background=False)
    for got, want in zip(modelled(shared, ["background-kept-labelled-minus-one", "unshared-boxes-against-anchor-rows"]),
                         modelled(shared, "background-kept-labelled-minus-one"), strict=True):  # fmt: skip
        np.testing.assert_array_equal(got, want)


def test_a_diagnosis_list_names_registered_models_of_an_op_that_combines_them() -> None:
    from reference import models

    both = {"diagnosis": ["scores-as-input-codes", "fast-nms-ranks-background"]}
    assert models.problems(both, "DetectionOutput") == []
    assert "no model 'nope'" in models.problems({"diagnosis": ["scores-as-input-codes", "nope"]}, "DetectionOutput")[0]
    assert "different names" in models.problems({"diagnosis": ["a", "a"]})[0]
    assert "no combination" in models.problems({"diagnosis": ["sign-bit-flipped", "outer-rows-read-as-first"]},
                                               "Gather")[0]  # fmt: skip


def test_detection_output_model_decodes_unshared_boxes_against_anchor_row_a_times_classes_plus_c() -> None:
    """Two anchors, two classes, zero deltas: anchor 0 class 1 reads in[2]'s row 1 (the second anchor), anchor 1 class 1
    reads row 3, past in[2] (open)."""
    from tests.reference_helpers import modelled

    scores = [[[0.1, 0.9], [0.1, 0.1]]]
    c = _detection_case(scores, np.zeros((1, 4, 4)), [[1, 1, 2, 2], [5, 5, 2, 2]], share_location=False,
                        output_background=True)  # fmt: skip
    np.testing.assert_array_equal(modelled(c, "unshared-boxes-against-anchor-rows")[1][0, 0], [4, 4, 6, 6])
    past = _detection_case([[[0.1, 0.1], [0.1, 0.9]]], np.zeros((1, 4, 4)), [[1, 1, 2, 2], [5, 5, 2, 2]],
                           share_location=False, output_background=True)  # fmt: skip
    assert np.isnan(modelled(past, "unshared-boxes-against-anchor-rows")[1][0, 0]).all()


def test_detection_output_model_writes_the_scores_codes_of_in0() -> None:
    """A score of code 100 at 1/255 read through out[0]'s 2/255: 200/255."""
    from tests.reference_helpers import case, modelled

    enc_in, enc_out = ([1 / 255], [0]), ([2 / 255], [0])
    c = case("DetectionOutput", [("UFIXED_POINT_8", np.array([[[0, 100]]], np.uint8), enc_in),
                                 ("UFIXED_POINT_8", np.full((1, 1, 4), 128, np.uint8), ([1 / 128], [-128])),
                                 ("UFIXED_POINT_8", np.array([[10, 10, 20, 20]], np.uint8), ([0.1], [0]))],
             {"confidence_threshold": 0.3, "iou_threshold": 0.5, "delta_scaling_factors": [1.0, 1.0, 1.0, 1.0],
              "output_background": False},
             [("UFIXED_POINT_8", (1, 1), enc_out), ("FLOAT_32", (1, 1, 4)), ("INT_32", (1, 1)), ("UINT_32", (1,))])
    np.testing.assert_allclose(modelled(c, "scores-as-input-codes")[0], [[200 / 255]])


def test_nms_model_leaves_the_class_and_box_of_padding_rows_open() -> None:
    from tests.reference_helpers import case, modelled

    boxes = np.array([[[0, 0, 1, 1], [0, 0, 1, 1], [5, 5, 6, 6]]], np.float32)
    scores = np.array([[[0.1, 0.1, 0.9], [0.1, 0.1, 0.1], [0.1, 0.1, 0.1]]], np.float32)
    c = case("NonMaxSuppression", [boxes, scores], {"iou_threshold": 0.5, "score_threshold": 0.5,
                                                    "max_boxes_selected": 1},
             [("INT_32", (3, 3)), ("UINT_32", (1,))])  # fmt: skip
    rows = modelled(c, "padding-rows-open")[0]
    np.testing.assert_array_equal(rows[0], [0, 0, 2])
    assert np.isnan(rows[1:, 1:]).all() and (rows[1:, 0] == 0).all()


def _multiclassnms_shown() -> list[np.ndarray]:
    """What the HTP gave at v73 for finding multiclassnms-f32-per-box-rows's case (rows after the fourth: leftovers)."""
    b0, b2 = [0, 0, 10, 10], [20, 20, 30, 30]
    boxes = np.array([[b0, b0, b2, b2, [0] * 4, [0] * 4]], np.float32)
    scores = np.array([[0.9, 0.2, 0.6, 0.1, 0, 0]], np.float32)
    classes = np.array([[0, 1, 1, 0, 0, 0]], np.int32)
    features = np.array([[[0, 1], [0, 1], [4, 5], [4, 5], [0, 0], [0, 0]]], np.float32)
    return [boxes, scores, classes, np.array([2], np.uint32), features]


def test_multiclassnms_per_box_rows_model_reproduces_its_finding_case() -> None:
    """Boxes 0 and 1 overlap (IoU 0.81): box 0 (best score 0.9) prunes box 1 (0.8) although their best classes differ;
    boxes 0 and 2 give a row per class each, in descending score, 0.2 and 0.1 included, and out[3] counts 2 boxes."""
    from cases.case import Case
    from reference import models

    case = Case.load("findings/cases/MultiClassNms/multiclassnms-f32-per-box-rows.json")
    assert models.check(case, _multiclassnms_shown(), {"diagnosis": "per-box-rows"})["matches"] is True


def test_multiclassnms_per_box_rows_model_refuses_the_spec_answer_and_a_planted_error() -> None:
    from cases.case import Case
    from reference import models
    from reference.expected import expected

    case = Case.load("findings/cases/MultiClassNms/multiclassnms-f32-per-box-rows.json")
    model = {"diagnosis": "per-box-rows"}
    assert models.check(case, [np.asarray(a) for a in expected(case)], model)["matches"] is False
    planted = _multiclassnms_shown()
    planted[2][0, :2] = [1, 0]  # box 0's rows with their classes swapped
    assert models.check(case, planted, model)["matches"] is False
    soft = Case.load("findings/cases/MultiClassNms/multiclassnms-f32-soft-nms-execute.json")
    assert "error" in models.check(soft, _multiclassnms_shown(), model)  # soft NMS: not measured, not covered


def test_the_fast_rows_per_anchor_model_refuses_a_regular_nms_case():
    """A REGULAR case is not the FAST path the model describes: the model says so (ValueError), not UnboundLocalError
    from half-set FAST state (seed 2's edge case e828a4a33d0eff9e raised that)."""
    from dataclasses import replace
    from pathlib import Path

    from cases.case import Case, Param
    from reference.detection_models import detection_output_fast_classes_per_anchor_count_anchors as fast_model

    found = Path(__file__).resolve().parents[1] / "findings" / "cases" / "DetectionOutput"
    case = Case.load(found / "detectionoutput-fast-count-anchors.json")
    regular = replace(case, params={**case.params, "nms_type": Param("nms_type", "UINT_32", 1)})
    fast_model(case)  # its own case: modelled
    with pytest.raises(ValueError, match="not a FAST case"):
        fast_model(regular)


def _fixed_two_batch_case(out0_scale: float):
    """UFIXED_POINT_8, two batches of one anchor, zero deltas (code 128 of 1/128 at -128), in[0] at 1/255."""
    from tests.reference_helpers import case

    return case("DetectionOutput", [("UFIXED_POINT_8", np.array([[[0, 100]], [[0, 120]]], np.uint8), ([1 / 255], [0])),
                                    ("UFIXED_POINT_8", np.full((2, 1, 4), 128, np.uint8), ([1 / 128], [-128])),
                                    ("UFIXED_POINT_8", np.array([[10, 10, 20, 20], [50, 50, 20, 20]], np.uint8),
                                     ([0.1], [0]))],
                {"confidence_threshold": 0.3, "iou_threshold": 0.5, "delta_scaling_factors": [1.0, 1.0, 1.0, 1.0],
                 "nms_type": 1, "output_background": False},
                [("UFIXED_POINT_8", (2, 1), ([out0_scale], [0])), ("FLOAT_32", (2, 1, 4)), ("INT_32", (2, 1)),
                 ("UINT_32", (2,))])  # fmt: skip


def test_detection_output_first_anchors_model_adds_the_score_codes_on_a_fixed_point_case() -> None:
    """Finding detectionoutput-batch-first-anchors's list (seed 2's UFIXED_POINT_8/16 edge cases): batch 1's box is
    decoded against anchor row 0 (0, 0, 2, 2) where its own row 1 (4, 4, 6, 6) belongs, and out[0] holds in[0]'s codes
    read through out[0]'s 2/255 grid; a float case gets no codes."""
    from tests.reference_helpers import modelled

    c = _fixed_two_batch_case(2 / 255)
    out = modelled(c, ["batches-decoded-against-first-anchors", "scores-as-input-codes"])
    np.testing.assert_allclose(out[1][:, 0], [[0, 0, 2, 2], [0, 0, 2, 2]], atol=1e-6)
    np.testing.assert_allclose(out[0][:, 0], [200 / 255, 240 / 255], rtol=1e-6)
    alone = modelled(c, "batches-decoded-against-first-anchors")
    np.testing.assert_allclose(alone[0][:, 0], [100 / 255, 120 / 255], rtol=1e-6)


def test_detection_output_first_anchors_with_codes_refuses_batch_ones_own_box() -> None:
    """A backend that decodes batch 1 against its own anchors (the spec's boxes) but writes the codes does not show
    the first-anchors finding: its model refuses it."""
    from cases.quant import quantize
    from reference import models
    from tests.reference_helpers import modelled

    c = _fixed_two_batch_case(2 / 255)
    model = {"diagnosis": ["batches-decoded-against-first-anchors", "scores-as-input-codes"]}
    shown = modelled(c, model["diagnosis"])
    stored = [quantize(shown[0], c.outputs[0].encoding, c.outputs[0].dtype), shown[1].astype(np.float32),
              shown[2].astype(np.int32), shown[3].astype(np.uint32)]  # fmt: skip
    assert models.check(c, stored, model)["matches"] is True
    own = stored[1].copy()
    own[1, 0] = [4, 4, 6, 6]
    assert models.check(c, [stored[0], own, *stored[2:]], model)["matches"] is False


def _specials_case():
    from pathlib import Path

    from cases.case import Case

    return Case.load(Path(__file__).resolve().parents[1] / "findings" / "cases" / "DetectionOutput"
                     / "detectionoutput-f16-specials-open.json")  # fmt: skip


def _specials_shown() -> list[np.ndarray]:
    """What the simulator gave for finding detectionoutput-f16-specials-open's case: the reference but for the
    coordinates of the infinite deltas (anchor 1's dh = +inf: y1 = y2 = 2.599; anchor 2's dx = -inf: x = +-7.35e25)."""
    from reference.expected import expected

    with np.errstate(all="ignore"):
        outs = [np.asarray(o).copy() for o in expected(_specials_case())]
    boxes = outs[1].astype(np.float32)
    boxes[0, 2, [0, 2]] = 2.599
    boxes[0, 4, [1, 3]] = [7.35e25, -7.35e25]
    return [outs[0].astype(np.float16), boxes, outs[2].astype(np.int32), outs[3].astype(np.uint32)]


def test_detection_output_specials_symptom_takes_its_findings_case() -> None:
    from reference import models

    got = _specials_shown()
    assert not np.isfinite(models._reference(_specials_case())[1][0, 2, 0])
    assert models.check(_specials_case(), got, {"symptom": "specials-open"}, precision="float16")["matches"] is True


def test_detection_output_specials_symptom_refuses_a_wrong_box_the_specials_do_not_decide() -> None:
    """Anchor 3's box (row 0, finite deltas) moved by 0.5: a planted error beside the specials stays a failure."""
    from reference import models

    got = _specials_shown()
    got[1][0, 0, 0] += 0.5
    result = models.check(_specials_case(), got, {"symptom": "specials-open"}, precision="float16")
    assert result["matches"] is False and "do not touch is wrong too" in result["message"], result
