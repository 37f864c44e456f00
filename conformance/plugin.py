"""The pytest plugin of the conformance run: its options, the checks at the door, the results recorder.

Why a plugin registered under the ``pytest11`` entry point and not the repository's ``conftest.py``:
pytest must know ``--backend``, ``--results`` and the rest while it parses the command line, before it
picks a rootdir (an option it does not know takes its value for a path); and the run must work from
any directory once the package is installed, editable or not. Without ``--backend`` the plugin does
nothing, so it is harmless in every other pytest run of the same environment.

What it holds for ``conformance/test_conformance.py``:
- the checks at the door: an unknown or unavailable backend, ``--examples`` below 1, a
  ``--case-timeout`` that is not a positive number of seconds, an ``--op`` that is no regular
  expression or matches no op, an unknown ``--qnn-precision``, a missing op package, a ``--specs``
  directory or ``--expectations`` file that is missing or does not parse, a ``--results`` that cannot be
  written or that another run is writing: each ends the run with one line and exit code 4 (usage)
  before any case runs;
- the run's identity, decided once by the controller and handed to pytest-xdist workers: run id,
  seed (chosen and written down when not given, so the same command can resume), configuration;
- the results file: a run header first (``reports.record.RunHeader``), then every record appended
  as one whole line the moment its case finishes, by whichever process ran it, while the run holds
  the file's lock (``reports.record.RunLock``: one run writes a results file); a disk that cannot take
  a record stops the run with one line;
- the run's lifetime: SIGTERM tears the run down as Ctrl-C does, xdist workers die with the
  controller, a worker that dies mid-cell leaves a CRASH record for its cell, and a run that ends
  with cases still to run says how many and how to finish them;
- ``--resume``: the cases a killed run already recorded are taken from the file, not run again; a cell
  counts as finished only when its cell record is there and every case it counted is recorded.
"""

from __future__ import annotations

import json
import logging
import os
import random
import re
import signal
import sys
import time
import uuid
import zlib
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, settings

from conformance import options as option_table
from conformance.options import PRECISIONS
from conformance.run_end import RunEnd
from reports import record as results

settings.register_profile("dev", max_examples=5, deadline=None, suppress_health_check=list(HealthCheck))
settings.register_profile("ci", max_examples=10, deadline=None, suppress_health_check=list(HealthCheck),
                          derandomize=True, database=None)  # fmt: skip
settings.register_profile("thorough", max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))


def use_profile() -> None:
    """$HYPOTHESIS_PROFILE (default "dev"), for conformance runs and the suite's own tests only: the
    plugin is loaded by every pytest run of the environment and must not change other projects'."""
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))


SPECS_ENV = option_table.SPECS_ENV  # read by opdefs.spec: extra spec directories, searched first
_WIRE = "qnn_conformance_run"  # key of the run description in an xdist worker's workerinput


@dataclass
class Prior:
    """What a killed run already recorded, keyed the way the conformance tests look it up."""

    cases: dict[tuple[str, str, str, str], results.Record] = field(default_factory=dict)  # op, config, tier, id
    cells: dict[tuple[str, str, str], results.Record] = field(default_factory=dict)  # op, config, tier
    shrunk: set[tuple[str, str, str]] = field(default_factory=set)
    negatives: dict[tuple[str, str], results.Record] = field(default_factory=dict)  # op, constraint id

    @classmethod
    def load(cls, path: Path) -> Prior:
        prior = cls()
        if not path.exists():
            return prior
        for r in results.read([path], warn=lambda m: None):  # the controller already reported a torn line
            if r.kind == results.POSITIVE and r.case_id:
                prior.cases[(r.op, r.config, r.tier, r.case_id)] = r
            elif r.kind == results.CELL:
                prior.cells[(r.op, r.config, r.tier)] = r
            elif r.kind == results.SHRUNK:
                prior.shrunk.add((r.op, r.config, r.tier))
            elif r.kind == results.NEGATIVE and r.broken:
                prior.negatives[(r.op, r.broken)] = r
        # a cell record stands for a finished cell only when every case it counts is recorded too: an older
        # writer recorded the cell of an interrupted draw as well, and a torn line may have cost a case
        recorded: dict[tuple[str, str, str], int] = {}
        for op, config, tier, _ in prior.cases:
            recorded[(op, config, tier)] = recorded.get((op, config, tier), 0) + 1
        prior.cells = {cell: r for cell, r in prior.cells.items()
                       if recorded.get(cell, 0) >= int(r.extra.get("cases", 0) or 0)}  # fmt: skip
        return prior

    def __len__(self) -> int:
        return len(self.cases) + len(self.negatives)


RUN = pytest.StashKey["Run | None"]()
ADAPTER = pytest.StashKey[Any]()  # the adapter opened at the door, handed to the tests of a plain run
LOCK = pytest.StashKey[Any]()  # the controller's reports.record.RunLock on --results
EXPECTATIONS = pytest.StashKey[Any]()  # the --expectations entries, read at the door
SIGTERM = pytest.StashKey[Any]()  # the SIGTERM handler the run replaced


@dataclass
class Run:
    """One conformance run as the controller decided it; workers receive it whole."""

    backend: str
    adapter_options: dict[str, Any]
    run_id: str
    seed: int
    results: str | None
    case_dir: str
    resume: bool
    configuration: dict[str, Any]
    lease: str = ""  # the run's hold on its results file (reports.record.RunLock); xdist workers append with it
    controller: int = 0  # the controller's pid: its xdist workers end when it does

    def wire(self) -> dict[str, Any]:
        return asdict(self)


def pytest_addoption(parser: pytest.Parser) -> None:
    option_table.add_to_pytest(parser.getgroup("conformance", "QNN op conformance run (qnn-opdef-conformance)"))


# ---------------------------------------------------------------------------------------------
# The door
# ---------------------------------------------------------------------------------------------
def _usage(message: str) -> pytest.UsageError:
    return pytest.UsageError(message.replace("\n", " "))


def _check_counts(config: pytest.Config) -> None:
    problems = [option_table.count_problem(opt, config.getoption(opt)) for opt in option_table.COUNTS]
    problems.append(option_table.timeout_problem(config.getoption("--case-timeout")))
    problem = next((p for p in problems if p), None)
    if problem:
        raise _usage(problem)


def _check_specs(config: pytest.Config) -> None:
    for text in config.getoption("--specs"):
        problem = option_table.specs_problem(text)
        if problem:
            raise _usage(problem)


def _load_expectations(config: pytest.Config) -> Any:
    """Read at the door: a missing or malformed file is one line here instead of an error in every test."""
    from reports.expectations import Expectations, ExpectationsError

    paths = config.getoption("--expectations")
    try:
        return Expectations.load_all(paths) if paths else Expectations()
    except ExpectationsError as e:
        raise _usage(f"--expectations: {e}") from None
    except (OSError, UnicodeDecodeError, RecursionError) as e:
        raise _usage(f"--expectations {', '.join(paths)}: cannot be read: {type(e).__name__}: {e}") from None


def _check_writable(option: str, text: str) -> Path:
    """Where ``option`` writes (a file or a directory to be made): refused now when it cannot be, rather than
    with a traceback once cases ran."""
    path = Path(text).expanduser().resolve()
    if option == "--results" and path.exists() and not path.is_file():
        raise _usage(f"{option} {text}: not a regular file")
    if option != "--results" and path.exists() and not path.is_dir():
        raise _usage(f"{option} {text}: not a directory")
    parent = path.parent if option == "--results" else path
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir():
        raise _usage(f"{option} {text}: {parent} is not a directory")
    if not os.access(parent, os.W_OK | os.X_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise _usage(f"{option} {text}: not writable")
    return path


def _check_precision(config: pytest.Config) -> None:
    value = config.getoption("--qnn-precision")
    if value not in PRECISIONS:
        raise _usage(f"--qnn-precision {value!r}: unknown precision; choose from {', '.join(PRECISIONS)}")


def _spec_names(config: pytest.Config) -> list[str]:
    from opdefs import spec

    return sorted({p.stem for d in spec.spec_dirs() for p in spec.spec_files(d)})


def _check_op(config: pytest.Config) -> None:
    pattern = config.getoption("--op")
    problem = option_table.op_problem(pattern, _spec_names(config)) if pattern is not None else None
    if problem:
        raise _usage(problem)


def parse_op_package(text: str) -> dict[str, str]:
    """``PATH:INTERFACE[:TARGET]`` -> {"path", "interface", "target"}; a path may not hold ':'."""
    parts = text.split(":")
    if len(parts) not in (2, 3) or not all(parts):
        raise ValueError(f"--qnn-op-package {text!r}: expected PATH:INTERFACE or PATH:INTERFACE:TARGET")
    return {"path": parts[0], "interface": parts[1], "target": parts[2] if len(parts) == 3 else ""}


def adapter_options(config: pytest.Config) -> dict[str, Any]:
    """What ``adapters.get`` receives: only the options the user set (plus the precision every QNN-based
    adapter takes), so an adapter that cannot use an option says so instead of ignoring it."""
    opts: dict[str, Any] = {"precision": config.getoption("--qnn-precision")}
    if config.getoption("--qnn-backend-lib"):
        opts["library"] = str(Path(config.getoption("--qnn-backend-lib")).expanduser().resolve())
    if config.getoption("--case-timeout") is not None:
        opts["timeout"] = config.getoption("--case-timeout")
    packages = []
    for text in config.getoption("--qnn-op-package"):
        try:
            pkg = parse_op_package(text)
        except ValueError as e:
            raise _usage(str(e)) from None
        path = Path(pkg["path"]).expanduser().resolve()
        if not path.is_file():
            raise _usage(f"--qnn-op-package {text!r}: no file {path}")
        packages.append({**pkg, "path": str(path)})
    if packages:
        opts["op_packages"] = packages
    return opts


class _Quiet(logging.Handler):
    """Keeps a backend's own log lines (sent up by the QNN workers) off the terminal at the door, where
    the refusal is one line; pytest's log capture takes over once the session starts."""

    def emit(self, record: logging.LogRecord) -> None:
        pass


def _open_backend(name: str, options: dict[str, Any]) -> Any:
    import adapters

    try:
        adapter = adapters.get(name, options)
    except adapters.UnknownBackend as e:
        raise _usage(f"--backend {name!r}: {e}") from None
    except (ValueError, TypeError, ImportError, AttributeError) as e:
        raise _usage(f"--backend {name}: cannot build the adapter: {type(e).__name__}: {e}") from None
    quiet, logger = _Quiet(), logging.getLogger("adapters")
    logger.addHandler(quiet)
    try:
        ok, why = adapter.available()
    finally:
        logger.removeHandler(quiet)
    if not ok:
        adapter.close()
        first = str(why).strip().splitlines()[0] if str(why).strip() else "no reason given"
        raise _usage(f"--backend {name}: not available here: {first[:400]}")
    return adapter


def _uses_xdist(config: pytest.Config) -> bool:
    n = getattr(config.option, "numprocesses", None)
    return bool(n) and getattr(config.option, "dist", "no") != "no"


def examples_per_tier(config_or_options: Any) -> tuple[int, int]:
    get = config_or_options.getoption if hasattr(config_or_options, "getoption") else None
    typical = (get("--examples") if get else config_or_options.get("examples")) or settings.default.max_examples
    edge = (get("--edge-examples") if get else config_or_options.get("edge_examples")) or max(1, -(-typical // 4))
    return typical, edge


def _configuration(config: pytest.Config, name: str, seed: int, info: dict[str, Any],
                   options: dict[str, Any]) -> dict[str, Any]:  # fmt: skip
    """What two runs of one backend must share to be merged or resumed (the op selection is not part of
    it: runs split by --op merge)."""
    typical, edge = examples_per_tier(config)
    return {
        "backend": name,
        "build": info,
        "seed": seed,
        "examples": typical,
        "edge_examples": edge,
        "tier": config.getoption("--tier"),
        "model_examples": config.getoption("--model-examples") or 1,
        "options": {
            **{k: v for k, v in options.items() if k != "library"},
            "library": options.get("library"),
            "max_elements": config.getoption("--max-elements"),
            "expectations": [str(Path(p).resolve()) for p in config.getoption("--expectations")],
            "specs": [str(Path(p).resolve()) for p in config.getoption("--specs")],
        },
    }


def _drop_torn_tail(path: Path) -> None:
    """A last line that is not JSON (cut by the kill) would be glued to the first record appended after
    it and become a bad line in the middle: it goes (its case is not recorded, so it runs again)."""
    data = path.read_bytes()
    body = data.rstrip(b"\n")
    start = body.rfind(b"\n") + 1
    try:
        json.loads(body[start:] or b"{}")
    except ValueError:
        with open(path, "r+b") as fh:
            fh.truncate(start)
        return
    if data and not data.endswith(b"\n"):
        with open(path, "ab") as fh:
            fh.write(b"\n")


def _resume_header(path: Path, configuration: dict[str, Any]) -> results.RunHeader | None:
    """The header of the run to continue; a different configuration is a usage error saying what differs."""
    if not path.exists():
        return None
    headers: list[results.RunHeader] = []
    torn: list[str] = []
    try:
        for _ in results.read_with_headers([path], headers, warn=torn.append):
            pass
    except (ValueError, OSError) as e:
        raise _usage(f"--resume: {e}") from None
    for message in torn:
        print(f"warning: {message}", file=sys.stderr)
    if not headers:
        raise _usage(f"--resume: {path} has no run header (not written by a conformance run); "
                     "rerun without --resume to start it over")  # fmt: skip
    first = headers[0]
    wanted = dict(configuration)
    if wanted.get("seed") is None:
        wanted["seed"] = first.configuration.get("seed")
    diffs = results.configuration_differences(first.configuration, wanted)
    if diffs:
        raise _usage(f"--resume: {path} holds a run with another configuration ({'; '.join(diffs[:4])}); "
                     "rerun without --resume to start over, or use another --results")  # fmt: skip
    return first


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "conformance: a generated conformance case run on --backend")
    name = config.getoption("--backend")
    option_table.use_specs(config.getoption("--specs"))
    if not name:
        if config.getoption("--op") and not hasattr(config, "workerinput"):
            raise _usage(f"--op {config.getoption('--op')!r} selects the ops of a conformance run: give --backend NAME "
                         "too (without it pytest runs the suite's own tests)")  # fmt: skip
        config.stash[RUN] = None
        return
    use_profile()
    _one_blas_thread()
    if config.option.showcapture == "all" and "--show-capture" not in " ".join(config.invocation_params.args):
        # a failing cell's message names its first failure and replay; the backend's log of every case of the cell
        # (a QNN graph's dozens of lines) is in each record's details: --show-capture=log brings it back here
        config.option.showcapture = "no"
    if config.args_source != pytest.Config.ArgsSource.ARGS:
        # `pytest --backend X` with no paths runs the conformance module, from any directory
        config.args = [str(Path(__file__).with_name("test_conformance.py"))]
    wire = getattr(config, "workerinput", {}).get(_WIRE)
    if wire is not None:  # an xdist worker: the controller decided everything
        config.stash[RUN] = run = Run(**wire)
        config.stash[ADAPTER] = None
        from adapters import lifetime

        if run.controller and os.getppid() == run.controller:  # a local worker (not one over ssh)
            lifetime.die_with_parent(run.controller)  # an orphan would go on writing another run's file
        _tear_down_on_sigterm(config)
        return
    if config.getoption("--resume") and not config.getoption("--results"):
        raise _usage("--resume needs --results FILE: the file of the run to continue")
    _check_counts(config)
    parse_shard(config.getoption("--shard"))
    _check_precision(config)
    _check_specs(config)
    _check_op(config)
    config.stash[EXPECTATIONS] = _load_expectations(config)
    results_path = config.getoption("--results")
    path = _check_writable("--results", results_path) if results_path else None
    if config.getoption("--case-dir"):
        _check_writable("--case-dir", config.getoption("--case-dir"))
    options = adapter_options(config)
    adapter = _open_backend(name, options)
    run_id = uuid.uuid4().hex[:12]
    try:
        lock = _lock(path, run_id) if path is not None else None  # before anything reads or writes the file
    except BaseException:
        adapter.close()
        raise
    config.stash[LOCK] = lock
    info = adapter.info() if hasattr(adapter, "info") else {}
    seed = config.getoption("--seed")
    configuration = _configuration(config, name, seed, info, options)
    resume = bool(config.getoption("--resume"))
    if path is not None:
        previous = _resume_header(path, configuration) if resume else None
        if previous is not None:
            run_id = previous.run_id
            lock.relabel(run_id)
            seed = previous.configuration.get("seed") if seed is None else seed
        elif resume:
            print(f"--resume: {path} does not exist yet; starting the run", file=sys.stderr)
            resume = False
    if seed is None:
        seed = random.SystemRandom().randrange(2**31)
    configuration["seed"] = seed
    header = results.RunHeader(run_id, name, configuration, datetime.now(UTC).isoformat(timespec="seconds"),
                               list(config.invocation_params.args), resumed=resume)  # fmt: skip
    if path is not None:
        try:
            if resume:
                _drop_torn_tail(path)
                results.append(path, [header])
            else:
                results.start(path, header)
        except OSError as e:
            adapter.close()
            raise _usage(f"--results {results_path}: cannot be written: {e.strerror or e}") from None
    case_dir = config.getoption("--case-dir") or (str(path.parent / "cases") if path is not None else "runs/cases")
    config.stash[RUN] = Run(name, options, run_id, int(seed), str(path) if path is not None else None,
                            str(Path(case_dir).resolve()), resume, configuration,
                            lock.lease if lock is not None else "", os.getpid())  # fmt: skip
    _tear_down_on_sigterm(config)
    run_end = RunEnd(config, config.stash[RUN], examples_per_tier(config), config.stash[EXPECTATIONS])
    config.pluginmanager.register(run_end, "conformance-run-end")
    if _uses_xdist(config):
        adapter.close()  # the workers open their own
        config.stash[ADAPTER] = None
    else:
        config.stash[ADAPTER] = adapter


def _one_blas_thread() -> None:
    """OpenBLAS with one thread in the xdist workers this controller starts (and in the QNN workers they start), unless
    the user set it. Why: a run keeps one pytest process per core busy, with a backend worker beside each; numpy's
    OpenBLAS starts a thread per core at import and its idle threads spin (``blas_thread_server``: 5.9% of all CPU in
    a 2-core qnn-htp run, measured with ``perf record -a``), while the matrices the reference multiplies are small.
    Measured with farm-bench, qnn-htp and reference on ten ops at 20 cases a cell: 7.5% less CPU, 6.7% less wall.
    A process that imported numpy before this (the controller under ``-n 0``) keeps its threads."""
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """pytest-xdist: every worker gets the controller's run (same run id, seed, results file)."""
    run = node.config.stash.get(RUN, None)
    if run is not None:
        node.workerinput[_WIRE] = run.wire()


def pytest_unconfigure(config: pytest.Config) -> None:
    adapter = config.stash.get(ADAPTER, None)
    if adapter is not None:
        adapter.close()
        config.stash[ADAPTER] = None
    lock = config.stash.get(LOCK, None)
    if lock is not None:
        lock.release()
        config.stash[LOCK] = None
    previous = config.stash.get(SIGTERM, None)
    if previous is not None:
        signal.signal(signal.SIGTERM, previous)
        config.stash[SIGTERM] = None


def _lock(path: Path, run_id: str) -> results.RunLock:
    """The run's hold on its results file, taken before the file is read or replaced (``--resume`` too)."""
    lock = results.RunLock(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        lock.acquire(run_id)
    except results.ResultsBusy as e:
        raise _usage(f"--results: {e}") from None
    except OSError as e:
        raise _usage(f"--results {path}: cannot be written: {e.strerror or e}") from None
    return lock


def _interrupted(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt(f"signal {signal.Signals(signum).name}")


def _tear_down_on_sigterm(config: pytest.Config) -> None:
    """SIGTERM (a scheduler's stop, ``kill``) ends the run as Ctrl-C does: the test running is interrupted,
    the adapters close their worker processes, the controller says what remains. A handler the embedding
    program set is left alone."""
    if sys.platform == "win32" or signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        return
    try:
        config.stash[SIGTERM] = signal.signal(signal.SIGTERM, _interrupted)
    except ValueError:  # not the main thread: the embedding program owns the signals
        pass


def take_adapter(config: pytest.Config) -> Any:
    """The adapter opened at the door (plain runs), or a fresh one (xdist workers)."""
    run = config.stash[RUN]
    adapter = config.stash.get(ADAPTER, None)
    if adapter is not None:
        config.stash[ADAPTER] = None
        return adapter
    return _open_backend(run.backend, run.adapter_options)


def parse_shard(text: str | None) -> tuple[int, int] | None:
    """``K/N`` -> (K, N) with 1 <= K <= N; None when not sharding."""
    if not text:
        return None
    m = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text)
    if not m or not 1 <= int(m.group(1)) <= int(m.group(2)):
        raise _usage(f"--shard {text!r}: expected K/N with 1 <= K <= N, e.g. 2/4")
    return int(m.group(1)), int(m.group(2))


def shard_of(nodeid: str, n: int) -> int:
    """The 1-based shard of a conformance test: both tiers of a cell (and the op's negative cases)
    land on the same machine, by a hash that is the same on every machine and Python."""
    param = nodeid.split("[", 1)[1].rstrip("]") if "[" in nodeid else nodeid
    for tier in ("-typical", "-edge"):
        param = param.removesuffix(tier)
    return zlib.crc32(param.encode()) % n + 1


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """With --backend: --op and --shard deselect (a run over 3 ops should not print 1000 skips)."""
    if config.stash.get(RUN, None) is None:
        return
    shard = parse_shard(config.getoption("--shard"))
    if shard:
        k, n = shard
        drop = [i for i in items if i.get_closest_marker("conformance") and shard_of(i.nodeid, n) != k]
        if drop:
            dropped = set(drop)
            config.hook.pytest_deselected(items=drop)
            items[:] = [i for i in items if i not in dropped]
    pattern = config.getoption("--op")
    if pattern:
        rx = re.compile(pattern)
        drop = [i for i in items if i.get_closest_marker("conformance") and "[" in i.nodeid
                and not rx.search(i.nodeid.split("[", 1)[1].split("-", 1)[0])]  # fmt: skip
        if drop:
            dropped = set(drop)
            config.hook.pytest_deselected(items=drop)
            items[:] = [i for i in items if i not in dropped]


def pytest_report_header(config: pytest.Config) -> list[str] | None:
    run = config.stash.get(RUN, None)
    if run is None or hasattr(config, "workerinput"):
        return None
    where = run.results or "(no --results)"
    return [f"conformance: backend {run.backend}, run {run.run_id}, seed {run.seed}, results {where}"
            + (" (resumed)" if run.resume else "")]  # fmt: skip


@pytest.fixture(scope="session")
def conformance_options(pytestconfig: pytest.Config) -> dict:
    run = pytestconfig.stash.get(RUN, None)
    if run is None:
        return {"backend": None}
    typical, edge = examples_per_tier(pytestconfig)
    results_path = Path(run.results) if run.results else None
    return {
        "backend": run.backend,
        "op": pytestconfig.getoption("--op"),
        "examples": typical,
        "edge_examples": edge,
        "seed": run.seed,
        "no_shrink": pytestconfig.getoption("--no-shrink"),
        "batch": pytestconfig.getoption("--batch"),
        "case_cache": pytestconfig.getoption("--case-cache"),
        "tier": pytestconfig.getoption("--tier"),
        "model_examples": pytestconfig.getoption("--model-examples"),
        "expectations": pytestconfig.getoption("--expectations"),
        "qnn_backend_lib": run.adapter_options.get("library"),
        "qnn_precision": run.adapter_options.get("precision"),
        "adapter_options": run.adapter_options,
        "results": results_path,
        "run_id": run.run_id,
        "case_dir": Path(run.case_dir),
        "max_elements": pytestconfig.getoption("--max-elements"),
        "prior": Prior.load(results_path) if run.resume and results_path else Prior(),
        "started": time.time(),
        # an xdist worker appends only while its run holds the file; the controller holds it itself
        "lease": run.lease if hasattr(pytestconfig, "workerinput") and run.lease else None,
    }


def append_records(options: dict, recs: list[results.Record], session: pytest.Session) -> None:
    """Append to the run's results file, or stop the run when the file cannot take them: a full disk (the
    record is not half written: ``reports.record.append``), or a run that no longer holds the file (this
    process outlived its controller). The test that was writing fails with the one line that says why, and
    the session stops after it (under xdist the controller stops the run with the same line: a worker's
    ``pytest.exit`` would read as a crashed worker)."""
    path = options["results"]
    try:
        results.append(path, recs, lease=options.get("lease"))
        return
    except results.NotOurRun as e:
        why = f"conformance: {e}; the run stops here"
    except OSError as e:
        more = "free some space, then " if e.errno in results.FULL else ""
        why = (f"conformance: --results {path}: {e.strerror or e}: the run stops here, every case recorded so far "
               f"is kept; {more}rerun with --resume")  # fmt: skip
    session.shouldstop = why
    pytest.fail(why, pytrace=False)


def examples_for(options: dict, tier: str) -> int:
    """Cases per cell and tier: ``--examples`` typical ones (the profile's max_examples by default),
    ``--edge-examples`` edge ones (a quarter of that, at least 1) and ``--model-examples`` layers (1)."""
    if tier == "model":
        return max(1, int(options.get("model_examples") or 1))
    typical, edge = examples_per_tier(options)
    return typical if tier == "typical" else edge


_TIER_SETS = {"both": ("typical", "edge"), "deployed": ("typical", "model")}  # --tier's names for several tiers


def runs_tier(options: dict, tier: str) -> bool:
    """Whether ``--tier`` takes this tier in."""
    chosen = options.get("tier") or "all"
    return chosen in ("all", tier) or tier in _TIER_SETS.get(chosen, ())


def hypothesis_settings(options: dict, tier: str = "typical") -> settings:
    """Generation only: every drawn case runs and is recorded, so hypothesis' stop-at-first-failure,
    its replay of the failing example and its shrinking never decide what a cell counts."""
    return settings(settings.default, max_examples=examples_for(options, tier), phases=[Phase.generate],
                    database=None)  # fmt: skip
