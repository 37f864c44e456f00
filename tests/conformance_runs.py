"""Running the conformance plugin the way users do, in a child process, for the suite's own tests."""

from __future__ import annotations

import os
import subprocess
import sys
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
    """The pytest11 entry point is installed (asked from a neutral directory: a checkout's own
    ``*.egg-info`` on sys.path would answer yes for a plain ``python -m pytest`` run from it)."""
    code = ("from importlib.metadata import entry_points as e; "
            "print(any(p.value == 'conformance.plugin' for p in e(group='pytest11')))")  # fmt: skip
    proc = subprocess.run([sys.executable, "-c", code], cwd="/", capture_output=True, text=True, env=child_env())
    return proc.stdout.strip() == "True"


def lines(text: str) -> list[str]:
    return [x for x in text.splitlines() if x.strip()]
