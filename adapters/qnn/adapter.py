"""The QNN adapter: any QNN backend library behind the Adapter protocol, the HTP simulator by default.

The adapter itself holds no native state: every QNN call happens in a worker process
(``worker.py``), so the parent survives a backend crash and the next case gets a fresh worker.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from adapters.base import Outcome, batch_seconds, case_seconds
from adapters.worker import DEFAULT_START_TIMEOUT, DEFAULT_TIMEOUT, Worker, WorkerAdapter
from cases.case import Case

from . import bindings, releases, targets
from .graph import PRECISIONS, GraphOptions

DEFAULT_NAME = "qnn-htp"
CPU_NAME = "qnn-cpu"
# The simulated HTP target of a run when no option names one: pytest's --qnn-soc/--qnn-arch (the
# plugin in ``pytest_plugin.py``) set these, so xdist workers and the worker processes see them too.
ENV_SOC, ENV_ARCH = "QNN_HTP_SOC", "QNN_HTP_ARCH"
DEFAULT_TARGET = "default"  # what backend_info says when the backend's own SoC/arch is used


def target_from_env(options: dict[str, Any]) -> dict[str, Any]:
    """``options`` with ``soc``/``arch`` taken from $QNN_HTP_SOC/$QNN_HTP_ARCH where not given."""
    out = dict(options)
    for key, env in (("soc", ENV_SOC), ("arch", ENV_ARCH)):
        if out.get(key) in (None, "") and os.environ.get(env, "").strip():
            value = os.environ[env].strip()
            try:
                out[key] = int(value, 0)
            except ValueError:
                raise ValueError(f"${env}={value!r} is not an integer (an HTP SoC model / arch number)") from None
    return out


def _wheel_library() -> Path | None:
    """libQnnHtp.so of the installed onnxruntime-qnn wheel, ignoring $QNN_BACKEND_LIB."""
    saved = os.environ.pop(bindings.ENV_LIBRARY, None)
    try:
        return bindings.default_library().resolve()
    except bindings.LibraryNotFound:
        return None
    finally:
        if saved is not None:
            os.environ[bindings.ENV_LIBRARY] = saved


DEFAULT_BATCH = 32  # cases per graph in ``run_many``; measured in ``python -m bench`` (batched vs one per graph)


# What Qualcomm documents about the HTP's float arithmetic, which the verdicts then take at its word where the
# simulator bears it out (``targets.float32_declaration``: every op from v69, a few measured ops at v68): a FLOAT_32
# result outside binary32's budget and inside binary16's is FP16_ACCURATE there, not a deviation.
HTP_SOURCE = ("Qualcomm AI Engine Direct (QNN) SDK documentation, 'QNN HTP Precision' and 'QNN HTP-FP16 Op Package': "
              "a graph of float32 tensors is finalized and executed on the HTP with float16 math")


class QnnAdapter(WorkerAdapter):
    """Runs Cases on a QNN backend library through the C API: ``run`` one single-node graph per case,
    ``run_many`` up to ``batch_size`` cases as the independent nodes of one graph.

    ``library``: path of a backend library (libQnnHtp.so, libQnnCpu.so, ...); default
    $QNN_BACKEND_LIB, else the onnxruntime-qnn wheel's libQnnHtp.so (the HTP simulator on x86_64).
    ``precision``: the HTP graph precision option, see ``GraphOptions`` (default "auto").
    ``soc``/``arch``: HTP device SoC model / architecture number (default: the backend's own).
    ``timeout``: the most seconds one case may take before the worker is killed (verdict TIMEOUT); a case's own
    budget grows with its size up to it (``adapters.base.case_seconds``).
    ``debug_hooks``: lets the test-only ``__debug_*__`` op names crash or hang the worker.
    ``op_packages``: user op packages registered (backendRegisterOpPackage) when the worker starts, each
    {"path", "interface", "target"}; a missing file or a refused package makes the adapter unavailable.
    ``batch_size``: cases per graph in ``run_many`` (1: one graph per case, as ``run``).
    ``record``: for the recording backends of a release (``adapters.qnn.capture``), where they write:
    {"saver_directory": DIR} (libQnnSaver.so: saver_output.c and params.bin) or {"dlc_path": FILE} (libQnnIr.so).
    Such a worker starts the ordinary way, not forked from a prepared zygote: the Saver begins writing in the process
    that loads it, and a fork would hold a second copy of what it has buffered.
    """

    def __init__(self, library: str | os.PathLike | None = None, precision: str = "auto", soc: int | None = None,
                 arch: int | None = None, timeout: float = DEFAULT_TIMEOUT, log_level: str = "error",
                 debug_hooks: bool = False, start_timeout: float = DEFAULT_START_TIMEOUT,
                 op_packages: list[dict[str, str]] | None = None, batch_size: int = DEFAULT_BATCH,
                 release: releases.Release | None = None, kind: str = "htp", name: str | None = None,
                 record: dict[str, str] | None = None) -> None:
        super().__init__()
        self.release = release
        self.kind = kind  # "htp": SoC, arch and the HTP graph precision apply; "cpu": none of them
        if precision not in PRECISIONS:
            raise ValueError(f"precision must be one of {PRECISIONS}, not {precision!r}")
        if log_level not in bindings.LOG_LEVELS:
            raise ValueError(f"log_level must be one of {tuple(bindings.LOG_LEVELS)}, not {log_level!r}")
        self._path: Path | None = None
        self._why_not = ""
        try:
            self._path = bindings.resolve_library(library)
        except bindings.LibraryNotFound as e:
            self._why_not = str(e)
        self.op_packages = [dict(p) for p in op_packages or ()]
        wheel = _wheel_library()
        if name:
            self.name = name
        elif self._path is not None and self._path.resolve() == wheel:
            self.name = DEFAULT_NAME
        else:
            wanted = library or os.environ.get(bindings.ENV_LIBRARY) or bindings.DEFAULT_LIBRARY_NAME
            shown = self._path.name if self._path is not None else Path(wanted).name
            self.name = f"qnn:{shown}"
        self.options = GraphOptions(precision, None if soc is None else int(soc), None if arch is None else int(arch))
        self.timeout = float(timeout)
        self.log_level = log_level
        self.debug_hooks = bool(debug_hooks)
        self.batch_size = max(1, int(batch_size))
        self._worker: Worker | None = None
        self.record = dict(record or {})
        unknown = sorted(set(self.record) - {"saver_directory", "dlc_path"})
        if unknown:
            raise ValueError(f"record: unknown key(s) {unknown} (saver_directory, dlc_path)")
        if self._path is not None:
            config = {
                "library": str(self._path),
                "log_level": log_level,
                "graph": {"precision": precision, "soc": self.options.soc, "arch": self.options.arch},
                "check_device": self.options.soc is not None or self.options.arch is not None,
                "debug_hooks": self.debug_hooks,
                "op_packages": self.op_packages,
            }
            if self.record.get("dlc_path"):
                config["graph"]["dlc_path"] = str(self.record["dlc_path"])
            if self.record.get("saver_directory"):
                config["saver_directory"] = str(self.record["saver_directory"])
            self._worker = Worker(config, timeout=self.timeout, start_timeout=start_timeout)
            if self.record:
                self._worker.use_zygote = False
        missing = [p["path"] for p in self.op_packages if not Path(p["path"]).is_file()]
        if missing:  # said before any worker starts: the backend would only report a generic code
            self._worker, self._why_not = None, f"op package {missing[0]} does not exist"
        self._ops: list[str] | None = None

    # -- protocol ----------------------------------------------------------------------------------
    def identity(self) -> dict[str, Any]:
        """What the records say this backend is: its options, and the release its library came from (the
        QNN SDK read from the build id, the wheel that carried it)."""
        out: dict[str, Any] = {"precision": self.options.precision}
        if self.kind == "htp":
            out["soc"] = DEFAULT_TARGET if self.options.soc is None else self.options.soc
            out["arch"] = DEFAULT_TARGET if self.options.arch is None else self.options.arch
            out["target"] = targets.target_label(self.options.soc, self.options.arch)
        if self._path is not None:
            out.update(releases.describe(self._path))
        if self.release is not None:
            out["wheel"] = f"{releases.PACKAGE}=={self.release.wheel}"
        return out

    def info(self) -> dict[str, Any]:
        info = super().info()
        if self._worker is not None and "qnn_sdk" not in info:
            info["qnn_sdk"] = releases.qnn_of_build(str(info.get("build_id", "")))
            self._info = dict(info)
        return info

    def available(self) -> tuple[bool, str]:
        """Loads the library; a release's library must also report the QNN version its wheel carries."""
        ok, why = super().available()
        if ok and self.release is not None:
            why = releases.check_build(self.release, str(self.info().get("build_id", "")))
            ok = not why
        return ok, why

    def capabilities(self) -> dict[str, Any]:
        if self._worker is None:
            return {}
        if self._ops is None:
            pairs = self._worker.call(("ops",))
            self._ops = sorted({name for _package, name in pairs})
        out: dict[str, Any] = {"ops": list(self._ops)}
        if self._path is not None and "htp" in self._path.name.lower():  # per target: v68 is float32 but for a few ops
            out["arithmetic"] = targets.float32_declaration(self.options.soc, self.options.arch, HTP_SOURCE)
        return out

    def run(self, case: Case) -> Outcome:
        if self._worker is None:
            return Outcome("error", message=f"qnn backend unavailable: {self._why_not}", details={"stage": "load"})
        return self._worker.run(case, case_seconds(case, self.timeout))

    def run_each(self, cases: list[Case]) -> list[Outcome]:
        if self._worker is None:
            return [self.run(c) for c in cases]
        return self._worker.run_each(cases, [case_seconds(c, self.timeout) for c in cases])

    def run_group(self, cases: list[Case]) -> list[Outcome | None]:
        """Up to ``batch_size`` cases in one graph (``graph.run_batch``); None where a case must run alone."""
        if self._worker is None:
            return [self.run(c) for c in cases]
        # a case with several executions is a graph of its own: it runs alone, the others together
        together = [c for c in cases if not c.steps]
        got = iter(self._worker.run_batch(together, batch_seconds(together, self.timeout)) if len(together) > 1
                   else [None] * len(together))  # fmt: skip
        return [self.run(c) if c.steps else next(got) for c in cases]


def make(options: dict[str, Any] | None = None) -> QnnAdapter:
    """Build an adapter from loosely typed options (command line / config file).

    Keys: ``library`` (or ``lib``/``path``), ``sdk`` (a QNN release: "2.47", "ort-qnn==2.3.0"; its wheel is
    fetched into the cache on first use), ``variant`` (what follows "@" in a backend name such as
    ``qnn-htp@2.47+v73``, see ``targets``), ``precision``, ``soc``, ``arch``, ``timeout``, ``log_level``,
    ``op_packages``, ``batch_size``, ``record`` (the recording backends' output: ``QnnAdapter``). Unknown keys are an
    error, so a typo does not silently run the default.
    ``soc``/``arch`` not given fall back to $QNN_HTP_SOC/$QNN_HTP_ARCH, then to the backend's own; ``sdk``
    to $QNN_CONFORMANCE_SDK (pytest's --qnn-sdk), then to the installed wheel.
    """
    return _make(options, "htp")


def make_cpu(options: dict[str, Any] | None = None) -> QnnAdapter:
    """``qnn-cpu``: the QNN CPU backend (libQnnCpu.so), Qualcomm's reference implementation of the op
    definitions, from the newest known onnxruntime-qnn release that ships it (only 2.3.0, QNN 2.47), the
    release ``sdk`` names, or a ``library`` the user gives. The HTP's SoC, arch and graph precision do not
    apply: the precision option is not sent unless asked for."""
    return _make(options, "cpu")


def _make(options: dict[str, Any] | None, kind: str) -> QnnAdapter:
    opts = dict(options or {})
    variant = targets.parse_variant(str(opts.pop("variant", "") or ""))
    if kind == "cpu" and ({"soc", "arch"} & variant.keys() or variant.get("target")):
        raise ValueError("qnn-cpu has no simulated target: a variant names a release only")
    target = variant.pop("target", None)
    opts.update(variant)
    if kind == "htp":
        opts = target_from_env(opts) if target is None else opts
    else:  # the precision option is an HTP graph custom config: the CPU backend would read it as its own
        if str(opts.get("precision") or "auto") not in ("auto", "none"):
            raise ValueError(f"qnn-cpu has no graph precision option (got {opts['precision']!r}): it is the HTP's")
        opts["precision"] = "none"
        for key in ("soc", "arch"):
            if opts.get(key) not in (None, ""):
                raise ValueError(f"qnn-cpu has no {key}: it is an option of the HTP backend")
            opts.pop(key, None)
    library = opts.pop("library", None) or opts.pop("lib", None) or opts.pop("path", None)
    sdk = opts.pop("sdk", None) or (None if library else os.environ.get(releases.ENV_SDK, "").strip() or None)
    kwargs: dict[str, Any] = {"library": library, "kind": kind}
    if library and "sdk" in variant:
        raise ValueError(f"a library ({library}) and a release ({sdk}) name two libraries; give one")
    why_not = ""
    if not library and (sdk or kind == "cpu"):
        try:
            release = releases.parse(sdk) if sdk else releases.newest_with(kind)
            kwargs["release"] = release
            kwargs["library"] = releases.library(release, kind)
        except releases.ReleaseNotAvailable as e:
            why_not = str(e)
            kwargs["library"] = None
    if "precision" in opts:
        kwargs["precision"] = str(opts.pop("precision"))
    for key in ("soc", "arch"):
        if key in opts:
            value = opts.pop(key)
            kwargs[key] = None if value in (None, "") else int(value)
    if "timeout" in opts:
        kwargs["timeout"] = float(opts.pop("timeout"))
    if "batch_size" in opts:
        kwargs["batch_size"] = int(opts.pop("batch_size"))
    if "log_level" in opts:
        kwargs["log_level"] = str(opts.pop("log_level"))
    if opts.get("record"):
        kwargs["record"] = dict(opts.pop("record"))
    opts.pop("record", None)
    if opts.get("op_packages"):
        kwargs["op_packages"] = list(opts.pop("op_packages"))
    opts.pop("op_packages", None)
    if opts:
        raise ValueError(f"unknown qnn adapter options: {sorted(opts)}")
    if kind == "cpu":
        kwargs["name"] = CPU_NAME
    elif kwargs.get("release") is not None and not library:
        kwargs["name"] = DEFAULT_NAME  # the HTP simulator of another release is still qnn-htp
    adapter = QnnAdapter(**kwargs)
    if why_not:
        adapter._worker, adapter._why_not = None, why_not
    return adapter
