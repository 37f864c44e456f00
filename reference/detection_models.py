"""The HTP simulator's detection deviations as models (``reference.models``): each is the reference's algorithm
(``reference.detection``) with one change a finding in findings/qnn-htp.yaml measured, so a failing case can be told
apart as that finding's bug or another one. Kept apart from the references so the ops' own readings stay short.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from reference import member
from reference.boxes import scalar
from reference.detection import _detection_output, _f64
from reference.models import register_combination, register_model, register_symptom
from reference.specials_models import SPECIALS_OPEN, specials_open


@register_model("NonMaxSuppression", name="padding-rows-open")
def nms_padding_rows_open(case: Any) -> list[np.ndarray]:
    """The HTP simulator's NonMaxSuppression with fewer selected boxes than out[0] has rows (finding nms-padding-rows-
    wrong-class): the padding rows do not repeat the selected box with the lowest score (line 9193). Measured: another
    class with the same box, another selected box, (class 0, box 0), or a box index of 131072 - so the class and box
    columns of a padding row are left open (NaN); every selected row, the batch column and the count are the
    reference's."""
    from reference.expected import expected

    outs = expected(case)
    rows = outs[0].astype(np.float64)
    count = int(np.asarray(outs[1]).reshape(-1)[0]) if len(outs) > 1 else rows.shape[0]
    rows[count:, 1:] = np.nan
    return [rows, *outs[1:]]


# The HTP simulator's DetectionOutput deviations (findings/qnn-htp.yaml), each a change to the reference's algorithm.
# They add up: a fixed-point case with share_location false shows the score codes and the unshared anchor rows at
# once, so a finding's model may name others beside its own (a diagnosis list, reference.models): its own applies,
# each other one only where the case meets its condition (below), and a case with none of them is the reference's.


def _fixed_scores(case: Any, params: dict[str, Any]) -> bool:
    return case.inputs[0].encoding is not None and case.outputs[0].encoding is not None


def _fast_without_background(case: Any, params: dict[str, Any]) -> bool:
    return (member(case.op, params, "nms_type") == "FAST" and not bool(scalar(params, "use_bg_in_nms", False))
            and bool(scalar(params, "output_background", True)))  # fmt: skip


def _background_kept(case: Any, params: dict[str, Any]) -> bool:
    return bool(scalar(params, "use_bg_in_nms", False)) and not bool(scalar(params, "output_background", True))


def _labels_past_background(case: Any, params: dict[str, Any]) -> bool:
    return not bool(scalar(params, "output_background", True)) and int(scalar(params, "background_class_idx", 0)) > 0


def _fast_shared(case: Any, params: dict[str, Any]) -> bool:
    return member(case.op, params, "nms_type") == "FAST" and bool(scalar(params, "share_location", True))


def _fast_unshared(case: Any, params: dict[str, Any]) -> bool:
    return member(case.op, params, "nms_type") == "FAST" and not bool(scalar(params, "share_location", True))


def _several_batches(case: Any, params: dict[str, Any]) -> bool:
    return case.inputs[0].shape[0] > 1


def _unshared(case: Any, params: dict[str, Any]) -> bool:
    return not bool(scalar(params, "share_location", True))


# name -> the condition under which a case shows it beside another finding's. Order matters: the FAST ranking's
# use_bg_in_nms is what the background's condition then reads.
_DETECTION_OUTPUT_BUGS: dict[str, Callable[[Any, dict[str, Any]], bool]] = {
    "fast-classes-per-anchor-count-anchors": _fast_shared,
    "fast-unshared-anchors-past-scores": _fast_unshared,
    "fast-nms-ranks-background": _fast_without_background,
    "background-kept-labelled-minus-one": _background_kept,
    "labels-class-minus-background-minus-one": _labels_past_background,
    "batches-decoded-against-first-anchors": _several_batches,
    "unshared-boxes-against-anchor-rows": _unshared,
    "scores-as-input-codes": _fixed_scores,
}


def _first_anchor_rows(b: int, n: int, c: int) -> np.ndarray:
    return np.repeat(np.arange(n)[:, None], c, axis=1)


def _per_class_anchor_rows(b: int, n: int, c: int) -> np.ndarray:
    return np.arange(n)[:, None] * c + np.arange(c)[None, :]


_ANCHOR_ROWS = {"batches-decoded-against-first-anchors": _first_anchor_rows,
                "unshared-boxes-against-anchor-rows": _per_class_anchor_rows}  # fmt: skip


@register_combination("DetectionOutput")
def detection_output_with(case: Any, names: list[str]) -> list[np.ndarray]:
    """The HTP simulator's DetectionOutput with the named deviations: ``names[0]`` (the finding's own) always, every
    other one where the case meets its condition (``_DETECTION_OUTPUT_BUGS``). Two that read different anchor rows
    (several batches with share_location false) were never measured together: no model (ValueError)."""
    from cases.quant import dequantize, quantize
    from reference.expected import arguments

    inputs, params = arguments(case)
    unknown = [n for n in names if n not in _DETECTION_OUTPUT_BUGS]
    if unknown or not names:
        raise ValueError(f"DetectionOutput has no deviation {unknown or names}")
    applied: list[str] = []
    for name, condition in _DETECTION_OUTPUT_BUGS.items():
        if name in names and (name == names[0] or condition(case, params)):
            applied.append(name)
            if name == "fast-nms-ranks-background":
                params = {**params, "use_bg_in_nms": True}
    past = "fast-unshared-anchors-past-scores" in applied
    if past:  # decoded as if shared; the per-class anchor rows are REGULAR's reading
        inputs, params = _first_boxes_shared(inputs, params)
        applied = [n for n in applied if n != "unshared-boxes-against-anchor-rows"]
    rows = [_ANCHOR_ROWS[n] for n in applied if n in _ANCHOR_ROWS]
    if len(rows) > 1:
        raise ValueError("first-batch anchors and per-class anchor rows together: not measured")
    fast = "fast-classes-per-anchor-count-anchors" in applied or past
    if fast and member(case.op, params, "nms_type") != "FAST":  # a REGULAR case is another path: nothing to model
        raise ValueError("the FAST path's rows per anchor: not a FAST case")
    outs = _detection_output(inputs, params, [t.shape for t in case.outputs], None, case.op,
                             anchor_rows=rows[0] if rows else None,
                             background_kept="background-kept-labelled-minus-one" in applied,
                             labels_past_background="labels-class-minus-background-minus-one" in applied,
                             fast_rows_per_anchor=fast)  # fmt: skip
    if "scores-as-input-codes" in applied and _fixed_scores(case, params):  # a float out[0] has no codes
        scores, out0 = case.inputs[0], case.outputs[0]
        outs[0] = dequantize(quantize(outs[0], scores.encoding, scores.dtype), out0.encoding)
    if past:  # the rows past the real anchors' and the count are open (NaN): reference.compare's open count
        known = int(np.asarray(outs[3]).reshape(-1)[0])
        outs = [np.asarray(o, dtype=np.float64).copy() for o in outs]
        for o in outs[:3]:
            o[:, known:] = np.nan
        outs[3][:] = np.nan
    return outs


def _first_boxes_shared(inputs: list[Any], params: dict[str, Any]) -> tuple[list[Any], dict[str, Any]]:
    """A FAST share_location false case as the HTP simulator reads it (finding detectionoutput-fast-unshared-past-
    scores): in[1]'s first num_anchors rows as shared boxes. Only batch 1 (past in[0] is then no other batch's
    scores) and one row per anchor (several rows per anchor put an open number of other anchors' rows before the
    real ones in the counted rows) are modelled: ValueError otherwise."""
    scores = _f64(inputs[0])
    batch, num_anchors, num_classes = scores.shape
    bg = int(scalar(params, "background_class_idx", 0))
    ranked = [c for c in range(num_classes) if bool(scalar(params, "output_background", True)) or c > bg]
    limit = int(scalar(params, "detection_limit", -1))
    if batch != 1 or min(limit if limit > 0 else len(ranked), len(ranked)) != 1:
        raise ValueError("FAST share_location false with several batches or rows per anchor: not modelled")
    return [inputs[0], _f64(inputs[1])[:, :num_anchors], *inputs[2:]], {**params, "share_location": True}


@register_model("DetectionOutput", name="fast-nms-ranks-background")
def detection_output_fast_nms_ranks_background(case: Any) -> list[np.ndarray]:
    """The HTP simulator's fixed-point FAST DetectionOutput with use_bg_in_nms false and output_background true
    (finding detectionoutput-fast-ranks-background): the background class is ranked with the others for each anchor,
    as with use_bg_in_nms true, where line 2800 says NMS ignores it (with output_background false it is ignored)."""
    return detection_output_with(case, ["fast-nms-ranks-background"])


@register_model("DetectionOutput", name="background-kept-labelled-minus-one")
def detection_output_background_kept_labelled_minus_one(case: Any) -> list[np.ndarray]:
    """The HTP simulator's DetectionOutput with use_bg_in_nms true and output_background false (finding detectionoutput-
    background-not-excluded): the background class's detections stay in the output and in out[3]'s count, and every
    detection is labelled class - background_class_idx - 1 (the background -1; with background 1 of 3 classes, class
    0 is -2 and class 2 is 0)."""
    return detection_output_with(case, ["background-kept-labelled-minus-one"])


@register_model("DetectionOutput", name="labels-class-minus-background-minus-one")
def detection_output_labels_class_minus_background_minus_one(case: Any) -> list[np.ndarray]:
    """The HTP simulator's REGULAR DetectionOutput with output_background false (finding detectionoutput-labels-past-
    background): the background's detections are dropped, as line 2823 says, but every other detection is labelled
    class - background_class_idx - 1, where the classes past the background are renumbered one down and those before
    it keep their index (background 1 of 3 classes: class 0 comes back -2, class 2 0, where 0 and 1 belong). With
    background 0 the two agree."""
    return detection_output_with(case, ["labels-class-minus-background-minus-one"])


@register_model("DetectionOutput", name="fast-classes-per-anchor-count-anchors")
def detection_output_fast_classes_per_anchor_count_anchors(case: Any) -> list[np.ndarray]:
    """The HTP simulator's fixed-point FAST DetectionOutput with share_location true (finding detectionoutput-fast-
    count-anchors, ``_fast_rows_per_anchor``): each anchor NMS keeps writes detection_limit rows (every ranked class
    with the default), out[3] counts the anchors; with output_background false only the classes after the background
    are ranked, labelled class - (background_class_idx + 1), or twice that short with several rows per anchor.
    share_location false: ValueError (those cases read past in[0], not modelled)."""
    from reference.expected import arguments

    if not bool(scalar(arguments(case)[1], "share_location", True)):
        raise ValueError("FAST with share_location false reads past in[0]: not modelled")
    return detection_output_with(case, ["fast-classes-per-anchor-count-anchors"])


@register_model("DetectionOutput", name="fast-unshared-anchors-past-scores")
def detection_output_fast_unshared_anchors_past_scores(case: Any) -> list[np.ndarray]:
    """The HTP simulator's fixed-point FAST DetectionOutput with share_location false (finding detectionoutput-fast-
    unshared-past-scores): anchor a's box is in[1]'s row a decoded against in[2]'s row a, as if share_location were
    true, and the kernel goes on over num_anchors x num_classes anchors, the others' scores and anchors read past in[0]
    and in[2]: the rows of the real anchors (``fast-classes-per-anchor-count-anchors``) are known, any further row and
    the count are open (NaN; the count at least the known rows). Batch 1 with one row per anchor only (ValueError
    otherwise)."""
    return detection_output_with(case, ["fast-unshared-anchors-past-scores"])


@register_model("DetectionOutput", name="scores-as-input-codes")
def detection_output_scores_as_input_codes(case: Any) -> list[np.ndarray]:
    """The HTP simulator's fixed-point DetectionOutput (finding detectionoutput-fixed-scores-input-codes): out[0] holds
    the selected scores' codes on in[0]'s grid, read through out[0]'s encoding (code 100 of 1/255 comes back as
    0.784 x 2 with out[0] at 2/255); boxes, labels and counts are the reference's."""
    return detection_output_with(case, ["scores-as-input-codes"])


@register_model("DetectionOutput", name="batches-decoded-against-first-anchors")
def detection_output_batches_decoded_against_first_anchors(case: Any) -> list[np.ndarray]:
    """The HTP simulator's DetectionOutput with batch > 1 (finding detectionoutput-batch-first-anchors): every batch's
    boxes are decoded against in[2]'s first num_anchors rows, where in[2] ([num_anchors * batch, 4], line 2750)
    holds each batch's own anchors."""
    return detection_output_with(case, ["batches-decoded-against-first-anchors"])


@register_model("DetectionOutput", name="unshared-boxes-against-anchor-rows")
def detection_output_unshared_boxes_against_anchor_rows(case: Any) -> list[np.ndarray]:
    """The HTP simulator's DetectionOutput with share_location false (finding detectionoutput-unshared-location-anchor-
    rows): the box of anchor a for class c is decoded against in[2]'s row a * num_classes + c, as if in[2] held a box
    per class. A row past in[2] reads other memory: such a box is left open (NaN). Where NMS weighs one of those boxes
    against others, what it keeps depends on that memory, and the model (which keeps such a box beside every other)
    may then disagree with the backend on what was kept: the case stays a failure beside the finding."""
    return detection_output_with(case, ["unshared-boxes-against-anchor-rows"])


# Finding detectionoutput-f16-specials-open: FLOAT_16 DetectionOutput decodes a box from an infinite delta (or one at
# 65504) to no IEEE value (h = 0 from dh = +inf: y1 = y2 = the centre; 7.4e25 and -7.4e25 from dx = -inf), every
# coordinate the specials do not decide right: the float kernels' specials symptom (reference/specials_models.py).
register_symptom("DetectionOutput", name=SPECIALS_OPEN)(specials_open)


@register_model("MultiClassNms", name="per-box-rows")
def multi_class_nms_per_box_rows(case: Any) -> list[np.ndarray]:
    """The HTP simulator's hard MultiClassNms after v68 (finding multiclassnms-f32-per-box-rows): one class-agnostic
    NMS over the boxes, each scored by its highest class score (kept when that score is at least score_threshold,
    suppressed when its IoU with a box already selected is above iou_threshold), then every class of each selected box,
    box by box in selection order, the classes in descending order of score (those under score_threshold too), one row
    each; out[3] counts the selected boxes, not the rows. Rows after the last box's are open (NaN: the backend leaves
    them as they were). Measured with max_num_boxes = num_boxes x num_classes only, and only hard NMS (soft NMS fails
    at execute): another case is not covered (an error)."""
    from reference.boxes import greedy_nms, hard_decay
    from reference.expected import arguments

    inputs, params = arguments(case)
    boxes, scores = _f64(inputs[0]), _f64(inputs[1])
    features = [_f64(f) for f in inputs[2:] if f is not None]
    batch, num_boxes, num_classes = scores.shape
    cap = int(case.outputs[0].shape[1])
    if float(scalar(params, "soft_nms_sigma", 0.0)) != 0.0 or cap != num_boxes * num_classes:
        raise ValueError("measured with hard NMS and max_num_boxes = num_boxes x num_classes only")
    decay, threshold = hard_decay(float(scalar(params, "iou_threshold")), suppress_equal=False), float(
        scalar(params, "score_threshold", 0.0))
    out_boxes, out_scores, out_classes = np.full((batch, cap, 4), np.nan), np.full((batch, cap), np.nan), np.full(
        (batch, cap), np.nan)
    out_feats = [np.full((batch, cap, *f.shape[2:]), np.nan) for f in features]
    counts = np.zeros(batch)
    for b in range(batch):
        top = scores[b].max(axis=1)
        cand = np.flatnonzero(top >= threshold)
        selected, _ = greedy_nms(boxes[b, cand], top[cand], decay)
        counts[b] = len(selected)
        for k, i in enumerate(int(cand[s]) for s in selected):
            rows = slice(k * num_classes, (k + 1) * num_classes)
            order = np.argsort(-scores[b, i], kind="stable")
            out_boxes[b, rows], out_scores[b, rows], out_classes[b, rows] = boxes[b, i], scores[b, i, order], order
            for f, of in zip(features, out_feats, strict=True):
                of[b, rows] = f[b, i]
    return [out_boxes, out_scores, out_classes, counts, *out_feats]
