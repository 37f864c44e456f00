"""Running the conformance plugin the way users do, in a child process, for the suite's own tests."""

from __future__ import annotations

import os
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

from tests.paths import REPO


def child_env(**extra: str) -> dict[str, str]:
    """This environment, minus what would make the child think it is one of our xdist workers."""
    drop = ("PYTEST_XDIST", "PYTEST_CURRENT", "PYTEST_ADDOPTS")
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    env.update(extra)
    return env


def pytest_cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "pytest", "-p", "no:randomly", "-p", "no:cacheprovider", *args]


def run(*args: str, cwd: Path = REPO, timeout: float = 600, cache: bool = False, **env: str):
    cmd = pytest_cmd(*args) if not cache else [sys.executable, "-m", "pytest", "-p", "no:randomly", *args]
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=child_env(**env))


def plugin_installed() -> bool:
    """The pytest11 entry point is in this environment's metadata (an install from this pyproject)."""
    return any(ep.value == "cases.plugin" for ep in entry_points(group="pytest11"))


def lines(text: str) -> list[str]:
    return [x for x in text.splitlines() if x.strip()]
