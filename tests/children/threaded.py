"""A worker child whose preparation starts a thread: a zygote holding it must refuse to fork (the thread would be
missing in the fork), and the worker must then start the ordinary way."""

from __future__ import annotations

import os
import sys
import threading
import time
from typing import Any

from adapters.worker import serve


def _handlers() -> dict[str, Any]:
    return {"hello": lambda cfg: {"pid": os.getpid(), "forked": os.environ.get("FORKED", "")}}


def prepare(cfg: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    threading.Thread(target=time.sleep, args=(3600,), daemon=True).start()
    return None, {"prepared": True}


def serve_prepared(state: Any, req_fd: int, rep_fd: int) -> int:
    return serve(req_fd, rep_fd, _handlers())


if __name__ == "__main__":
    sys.exit(serve(int(sys.argv[1]), int(sys.argv[2]), _handlers()))
