"""Run one ort-qnn finding's ONNX model with plain onnxruntime and the QNN execution provider.

    python findings/cases/ort-qnn/repro.py findings/cases/ort-qnn/<id>.onnx

Needs only ``onnxruntime``, ``onnxruntime-qnn`` and ``numpy`` (none of the suite), so a model and its
inputs can go upstream as they are. ``<id>.npz`` beside the model holds the feeds (``feed:<graph input>``),
what the QNN op the EP maps the node to must produce (``expected:<graph output>``, in the output's own type:
codes for a quantized output) and per element the largest difference the suite accepts (``budget:<graph
output>``, in the same units: quantization steps, or an absolute difference for a float output). The
session is built as the suite builds it: CPU fallback off, so every node runs on the HTP or the session is
refused; graph input/output (de)quantization on the HTP, as a QNN graph receives codes.

Prints what happened (the first elements outside the budget, expected against got, ``--show N`` of them) and ends
with one line: ``REPRODUCES: ...`` (exit 0) when the model shows its symptom (the session or the run fails, or an
output is outside its budget), ``DOES NOT REPRODUCE: ...`` (exit 1). ``--json`` prints one JSON object instead, for
scripts. ``--provider-options FILE`` (a JSON object) sets further QNN EP options over those above, e.g. the
``soc_model`` or ``enable_htp_fp16_precision`` a finding was seen with (``ep_options.json`` of an upstream report);
a value that starts with ``<onnxruntime_qnn>/`` names a file of the installed wheel
(``<onnxruntime_qnn>/libQnnSaver.so``), so that such a file works on any machine.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

EP = "QNNExecutionProvider"
WHEEL_DIR = "<onnxruntime_qnn>"  # in an option's value: the installed onnxruntime_qnn package's directory


def provider_options(backend_path: str | None = None, extra: dict | None = None) -> dict[str, str]:
    """The QNN EP options of the session: the suite's two, then ``extra`` over them (a file's ``backend_path`` too)."""
    import onnxruntime_qnn

    wheel = str(Path(onnxruntime_qnn.__file__).parent)
    options = {"backend_path": backend_path or onnxruntime_qnn.get_qnn_htp_path(), "offload_graph_io_quantization": "0"}
    options.update({str(k): str(v).replace(WHEEL_DIR, wheel, 1) if str(v).startswith(WHEEL_DIR) else str(v)
                    for k, v in (extra or {}).items() if v not in (None, "")})  # fmt: skip
    return options


def session(model: Path, backend_path: str | None = None, extra: dict | None = None):  # noqa: ANN201
    """An InferenceSession on the QNN EP alone (HTP backend of the onnxruntime-qnn wheel unless given)."""
    import onnxruntime as ort
    import onnxruntime_qnn

    if not any(d.ep_name == EP for d in ort.get_ep_devices()):
        ort.register_execution_provider_library(EP, onnxruntime_qnn.get_library_path())
    devices = [d for d in ort.get_ep_devices() if d.ep_name == EP]
    options = ort.SessionOptions()
    options.add_session_config_entry("session.disable_cpu_ep_fallback", "1")
    options.add_provider_for_devices(devices, provider_options(backend_path, extra))
    return ort.InferenceSession(str(model), options, enable_fallback=0)


def run(model: Path, backend_path: str | None = None, extra: dict | None = None, show: int = 0) -> dict:
    """What the model does on the EP: the failing step and its message, or per output the largest
    difference from the expected values and how many elements are outside the budget."""
    data = np.load(model.with_suffix(".npz"))
    feeds = {k.split(":", 1)[1]: data[k] for k in data.files if k.startswith("feed:")}
    try:
        sess = session(model, backend_path, extra)
    except Exception as e:  # noqa: BLE001 - any refusal is the result
        return {"step": "session", "error": " ".join(str(e).split())}
    try:
        names = [o.name for o in sess.get_outputs()]
        arrays = sess.run(names, feeds)
    except Exception as e:  # noqa: BLE001
        return {"step": "run", "error": " ".join(str(e).split())}
    outputs = {}
    for name, got in zip(names, arrays, strict=True):
        want = data[f"expected:{name}"]
        budget = data[f"budget:{name}"].astype(np.float64)
        got64, want64 = np.asarray(got, np.float64).reshape(want.shape), want.astype(np.float64)
        both_nan = np.isnan(got64) & np.isnan(want64)
        diff = np.where(both_nan, 0.0, np.abs(got64 - want64))
        diff = np.where(np.isnan(diff), np.inf, diff)
        outside = diff > budget
        worst = int(np.argmax(np.where(outside, diff, -1.0))) if diff.size else 0
        first = np.flatnonzero(outside.reshape(-1))[:show]
        listed = [{"index": [int(i) for i in np.unravel_index(k, diff.shape)],
                   "expected": float(want64.reshape(-1)[k]), "got": float(got64.reshape(-1)[k]),
                   "allowed": float(np.broadcast_to(budget, diff.shape).reshape(-1)[k])} for k in first]  # fmt: skip
        outputs[name] = {"outside": int(np.sum(outside)), "elements": int(diff.size),
                         "budget": float(np.broadcast_to(budget, diff.shape).reshape(-1)[worst]) if diff.size else 0.0,
                         "max_diff": float(diff.max()) if diff.size else 0.0,
                         "first": {"index": [int(i) for i in np.unravel_index(worst, diff.shape)] if diff.size else [],
                                   "expected": float(want64.reshape(-1)[worst]) if diff.size else None,
                                   "got": float(got64.reshape(-1)[worst]) if diff.size else None},
                         "differing": listed}  # fmt: skip
    return {"step": "ok", "outputs": outputs}


def verdict(result: dict) -> tuple[bool, str]:
    if result["step"] != "ok":
        return True, f"{result['step']} failed: {result['error'][:400]}"
    bad = {n: o for n, o in result["outputs"].items() if o["outside"]}
    if not bad:
        return False, "every output is within its budget"
    name, o = next(iter(bad.items()))
    first = o["first"]
    return True, (f"{name}: {o['outside']}/{o['elements']} elements outside {o['budget']:g}; at {first['index']} "
                  f"expected {first['expected']:g}, got {first['got']:g}")  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model", type=Path, help="<id>.onnx (its <id>.npz beside it)")
    ap.add_argument("--backend-path", default=None, help="QNN backend library (default: the wheel's libQnnHtp.so)")
    ap.add_argument("--provider-options", type=Path, default=None,
                    help="a JSON object of further QNN EP options (e.g. ep_options.json beside the model)")
    ap.add_argument("--show", type=int, default=8, help="list this many elements outside the budget per output")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    extra = json.loads(args.provider_options.read_text(encoding="utf-8")) if args.provider_options else None
    result = run(args.model, args.backend_path, extra, max(0, args.show))
    shows, why = verdict(result)
    if args.json:
        print(json.dumps({**result, "reproduces": shows, "why": why}))
    else:
        print(f"session: QNN EP options {json.dumps(provider_options(args.backend_path, extra), sort_keys=True)}")
        for name, o in (result.get("outputs") or {}).items():
            for d in o["differing"]:
                print(f"{name}{d['index']}: expected {d['expected']:g}, got {d['got']:g} (allowed difference "
                      f"{d['allowed']:g})")  # fmt: skip
        print(("REPRODUCES: " if shows else "DOES NOT REPRODUCE: ") + why)
    return 0 if shows else 1


if __name__ == "__main__":
    sys.exit(main())
