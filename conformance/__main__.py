"""``python -m conformance [OPTIONS]``: the main job. ``python -m conformance replay CASE --backend NAME`` and
``python -m conformance onnx CASE STEM``: one saved case (``conformance/replay.py``). ``python -m conformance upstream
FINDING-ID|CASE --out DIR``: a finding as an upstream bug report (``conformance/upstream.py``)."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    from conformance import replay

    if args and args[0] in replay.COMMANDS:
        return replay.main(args)
    if args and args[0] == "upstream":
        from conformance import upstream

        return upstream.main(args[1:])
    from conformance import main_job

    return main_job.main(args)


if __name__ == "__main__":
    sys.exit(main())
