"""A worker child with a thread-free preparation: every worker is forked from its zygote. ``hello`` says which
process answers and what the zygote prepared, ``touch`` changes the process' state, ``read`` reads it back: a
forked worker starts from the prepared state, never from an earlier worker's."""

from __future__ import annotations

import os
import sys
from typing import Any

from adapters.worker import serve

_STATE: dict[str, Any] = {}


def _handlers() -> dict[str, Any]:
    return {"hello": lambda cfg: {"pid": os.getpid(), "prepared": _STATE.get("prepared", False)},
            "touch": lambda: _STATE.update(touched=True),
            "read": lambda: _STATE.get("touched", False)}  # fmt: skip


def prepare(cfg: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    _STATE["prepared"] = True
    return None, {"prepared": True}


def serve_prepared(state: Any, req_fd: int, rep_fd: int) -> int:
    return serve(req_fd, rep_fd, _handlers())


if __name__ == "__main__":
    sys.exit(serve(int(sys.argv[1]), int(sys.argv[2]), _handlers()))
