"""The options of a conformance run, declared once: the pytest plugin's (``conformance/plugin.py``), the ones
``python -m conformance replay`` takes (a recorded replay line carries them: ``replay_line`` below,
``tests/test_replay_lines.py``) and the ones the main job (``python -m conformance``) shares, with the checks all
three apply to them.

Each ``Option`` is one row: its flag, how it parses (type, action, choices, metavar), its default and help in a
conformance run, and whether replay takes it (``replay``, with replay's own default or help where a single case
needs another). The QNN target and release options (``--qnn-soc``, ``--qnn-arch``, ``--qnn-sdk``) belong to
the QNN adapters' plugin (adapters/qnn/pytest_plugin.py): it must act on them before this one opens a backend;
replay's rows for the first two are made from that plugin's declaration (``pytest=False`` here).
"""

from __future__ import annotations

import argparse
import math
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from adapters.qnn import pytest_plugin as qnn_plugin
from opdefs import spec

PRECISIONS = ("auto", "float32", "float16", "none")
_SAME = object()  # replay takes the run's default or help


@dataclass(frozen=True)
class Option:
    flag: str
    help: str
    type: Any = None
    default: Any = None
    action: str | None = None  # "store_true", "append"
    metavar: str | None = None
    choices: tuple[str, ...] | None = None
    pytest: bool = True  # declared by the conformance plugin
    replay: bool = False  # taken by ``python -m conformance replay`` (and so may be in a recorded replay line)
    replay_default: Any = _SAME
    replay_help: Any = _SAME

    @property
    def dest(self) -> str:
        return self.flag.lstrip("-").replace("-", "_")

    def kwargs(self, default: Any = _SAME, help: Any = _SAME) -> dict[str, Any]:
        out: dict[str, Any] = {"help": self.help if help is _SAME else help}
        default = self.default if default is _SAME else default
        if self.action:
            out["action"] = self.action
        if self.action == "append":
            default = []  # a fresh list per parser
        if self.action != "store_true":
            out["default"] = default
            for key in ("type", "metavar", "choices"):
                if getattr(self, key) is not None:
                    out[key] = list(self.choices) if key == "choices" else getattr(self, key)
        return out


OPTIONS: tuple[Option, ...] = (
    Option("--backend", "adapter to run the conformance cases on: a registered name (reference, qnn-htp, qnn, "
           "onnxruntime, ort-qnn, or one of another package's) or package.module:factory",
           replay=True, replay_default="reference"),
    Option("--op", "regex: only ops whose name matches"),
    Option("--examples", "typical-tier cases per op x datatype configuration (every one runs and is recorded)",
           type=int),
    Option("--edge-examples", "edge-tier cases per op x datatype configuration (default: a quarter of --examples, "
           "at least 1)", type=int),
    Option("--tier", "which tiers to run: typical, edge, model (the layer shapes of public models the op's spec "
           "lists), both (typical and edge), deployed (typical and model: the shapes deployed models run) or all",
           choices=("typical", "edge", "model", "both", "deployed", "all"), default="all"),
    Option("--model-examples", "model-tier cases (layers) per op x datatype configuration, each next configuration "
           "taking the next layers of the op's list (default 1)", type=int),
    Option("--seed", "hypothesis seed: the same seed gives the same cases (default: a random one, recorded)",
           type=int),
    Option("--results", "JSONL file: a run header, then one results record per case as it finishes"),
    Option("--resume", "continue the run recorded in --results: cases already recorded are not run again",
           action="store_true"),
    Option("--no-shrink", "skip the shrinking step that saves the smallest failing case of a failing cell",
           action="store_true"),
    Option("--expectations", "known-failures YAML (XFAIL/XPASS)", action="append", replay=True,
           replay_help="findings file(s): say which finding the case shows (its model checked), or none"),
    Option("--qnn-backend-lib", "QNN backend library (default: the wheel's libQnnHtp.so)", replay=True),
    Option("--qnn-precision", f"HTP graph precision: {', '.join(PRECISIONS)}", default="auto", replay=True,
           replay_default=None),
    # the target: declared by the QNN adapters' plugin, which acts on it first; replay takes it as the run did
    *(Option(flag, help_text, metavar=metavar, pytest=False, replay=True)
      for flag, help_text, metavar in qnn_plugin.TARGET_OPTIONS),
    Option("--case-timeout", "the most seconds a case (or a batch) may take on a worker-backed backend before it is "
           "killed (TIMEOUT): its own budget is 2 s plus 1 s per 50,000 elements, up to this; default 5. The worker's "
           "own time counts (the wall clock less its waits for a CPU: adapters.clock)", type=float,
           metavar="SECONDS", replay=True,
           replay_help="seconds the case may take on a worker-backed backend (the run's --case-timeout)"),
    Option("--qnn-op-package", "register a QNN op package (backendRegisterOpPackage) before the run; repeatable",
           action="append", metavar="PATH:INTERFACE[:TARGET]", replay=True,
           replay_help="register a QNN op package before the case runs, as the run did; repeatable"),
    Option("--specs", "another directory of op specs (e.g. an op package's), searched before the built-in one",
           action="append", metavar="DIR", replay=True,
           replay_help="another directory of op specs (the run's --specs), searched before the built-in one"),
    Option("--case-dir", "where non-PASS cases are saved for replay"),
    Option("--shard", "run slice K of N (1-based): cells split deterministically, every machine giving the same "
           "--seed", metavar="K/N"),
    Option("--max-elements", "cap on elements per generated tensor", type=int),
    Option("--case-cache", "keep drawn cells here and read them back on the next backend with the same seed (the "
           "main job draws each cell once for all its backends); keyed by everything a draw depends on",
           metavar="DIR"),
    Option("--batch", "cases per backend call where the adapter can batch (one QNN graph / ORT session for many); "
           "1: one graph per case. Default: the adapter's own (32 for the built-in ones)", type=int, metavar="N"),
)
BY_FLAG = {o.flag: o for o in OPTIONS}
# whole numbers of at least 1
COUNTS = ("--examples", "--edge-examples", "--model-examples", "--max-elements", "--batch")


def add_to_pytest(group: Any) -> None:
    """The conformance plugin's options, into its pytest option group."""
    for o in OPTIONS:
        if o.pytest:
            group.addoption(o.flag, **o.kwargs())


def add_replay_options(parser: argparse.ArgumentParser) -> None:
    """What ``python -m conformance replay`` takes beside the case: every option a recorded replay line may carry."""
    for o in OPTIONS:
        if o.replay:
            parser.add_argument(o.flag, **o.kwargs(o.replay_default, o.replay_help))


def add_shared(parser: argparse.ArgumentParser, flags: Iterable[str], defaults: dict[str, Any] | None = None,
               helps: dict[str, str] | None = None) -> None:  # fmt: skip
    """Options another command (the main job) passes on to the conformance run, declared as the run declares them;
    ``defaults`` and ``helps`` are that command's own where they differ."""
    defaults, helps = defaults or {}, helps or {}
    for flag in flags:
        o = BY_FLAG[flag]
        parser.add_argument(flag, **o.kwargs(defaults.get(flag, _SAME), helps.get(flag, _SAME)))


SPECS_ENV = spec.SPECS_ENV  # the run's --specs directories, searched first by opdefs


def use_specs(dirs: Iterable[str]) -> None:
    """Have opdefs search ``dirs`` (a run's ``--specs``) before the built-in specs, in this process and those it starts
    (pytest-xdist workers, the main job's backends): the one channel the plugin, replay and the main job all use."""
    resolved = [str(Path(d).expanduser().resolve()) for d in dirs]
    if resolved:
        os.environ[SPECS_ENV] = os.pathsep.join(resolved)


def replay_line(options: dict[str, Any], environ: dict[str, str]) -> str:
    """The options a case's replay line carries, so that it runs alone as the run ran it: the backend library,
    the graph precision, the op packages, the target (from the environment the QNN plugin set), the extra spec
    directories (the case's op may live there) and the case timeout. Every flag here is a replay row of the table
    (``tests/test_options.py`` checks it)."""
    from adapters.qnn.adapter import ENV_ARCH, ENV_SOC  # set by the QNN plugin's --qnn-soc/--qnn-arch

    adapter_options = options.get("adapter_options") or {}
    opts = []
    if options.get("qnn_backend_lib"):
        opts.append(f"--qnn-backend-lib {options['qnn_backend_lib']}")
    if options.get("qnn_precision") not in (None, "auto"):
        opts.append(f"--qnn-precision {options['qnn_precision']}")
    for pkg in adapter_options.get("op_packages", []):
        opts.append(f"--qnn-op-package {':'.join(x for x in (pkg['path'], pkg['interface'], pkg['target']) if x)}")
    for flag, env in (("--qnn-soc", ENV_SOC), ("--qnn-arch", ENV_ARCH)):
        if environ.get(env, "").strip():
            opts.append(f"{flag} {environ[env].strip()}")
    for d in environ.get(SPECS_ENV, "").split(os.pathsep):
        if d:
            opts.append(f"--specs {d}")
    if adapter_options.get("timeout") is not None:
        opts.append(f"--case-timeout {adapter_options['timeout']}")
    return " ".join(opts)


# ---- the checks at the door, one wording wherever the option is given ---------------------------------------
def count_problem(flag: str, value: int | None) -> str | None:
    if value is not None and value < 1:
        return f"{flag} {value}: must be a whole number of at least 1"
    return None


def timeout_problem(value: float | None) -> str | None:
    if value is not None and not (math.isfinite(value) and value > 0):
        return f"--case-timeout {value:g}: must be a number of seconds above 0"
    return None


def specs_problem(text: str) -> str | None:
    """A ``--specs`` directory that is not there would be ignored, and its ops missing without a word."""
    path = Path(text).expanduser()
    if not path.is_dir():
        return f"--specs {text}: {'not a directory' if path.exists() else 'no such directory'}"
    try:
        found = any(path.glob("*.yaml"))
    except OSError as e:
        return f"--specs {text}: cannot be read: {e.strerror or e}"
    if not found:
        return f"--specs {text}: holds no op spec (*.yaml)"
    return None


def op_problem(pattern: str | None, names: list[str]) -> str | None:
    """An ``--op`` that is no regular expression, or matches none of the spec ops ``names``."""
    if pattern is None:
        return None
    try:
        rx = re.compile(pattern)
    except re.error as e:
        return f"--op {pattern!r}: not a valid regular expression ({e})"
    if not any(rx.search(n) for n in names):
        import difflib

        close = difflib.get_close_matches(pattern.strip("^$"), names, n=3, cutoff=0.5)
        hint = f"; did you mean {', '.join(close)}?" if close else "; `ls` the opdefs/ directory for the names"
        return f"--op {pattern!r} matches none of the {len(names)} ops{hint}"
    return None
