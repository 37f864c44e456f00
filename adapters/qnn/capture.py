"""A case recorded by the recording backends of its QNN release, through the graph code every run uses.

Why: a finding is worth most to the people who own the backend when they can run it with their own tools. Two
libraries ship beside libQnnHtp.so in every onnxruntime-qnn wheel and speak the same C API:
  - the Saver (libQnnSaver.so) writes every call it is given as a C program, ``saver_output.c``, and the tensors'
    bytes as ``params.bin``; built against the QNN SDK's headers and linked to a real backend, that program makes
    the same calls again;
  - the IR backend (libQnnIr.so) writes the finalized graph as a DLC, which QNN's tools (qnn-net-run with the DLC
    model library) load and run on any backend.
Both are driven by ``graph.run_case`` in a QNN worker, as the run's backend is, so the capture is the graph the run
built, node for node. Neither computes anything: the Saver returns success and zeros, the IR backend refuses
graphExecute (QNN_COMMON_ERROR_NOT_SUPPORTED). Their outcomes are never results.

What was measured (QNN 2.51, onnxruntime-qnn 2.7.0): the Saver writes into ``./saver_output`` of the process's working
directory unless ``QnnSaver_initialize`` names another before any other call (``bindings.saver_initialize``). It
records no HTP custom config (graph precision, SoC, arch): without a backend id it drops them, and the HTP's id (6) is
refused ("Unknown or unsupported backend ID"): its custom-config parsers cover the GPU and DSP only. The IR backend
writes at graphFinalize to the path of its serialization graph config, else to ``<graph name>.dlc`` (``g.dlc``) in the
working directory; a path in a directory that does not exist fails finalize ("Unable to save the dlc to disk"). The
DLC is a zip archive whose members carry a CRC of 0 (Python's zipfile refuses to read them unless told not to check).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from adapters.base import Outcome
from cases.case import Case

from . import bindings
from .adapter import QnnAdapter

SAVER_LIBRARY = "libQnnSaver.so"
IR_LIBRARY = "libQnnIr.so"
SAVER_FILES = ("saver_output.c", "params.bin")


@dataclass
class Recording:
    """What a recording backend left: its files (those that exist), its library and build, and the outcome of the
    case on it (never a result: what it says is whether the calls went through)."""

    files: list[Path]
    library: str
    build_id: str
    outcome: Outcome | None
    problem: str = ""  # why there is no recording ("" when there is one)
    info: dict[str, Any] = field(default_factory=dict)


def beside(backend_library: str | Path | None, name: str) -> Path:
    """The recording library ``name`` of the release ``backend_library`` belongs to: the one in its directory (the
    wheel's, or a release's cache), the installed wheel's where no backend library is named or its directory has
    none (a release cache keeps the backend libraries only: ``adapters.qnn.releases``)."""
    own = bindings.resolve_library(backend_library).parent / name
    if own.is_file() or backend_library is None:
        return own
    try:
        installed = bindings.default_library().parent / name
    except bindings.LibraryNotFound:
        return own
    return installed if installed.is_file() else own


def _record(case: Case, library: Path, record: dict[str, str], precision: str, soc: int | None,
            arch: int | None, wanted: list[Path]) -> Recording:  # fmt: skip
    if not library.is_file():
        return Recording([], str(library), "", None, problem=f"{library} does not exist")
    adapter = QnnAdapter(library=library, precision=precision, soc=soc, arch=arch, batch_size=1, record=record,
                         name=f"qnn:{library.name}")  # fmt: skip
    try:
        ok, why = adapter.available()
        if not ok:
            return Recording([], str(library), "", None, problem=why)
        info = adapter.info()
        outcome = adapter.run(case)
    finally:
        adapter.close()  # the Saver completes its files when the backend is freed, as the worker ends
    files = [p for p in wanted if p.is_file()]
    missing = [p.name for p in wanted if not p.is_file()]
    problem = f"{library.name} wrote no {', '.join(missing)} ({outcome.status}: {outcome.message})" if missing else ""
    return Recording(files, str(library), str(info.get("build_id", "")), outcome, problem, info)


def saver(case: Case, directory: Path, backend_library: str | Path | None = None, precision: str = "auto",
          soc: int | None = None, arch: int | None = None) -> Recording:  # fmt: skip
    """``case`` recorded by the Saver of ``backend_library``'s release into ``directory`` (created)."""
    directory = Path(directory).absolute()
    directory.mkdir(parents=True, exist_ok=True)
    library = beside(backend_library, SAVER_LIBRARY)
    return _record(case, library, {"saver_directory": str(directory)}, precision, soc, arch,
                   [directory / name for name in SAVER_FILES])  # fmt: skip


def dlc(case: Case, path: Path, backend_library: str | Path | None = None) -> Recording:
    """``case``'s graph written as a DLC at ``path`` by the IR backend of ``backend_library``'s release. The HTP's
    graph options are not sent (the IR backend would read them as its own): a DLC holds the graph, not a target."""
    path = Path(path).absolute()
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists():
        path.unlink()  # the file found afterwards is this run's
    library = beside(backend_library, IR_LIBRARY)
    return _record(case, library, {"dlc_path": str(path)}, "none", None, None, [path])
