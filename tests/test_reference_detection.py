"""The detection references (reference/detection.py, keypoints.py, boxes.py) against onnxruntime and by hand.

NonMaxSuppression is cross-checked against onnxruntime's NonMaxSuppression on random cases (QNN and
ONNX share the layouts: boxes [batch, boxes, 4] as (y1,x1,y2,x2), scores [batch, classes, boxes]).
No independent implementation of the other ops is installed (no TF, torchvision, NNAPI or Caffe2),
so each is checked on small cases worked out by hand from the formulas of the op it descends from:
ONNX / TF NMS, NNAPI BOX_WITH_NMS_LIMIT, GENERATE_PROPOSALS, DETECTION_POSTPROCESSING,
HEATMAP_MAX_KEYPOINT, Caffe SSD's DetectionOutput and Caffe2 / Detectron's BBoxTransform,
CollectRpnProposals and DistributeFpnProposals.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import reference
from reference import boxes as bx
from reference.detection import decode_ssd
from reference.keypoints import taylor_refine
from tests.onnx_oracle import I64, ort_node
from tests.reference_helpers import assert_reading_recorded

RNG = np.random.default_rng(20240917)


def close(got, want, what: str, atol: float = 1e-9) -> None:
    got = np.asarray(got)
    assert got.shape == np.shape(want), f"{what}: shape {got.shape}, expected {np.shape(want)}"
    np.testing.assert_allclose(got.astype(np.float64), np.asarray(want, np.float64), rtol=0, atol=atol, err_msg=what)


def same(got, want, what: str) -> None:
    got = np.asarray(got)
    assert got.shape == np.shape(want) and np.array_equal(got, want), f"{what}: got {got.tolist()}, expected {want}"




@pytest.mark.parametrize(
    ("op", "about"),
    [
        ("NonMaxSuppression", "score threshold"),
        ("NonMaxSuppression", "IoU at the threshold"),
        ("NonMaxSuppression", "out[0] layout"),
        ("NonMaxSuppression", "padding rows"),
        ("MultiClassNms", "per-class NMS"),
        ("MultiClassNms", "soft-NMS kernel"),
        ("MultiClassNms", "padding rows"),
        ("CombinedNms", "merge order"),
        ("BoxWithNmsLimit", "pre_nms_limit"),
        ("BoxWithNmsLimit", "background class"),
        ("BoxWithNmsLimit", "hard kernel with nms_score_threshold"),
        ("BoxWithNmsLimit", "output order"),
        ("DetectionOutput", "delta_scaling_factors"),
        ("DetectionOutput", "background class"),
        ("DetectionOutput", "FAST detection_limit default"),
        ("DetectionOutput", "anchor layout"),
        ("GenerateProposals", "min_size"),
        ("GenerateProposals", "IoU at the threshold"),
        ("CollectRpnProposals", "output order"),
        ("DistributeFpnProposals", "level formula"),
        ("DistributeFpnProposals", "invalid RoIs"),
        ("BboxTransform", "angle units"),
        ("BboxTransform", "angle_clip_threshold"),
        ("BboxTransform", "image scale"),
        ("HeatMapMaxKeyPoint", "algorithm"),
        ("HeatMapMaxKeyPoint", "inverted boxes"),
    ],
)
def test_the_readings_this_reference_takes_are_recorded_in_the_spec(op, about):
    assert_reading_recorded(op, about)


# ---- shared box helpers -------------------------------------------------------------------------


def test_iou_of_two_unit_offset_squares_is_one_seventh():
    assert bx.iou(np.array([0, 0, 2, 2]), np.array([1, 1, 3, 3])) == pytest.approx(1 / 7)


def test_iou_reads_an_inverted_box_by_its_corner_extent():
    assert bx.iou(np.array([2, 2, 0, 0]), np.array([1, 1, 3, 3])) == pytest.approx(1 / 7)


def test_iou_of_two_empty_boxes_is_zero_not_nan():
    assert bx.iou(np.array([1, 1, 1, 1]), np.array([1, 1, 1, 1])) == 0.0


def test_decoding_divides_deltas_by_weights_like_torchvision_boxcoder():
    # BoxCoder(weights=(10, 10, 5, 5)): cx = ax + dx/10 * aw, w = exp(dw/5) * aw
    cx, cy, w, h = bx.decode_deltas(5.0, 5.0, 4.0, 2.0, 5.0, -5.0, 5 * math.log(2), 0.0, weights=(10, 10, 5, 5))
    close([cx, cy, w, h], [7.0, 4.0, 8.0, 2.0], "decoded (cx, cy, w, h)")


def test_decoding_caps_log_scale_deltas_when_asked():
    _, _, w, _ = bx.decode_deltas(0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 100.0, 0.0, clip_log_scale=bx.BBOX_XFORM_CLIP)
    close(w, 1000 / 16, "width with dw capped at log(1000/16)", atol=1e-9)


# ---- NonMaxSuppression --------------------------------------------------------------------------

NMS_BOXES = np.array([[[0, 0, 1, 1], [0, 0.1, 1, 1.1], [0, 2, 1, 3]]], dtype=np.float64)  # IoU(0, 1) = 9/11


def nms(boxes, scores, **params):
    return reference.run("NonMaxSuppression", [boxes, scores], params)


def test_nms_keeps_the_best_box_and_drops_its_overlapping_neighbour():
    sel, count = nms(NMS_BOXES, np.array([[[0.75, 0.5, 0.25]]]), iou_threshold=0.5, max_boxes_selected=2)
    same(sel[:2], [[0, 0, 0], [0, 0, 2]], "valid selected indices")
    same(count, [2], "valid count per batch")


def test_nms_pads_with_the_selected_box_of_lowest_score_not_the_last_one():
    # class 0 selects box 0 at 0.125, class 1 selects it at 0.875: the padding repeats class 0's entry
    scores = np.array([[[0.125], [0.875]]])
    sel, count = nms(NMS_BOXES[:, :1], scores, iou_threshold=0.5, max_boxes_selected=2)
    same(sel, [[0, 0, 0], [0, 1, 0], [0, 0, 0], [0, 0, 0]], "out[0] with padding")
    same(count, [2], "valid count")


def test_nms_with_nothing_selected_pads_with_the_first_box():
    sel, count = nms(NMS_BOXES, np.array([[[0.75, 0.5, 0.25]]]), iou_threshold=0.5, score_threshold=0.8,
                     max_boxes_selected=1)  # fmt: skip
    same(sel, [[0, 0, 0]], "out[0]")
    same(count, [0], "valid count")


def test_nms_keeps_a_score_equal_to_the_threshold():
    sel, count = nms(NMS_BOXES, np.array([[[0.75, 0.5, 0.25]]]), iou_threshold=0.5, score_threshold=0.25,
                     max_boxes_selected=3)  # fmt: skip
    same(count, [2], "box 2 (score 0.25 == threshold) is kept")
    same(sel[1], [0, 0, 2], "second selection")


def test_nms_does_not_suppress_at_iou_equal_to_the_threshold():
    boxes = np.array([[[0, 0, 1, 3], [0, 1, 1, 4]]], dtype=np.float64)  # IoU = 2 / 4
    _, count = nms(boxes, np.array([[[0.75, 0.5]]]), iou_threshold=0.5, max_boxes_selected=2)
    same(count, [2], "IoU 0.5 with threshold 0.5 keeps both (ONNX suppresses only above)")


def test_nms_capacity_comes_from_the_declared_output():
    sel, _ = reference.run("NonMaxSuppression", [NMS_BOXES, np.array([[[0.75, 0.5, 0.25]]])],
                           {"iou_threshold": 0.5, "max_boxes_selected": 2}, out_shapes=[(5, 3), (1,)])  # fmt: skip
    assert sel.shape == (5, 3), f"out[0] shape {sel.shape}, declared (5, 3)"


@pytest.mark.parametrize("seed", range(8))
def test_nms_matches_onnxruntime_on_random_cases(seed):
    rng = np.random.default_rng(seed)
    batch, classes, n = int(rng.integers(1, 3)), int(rng.integers(1, 4)), int(rng.integers(3, 9))
    boxes = rng.uniform(0, 4, (batch, n, 4)).astype(np.float32)
    scores = rng.uniform(0, 1, (batch, classes, n)).astype(np.float32)
    iou_thr, score_thr = float(rng.choice([0.3, 0.5, 0.7])), float(rng.choice([0.0, 0.2, 0.5]))
    mbs = int(rng.integers(1, 4))
    (want,) = ort_node("NonMaxSuppression", [boxes, scores, np.array([mbs], np.int64),
                                             np.array([iou_thr], np.float32), np.array([score_thr], np.float32)],
                       out_types=[I64])  # fmt: skip
    sel, count = nms(boxes.astype(np.float64), scores.astype(np.float64), iou_threshold=np.float32(iou_thr),
                     score_threshold=np.float32(score_thr), max_boxes_selected=mbs)  # fmt: skip
    total = int(count.sum())
    same(sel[:total], want.astype(np.int32).tolist(), f"valid rows vs onnxruntime (seed {seed})")
    same(count, [int((want[:, 0] == b).sum()) for b in range(batch)], "per-batch counts vs onnxruntime")


# ---- MultiClassNms ------------------------------------------------------------------------------

MC_SCORES = np.array([[[0.9, 0.2], [0.8, 0.7], [0.1, 0.6]]])  # [batch, box, class]


def test_multiclass_nms_runs_per_class_and_merges_by_descending_score():
    feats = np.array([[[10, 11], [20, 21], [30, 31]]], dtype=np.float64)
    out = reference.run("MultiClassNms", [NMS_BOXES, MC_SCORES, feats],
                        {"iou_threshold": 0.5, "score_threshold": 0.15},
                        out_shapes=[(1, 4, 4), (1, 4), (1, 4), (1,), (1, 4, 2)])  # fmt: skip
    boxes, scores, classes, count, gathered = out
    close(scores, [[0.9, 0.7, 0.6, 0.0]], "scores (zero padding)")
    same(classes, [[0, 1, 1, 0]], "classes")
    same(count, [3], "valid count")
    close(boxes[0, :3], NMS_BOXES[0, [0, 1, 2]], "boxes")
    close(gathered, [[[10, 11], [20, 21], [30, 31], [0, 0]]], "gathered features")


def test_multiclass_nms_keeps_the_top_scores_when_the_declared_capacity_is_smaller():
    out = reference.run("MultiClassNms", [NMS_BOXES, MC_SCORES], {"iou_threshold": 0.5, "score_threshold": 0.15},
                        out_shapes=[(1, 2, 4), (1, 2), (1, 2), (1,)])  # fmt: skip
    close(out[1], [[0.9, 0.7]], "scores")
    same(out[3], [2], "valid count")


def test_multiclass_soft_nms_decays_scores_with_tf_gaussian_weight():
    scores = np.array([[[0.9], [0.8]]])
    out = reference.run("MultiClassNms", [NMS_BOXES[:, :2], scores], {"iou_threshold": 0.95, "soft_nms_sigma": 0.5},
                        out_shapes=[(1, 2, 4), (1, 2), (1, 2), (1,)])  # fmt: skip
    # TF: weight = exp(-0.5 * IoU^2 / sigma), IoU = 9/11
    close(out[1], [[0.9, 0.8 * math.exp(-0.5 * (9 / 11) ** 2 / 0.5)]], "soft-NMS scores")


def test_multiclass_soft_nms_still_suppresses_above_the_iou_threshold():
    scores = np.array([[[0.9], [0.8]]])
    out = reference.run("MultiClassNms", [NMS_BOXES[:, :2], scores], {"iou_threshold": 0.5, "soft_nms_sigma": 0.5},
                        out_shapes=[(1, 2, 4), (1, 2), (1, 2), (1,)])  # fmt: skip
    same(out[3], [1], "IoU 9/11 > 0.5 removes the second box outright")


# ---- CombinedNms --------------------------------------------------------------------------------


def combined(boxes, scores, out_shapes=None, **params):
    return reference.run("CombinedNms", [boxes, scores], params, out_shapes=out_shapes)


def test_combined_nms_limits_per_class_then_in_total():
    b, s, c, n = combined(NMS_BOXES[:, :, None, :], MC_SCORES, max_boxes_per_class=1, max_total_boxes=2,
                          iou_threshold=0.5, score_threshold=0.15)  # fmt: skip
    close(s, [[0.9, 0.7]], "scores")
    close(c, [[0, 1]], "classes")
    same(n, [2], "valid count")


def test_combined_nms_pads_with_zeros_to_max_total_boxes():
    b, s, c, n = combined(NMS_BOXES[:, :, None, :], MC_SCORES, max_boxes_per_class=1, max_total_boxes=4,
                          iou_threshold=0.5, score_threshold=0.15)  # fmt: skip
    close(s, [[0.9, 0.7, 0, 0]], "scores")
    close(b[0, 2:], np.zeros((2, 4)), "padding boxes")


def test_combined_nms_pad_per_class_sizes_outputs_by_classes_times_per_class_limit():
    b, s, c, n = combined(NMS_BOXES[:, :, None, :], MC_SCORES, max_boxes_per_class=1, max_total_boxes=5,
                          iou_threshold=0.5, pad_per_class=True)  # fmt: skip
    assert s.shape == (1, 2), f"scores shape {s.shape}: min(1 * 2 classes, 5) = 2 expected"


def test_combined_nms_with_class_specific_boxes_compares_only_boxes_of_one_class():
    per_class = np.repeat(NMS_BOXES[:, :, None, :], 2, axis=2)
    per_class[0, 0, 1] = [5, 5, 6, 6]  # box 0 of class 1 moved away from box 1
    b, s, c, n = combined(per_class, MC_SCORES, max_boxes_per_class=3, max_total_boxes=6, iou_threshold=0.5,
                          score_threshold=0.15)  # fmt: skip
    close(s[0, :4], [0.9, 0.7, 0.6, 0.2], "class 1 keeps box 0 (no longer overlapping box 1)")
    close(b[0, 3], [5, 5, 6, 6], "class 1's own box is output")


def test_combined_nms_clips_output_boxes_to_the_unit_square():
    b, _, _, _ = combined(NMS_BOXES[:, :, None, :], MC_SCORES, max_boxes_per_class=3, max_total_boxes=3,
                          iou_threshold=0.5, score_threshold=0.15, clip_boxes=True)  # fmt: skip
    close(b[0, 2], [0, 1, 1, 1], "box (0, 2, 1, 3) clipped to [0, 1]")


# ---- BoxWithNmsLimit (NNAPI kernels, x1 y1 x2 y2) ----------------------------------------------

BWN_BOXES = np.array([[0, 0, 1, 1], [0.1, 0, 1.1, 1], [2, 0, 3, 1]], dtype=np.float64)  # IoU(0, 1) = 9/11
BWN_SCORES = np.array([[0.9], [0.8], [0.6]])


def bwn(method, boxes=BWN_BOXES, scores=BWN_SCORES, **params):
    p = {"nms_kernel_method": method, "iou_threshold": 0.5, "sigma": 0.5, "nms_score_threshold": 0.1}
    p.update(params)
    n = len(boxes)
    return reference.run("BoxWithNmsLimit", [boxes, scores, np.zeros(n, np.int32), np.array([n], np.int32)], p)


def test_box_with_nms_limit_hard_kernel_removes_the_overlapping_box():
    boxes, scores, classes, batches, splits, keeps, keeps_size = bwn(0)
    close(boxes, BWN_BOXES[[0, 2]], "boxes")
    close(scores, [0.9, 0.6], "scores")
    same(keeps, [0, 2], "keeps")
    same(splits, [2], "batch splits")
    same(keeps_size, [2], "keeps size per class")
    same(batches, [0, 0], "batch indices")


def test_box_with_nms_limit_hard_kernel_keeps_a_zeroed_box_when_nms_score_threshold_is_zero():
    _, scores, _, _, _, keeps, _ = bwn(0, nms_score_threshold=0.0)
    close(scores, [0.9, 0.6, 0.0], "score 0 is not below threshold 0, so the box stays pending")
    same(keeps, [0, 2, 1], "keeps")


def test_box_with_nms_limit_linear_kernel_scales_by_one_minus_iou():
    _, scores, _, _, _, keeps, _ = bwn(1)
    close(scores, [0.9, 0.6, 0.8 * (1 - 9 / 11)], "scores")
    same(keeps, [0, 2, 1], "keeps")


def test_box_with_nms_limit_gaussian_kernel_scales_by_exp_minus_iou_squared_over_sigma():
    _, scores, _, _, _, keeps, _ = bwn(2, iou_threshold=0.01)  # iou_threshold is ignored by the gaussian kernel
    close(scores, [0.9, 0.6, 0.8 * math.exp(-((9 / 11) ** 2) / 0.5)], "scores")


def test_box_with_nms_limit_pre_nms_limit_caps_what_is_sent_to_nms():
    _, scores, _, _, _, keeps, _ = bwn(0, pre_nms_limit=2)
    same(keeps, [0], "only boxes 0 and 1 reach NMS; box 1 is suppressed")


def test_box_with_nms_limit_processes_class_zero_and_orders_by_class():
    boxes = np.concatenate([BWN_BOXES[:2], BWN_BOXES[:2]], axis=1)
    scores = np.array([[0.9, 0.3], [0.8, 0.95]])
    out_boxes, out_scores, classes, _, _, keeps, keeps_size = bwn(0, boxes=boxes, scores=scores)
    same(classes, [0, 1], "classes (class 0 is not treated as background)")
    close(out_scores, [0.9, 0.95], "scores in class order")
    same(keeps, [0, 1], "keeps")
    same(keeps_size, [1, 1], "keeps size per class")


# ---- DetectionOutput (SSD) ----------------------------------------------------------------------

FACTORS = [10.0, 10.0, 5.0, 5.0]  # NNAPI / TFLite scale_y, scale_x, scale_h, scale_w of an SSD model


def test_ssd_decoding_divides_by_the_factors_as_nnapi_detection_postprocessing_does():
    # NNAPI: yc = dy/10 * ha + ya, xc = dx/10 * wa + xa, h = exp(dh/5) * ha, w = exp(dw/5) * wa
    anchor = np.array([2.0, 3.0, 2.0, 4.0])  # (cy, cx, h, w)
    loc = np.array([1.0, -1.0, 5 * math.log(2), 0.0])  # (dy, dx, dh, dw)
    # yc = 2.2, xc = 2.6, h = 4, w = 4
    close(decode_ssd(loc, anchor, np.array(FACTORS)), [0.2, 0.6, 4.2, 4.6], "decoded (y1, x1, y2, x2)")


def detect(scores, loc, anchors, out_cap=3, **params):
    p = {"delta_scaling_factors": FACTORS, "confidence_threshold": 0.5, "iou_threshold": 0.5}
    p.update(params)
    b = scores.shape[0]
    return reference.run("DetectionOutput", [scores, loc, anchors], p,
                         out_shapes=[(b, out_cap), (b, out_cap, 4), (b, out_cap), (b,)])  # fmt: skip


ONE_ANCHOR = np.array([[2.0, 3.0, 2.0, 4.0]])
ONE_LOC = np.array([[[1.0, -1.0, 5 * math.log(2), 0.0]]])


def test_detection_output_ignores_the_background_class_and_pads_with_zeros():
    s, b, lab, n = detect(np.array([[[0.9, 0.6]]]), ONE_LOC, ONE_ANCHOR)
    close(s, [[0.6, 0, 0]], "scores: class 0 (background, 0.9) is not a detection")
    close(b[0, 0], [0.2, 0.6, 4.2, 4.6], "decoded box")
    close(b[0, 1:], np.zeros((2, 4)), "padding boxes")
    same(lab, [[1, 0, 0]], "labels keep the background in the numbering by default")
    same(n, [1], "count")


def test_detection_output_without_background_in_output_renumbers_labels():
    _, _, lab, _ = detect(np.array([[[0.9, 0.6]]]), ONE_LOC, ONE_ANCHOR, output_background=False)
    same(lab[0, :1], [0], "class 1 becomes label 0")


def test_detection_output_background_index_can_be_another_class():
    s, _, lab, _ = detect(np.array([[[0.9, 0.6]]]), ONE_LOC, ONE_ANCHOR, background_class_idx=1)
    close(s[0, :1], [0.9], "class 0 is a detection when class 1 is the background")
    same(lab[0, :1], [0], "label")


# two anchors at the same place (IoU 1), three classes, class 0 background
TWO_ANCHORS = np.array([[1.0, 1.0, 2.0, 2.0], [1.0, 1.0, 2.0, 2.0]])
TWO_LOC = np.zeros((1, 2, 4))
TWO_SCORES = np.array([[[0.0, 0.8, 0.6], [0.0, 0.7, 0.9]]])


def test_detection_output_regular_nms_runs_per_class():
    s, _, lab, n = detect(TWO_SCORES, TWO_LOC, TWO_ANCHORS, nms_type=1)
    close(s[0, :2], [0.9, 0.8], "one detection per class survives")
    same(lab[0, :2], [2, 1], "labels")


def test_detection_output_fast_nms_runs_once_over_anchors_by_their_best_class():
    s, _, lab, n = detect(TWO_SCORES, TWO_LOC, TWO_ANCHORS, nms_type=0)
    close(s[0, :1], [0.9], "anchor 1 (best 0.9) suppresses anchor 0 whatever its class")
    same(n, [1], "count")


def test_detection_output_fast_nms_reports_detection_limit_classes_per_anchor():
    s, _, lab, n = detect(TWO_SCORES, TWO_LOC, TWO_ANCHORS, nms_type=0, detection_limit=2)
    close(s[0, :2], [0.9, 0.7], "anchor 1's two best classes")
    same(lab[0, :2], [2, 1], "labels")


def test_detection_output_regular_nms_eta_tightens_the_threshold_after_each_keep():
    # boxes (0,0,1,1) and (0,0.25,1,1.25): IoU 0.75 / 1.25 = 0.6
    anchors = np.array([[0.5, 0.5, 1.0, 1.0], [0.5, 0.75, 1.0, 1.0]])
    scores = np.array([[[0.0, 0.9], [0.0, 0.8]]])
    _, _, _, n_plain = detect(scores, np.zeros((1, 2, 4)), anchors, nms_type=1, iou_threshold=0.7)
    _, _, _, n_eta = detect(scores, np.zeros((1, 2, 4)), anchors, nms_type=1, iou_threshold=0.7, nms_eta=0.8)
    same(n_plain, [2], "IoU 0.6 <= 0.7 keeps both")
    same(n_eta, [1], "after one keep the threshold is 0.7 * 0.8 = 0.56 < 0.6")


# ---- GenerateProposals --------------------------------------------------------------------------


def proposals(scores, deltas, anchors, sizes, **params):
    p = {"img_size_ratio": [1.0, 1.0], "iou_threshold": 0.5}
    p.update(params)
    return reference.run("GenerateProposals", [scores, deltas, anchors, sizes], p)


def test_generate_proposals_shifts_anchors_by_the_ratio_and_suppresses_at_iou_equal_threshold():
    # anchor (0,0,3,1) at cells w=0 and w=1: (0,0,3,1) and (1,0,4,1), IoU 2/4
    s, b, i = proposals(np.array([[[[0.9], [0.8]]]]), np.zeros((1, 1, 2, 4)), np.array([[0.0, 0, 3, 1]]),
                        np.array([[10.0, 10.0]]), iou_threshold=0.5)  # fmt: skip
    close(s, [0.9], "NNAPI suppresses at IoU >= threshold")
    close(b, [[0, 0, 3, 1]], "box")
    same(i, [0], "batch index")


def test_generate_proposals_keeps_both_below_the_iou_threshold_in_score_order():
    s, b, _ = proposals(np.array([[[[0.8], [0.9]]]]), np.zeros((1, 1, 2, 4)), np.array([[0.0, 0, 3, 1]]),
                        np.array([[10.0, 10.0]]), iou_threshold=0.6)  # fmt: skip
    close(s, [0.9, 0.8], "scores, best first")
    close(b, [[1, 0, 4, 1], [0, 0, 3, 1]], "second cell shifted by width ratio 1")


def test_generate_proposals_decodes_and_clips_to_the_image():
    # anchor (0,0,4,2): cx 2, w 4; dx 0.5, dw ln 2 -> cx 4, w 8 -> x 0..8, clipped to width 6
    s, b, _ = proposals(np.array([[[[0.9]]]]), np.array([[[[0.5, 0.0, math.log(2), 0.0]]]]),
                        np.array([[0.0, 0, 4, 2]]), np.array([[10.0, 6.0]]))  # fmt: skip
    close(b, [[0, 0, 6, 2]], "decoded and clipped box")


def test_generate_proposals_bbox_xform_clip_caps_dw_at_log_1000_over_16():
    args = (np.array([[[[0.9]]]]), np.array([[[[0.0, 0.0, 10.0, 0.0]]]]), np.array([[0.0, 0, 4, 2]]),
            np.array([[10.0, 1000.0]]))  # fmt: skip
    _, clipped, _ = proposals(*args, bbox_xform_clip=True)
    _, free, _ = proposals(*args)
    close(clipped, [[0, 0, 2 + 125, 2]], "w = 4 * 62.5 = 250 around cx 2")
    close(free, [[0, 0, 1000, 2]], "w = 4 * e^10 reaches the image edge")


def test_generate_proposals_drops_boxes_narrower_than_min_size():
    s, _, _ = proposals(np.array([[[[0.9], [0.8]]]]), np.zeros((1, 1, 2, 4)), np.array([[0.0, 0, 1, 3]]),
                        np.array([[10.0, 10.0]]), img_size_ratio=[1.0, 5.0], min_size=1.5)  # fmt: skip
    same(s.shape, (0,), "both boxes are 1 wide, below min_size 1.5")


def test_generate_proposals_pre_nms_limit_keeps_the_best_scores():
    s, _, _ = proposals(np.array([[[[0.8], [0.9]]]]), np.zeros((1, 1, 2, 4)), np.array([[0.0, 0, 1, 1]]),
                        np.array([[10.0, 10.0]]), img_size_ratio=[1.0, 5.0], pre_nms_limit=1)  # fmt: skip
    close(s, [0.9], "only the best box reaches NMS")


# ---- CollectRpnProposals / DistributeFpnProposals ------------------------------------------------


def test_collect_rpn_proposals_merges_levels_and_keeps_the_top_scores():
    lvl2 = np.array([[0, 0, 0, 1, 1], [0, 1, 1, 2, 2]], dtype=np.float64)
    lvl3 = np.array([[1, 5, 5, 6, 6]], dtype=np.float64)
    (out,) = reference.run("CollectRpnProposals", [lvl2, lvl3, np.array([0.3, 0.9]), np.array([0.5])],
                           {"rpn_min_level": 2, "rpn_max_level": 3, "post_nms_top": 2})  # fmt: skip
    close(out, [lvl2[1], lvl3[0]], "RoIs by descending score")


FPN_ROIS = np.array([
    [0, 0, 0, 224, 224],    # sqrt area 224 = canonical scale -> level 4
    [0, 0, 0, 112, 112],    # log2(0.5 + 1e-6) just above -1 -> floor(3.000001) = 3
    [1, 0, 0, 448, 448],    # -> 5
    [0, 0, 0, 10, 10],      # 4 + log2(10/224) = -0.49 -> -1, clipped to 2
    [0, 5, 5, 5, 5],        # zero width and height: invalid
    [0, 0, 0, 2000, 2000],  # -> 7, clipped to 5
], dtype=np.float64)  # fmt: skip


def test_distribute_fpn_proposals_assigns_levels_by_detectron_formula():
    restore, l2, l3, l4, l5 = reference.run("DistributeFpnProposals", [FPN_ROIS], {})
    close(l2, FPN_ROIS[[3]], "level 2")
    close(l3, FPN_ROIS[[1]], "level 3")
    close(l4, FPN_ROIS[[0]], "level 4")
    close(l5, FPN_ROIS[[2, 5]], "level 5, original order")


def test_distribute_fpn_proposals_restore_indices_undo_the_level_order_and_mark_invalid_rois():
    restore, *levels = reference.run("DistributeFpnProposals", [FPN_ROIS], {})
    same(restore, [2, 1, 3, 0, -1, 4], "rois_idx_restore")
    concat = np.concatenate(levels)
    valid = restore >= 0
    close(concat[restore[valid]], FPN_ROIS[valid], "concatenation indexed by restore gives the input back")


def test_distribute_fpn_proposals_accepts_rois_without_batch_index():
    restore, *levels = reference.run("DistributeFpnProposals", [FPN_ROIS[:, 1:]], {})
    same(restore, [2, 1, 3, 0, -1, 4], "rois_idx_restore")
    assert levels[0].shape == (1, 4), f"level 2 shape {levels[0].shape}"


def test_distribute_fpn_proposals_writes_minus_one_as_all_ones_in_uint32():
    restore, *_ = reference.run("DistributeFpnProposals", [FPN_ROIS], {}, out_dtypes=[np.uint32] + [np.float64] * 4)
    assert restore.dtype == np.uint32 and restore[4] == 0xFFFFFFFF, f"restore {restore}"


# ---- BboxTransform (Caffe2 rotated boxes) -------------------------------------------------------


def rotated(roi, delta, info, **params):
    p = {"weights": [1.0, 1.0, 1.0, 1.0]}
    p.update(params)
    return reference.run("BboxTransform", [np.array([roi], np.float64), np.array([delta], np.float64),
                                           np.array(info, np.float64)], p)  # fmt: skip


def test_bbox_transform_decodes_in_unscaled_space_and_adds_the_angle_delta_in_degrees():
    # scale 2: box (10,20,4,6) -> (5,10,2,3); dx .5, dw ln2 -> cx 6, w 4; angle 30 + degrees(pi/6) = 60
    out, counts = rotated([10, 20, 4, 6, 30], [0.5, 0, math.log(2), 0, math.pi / 6], [[100, 100, 2]])
    close(out, [[12, 20, 8, 6, 60]], "box scaled back by image_scale (apply_scale default true)")
    close(counts, [1], "RoIs per batch")


def test_bbox_transform_without_apply_scale_stays_in_unscaled_space():
    out, _ = rotated([10, 20, 4, 6, 30], [0.5, 0, math.log(2), 0, math.pi / 6], [[100, 100, 2]], apply_scale=False)
    close(out, [[6, 10, 4, 3, 60]], "unscaled box, angle untouched by the scale")


def test_bbox_transform_divides_deltas_by_weights():
    out, _ = rotated([10, 20, 4, 6, 0], [0.5, 0, 0, 0, 0], [[100, 100, 1]], weights=[2.0, 1.0, 1.0, 1.0])
    close(out[0, 0], 11, "cx = 10 + 0.5 / 2 * 4")


def test_bbox_transform_wraps_angles_into_the_bounds_by_the_period():
    out, _ = rotated([10, 20, 4, 6, 80], [0, 0, 0, 0, math.pi / 6], [[100, 100, 1]], angle_bounds=[-90, 90])
    close(out[0, 4], -70, "110 degrees wraps to -70 in [-90, 90]")


def test_bbox_transform_clips_only_nearly_upright_boxes_to_the_image():
    upright, _ = rotated([95, 50, 20, 10, 0.5], [0] * 5, [[100, 100, 1]], angle_clip_threshold=1.0)
    tilted, _ = rotated([95, 50, 20, 10, 45], [0] * 5, [[100, 100, 1]], angle_clip_threshold=1.0)
    disabled, _ = rotated([95, 50, 20, 10, 0.5], [0] * 5, [[100, 100, 1]])
    close(upright, [[92.5, 50, 15, 10, 0.5]], "x 85..105 clipped to 85..100")
    close(tilted, [[95, 50, 20, 10, 45]], "a 45 degree box is not clipped")
    close(disabled, [[95, 50, 20, 10, 0.5]], "negative threshold (default) disables clipping")


def test_bbox_transform_counts_rois_per_batch_from_the_batch_indices():
    rois = np.array([[1, 1, 1, 1, 0]] * 3, np.float64)
    info = np.array([[9, 9, 1], [9, 9, 1]], np.float64)
    _, counts = reference.run("BboxTransform", [rois, np.zeros((3, 5)), info, np.array([0, 1, 1], np.int32)],
                              {"weights": [1.0, 1, 1, 1]})  # fmt: skip
    close(counts, [1, 2], "RoIs per batch")


# ---- HeatMapMaxKeyPoint (NNAPI) -----------------------------------------------------------------


def test_keypoint_taylor_fit_recovers_the_peak_of_a_quadratic_exactly():
    rows, cols = np.mgrid[0:4, 0:5].astype(np.float64)
    heat = 10 - (cols - 2.3) ** 2 - (rows - 1.6) ** 2  # peak at x 2.3, y 1.6; best cell (2, 2)
    scores, points = reference.run("HeatMapMaxKeyPoint", [heat[None, :, :, None], np.array([[0.0, 0, 10, 8]])], {})
    close(scores, [[10.0]], "score at the fitted peak")
    close(points, [[[(2.3 + 0.5) / 5 * 10, (1.6 + 0.5) / 4 * 8]]], "keypoint (x, y) in the box", atol=1e-9)


def test_keypoint_offset_larger_than_one_and_a_half_cells_is_scaled_back():
    # A = [[-1, 0.9], [0.9, -1]], b = (-0.4, 0): delta = (2.105.., 1.894..) scaled to (1.5, 1.35)
    grid = np.array([[0.9, 0.5, -0.9], [0.1, 1.0, 0.9], [-0.9, 0.5, 0.9]])
    dx, dy, score = taylor_refine(grid)
    close([dx, dy], [1.5, 1.35], "clamped offset")
    close(score, 1.38625, "fitted score at the clamped offset")
    _, points = reference.run("HeatMapMaxKeyPoint", [grid[None, :, :, None], np.array([[0.0, 0, 3, 3]])], {})
    close(points, [[[3.0, 2.85]]], "keypoint")


def test_keypoint_on_the_edge_mirrors_the_missing_neighbours():
    heat = np.array([[5.0, 3.0, 0.0], [3.0, 2.0, 0.0], [0.0, 0.0, 0.0]])
    scores, points = reference.run("HeatMapMaxKeyPoint", [heat[None, :, :, None], np.array([[0.0, 0, 6, 3]])], {})
    # neighbours at -1 read index 1: symmetric grid, zero gradient -> cell centre, max score
    close(scores, [[5.0]], "score")
    close(points, [[[0.5 / 3 * 6, 0.5 / 3 * 3]]], "keypoint at the corner cell's centre")


def test_keypoint_on_a_flat_heatmap_is_not_refined():
    scores, points = reference.run("HeatMapMaxKeyPoint", [np.ones((1, 2, 2, 1)), np.array([[0.0, 0, 2, 2]])], {})
    close(scores, [[1.0]], "score")
    close(points, [[[0.5, 0.5]]], "first cell's centre")
