"""Adapters the suite's own tests plug in with ``--backend tests.fake_backends:FACTORY`` (a one-off adapter
reference, the form users have for their own backends).

- ``zero_relu``: the reference, except that Relu returns zeros (a bug a finding's ``{outputs: zeros}`` model states);
- ``wrong_relu``: the reference, except that Relu's outputs are off by one, so Relu cells fail and the
  others pass (for ``--lf``/``--sw``/``--junitxml``).
- ``rejecting``: the reference's identity, refusing every case at validation (cells nobody could judge).
- ``bias_32bit_only``: the reference, except that a quantized case whose bias (an input the spec scales from
  two others, ``encoding_from``) is not SFIXED_POINT_32 is refused, as the HTP refuses 8-bit biases beside
  signed activations: the probe must find the 32-bit bias form.
- ``killing_qnn_htp`` / ``killing_ort_qnn``: a real worker-backed adapter whose worker process is killed
  with SIGKILL from outside while it runs the N-th case ($KILL_AT_CASE, default 2), as an OOM killer or
  a crashing driver would; every other case runs normally.
- ``Canned``: no backend at all, outputs given by the test (a backend whose answers change from run to run, one
  that declares float16 arithmetic), for tests that call ``conformance.execute`` directly.
"""

from __future__ import annotations

import os
import signal
import threading
from dataclasses import replace
from typing import Any

import numpy as np

from adapters.base import OK, REJECTED, Outcome
from cases.case import Case


class Canned:
    """Answers its k-th run with ``runs[k % len(runs)]`` (one list: the same outputs every run) and declares
    ``capabilities``; ``runs`` counts the runs made."""

    name = "fake"

    def __init__(self, *runs: list[np.ndarray], capabilities: dict[str, Any] | None = None) -> None:
        self.outputs, self.declared, self.runs = runs, capabilities or {}, 0

    def available(self) -> tuple[bool, str]:
        return True, ""

    def info(self) -> dict[str, Any]:
        return {}

    def capabilities(self) -> dict[str, Any]:
        return self.declared

    def run(self, case: Case) -> Outcome:
        out = self.outputs[self.runs % len(self.outputs)]
        self.runs += 1
        return Outcome(OK, list(out))

    def close(self) -> None:
        pass


class _Wrapper:
    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.name = getattr(inner, "name", "wrapped")

    def available(self) -> tuple[bool, str]:
        return self.inner.available()

    def info(self) -> dict[str, Any]:
        return self.inner.info()

    def capabilities(self) -> dict[str, Any]:
        return self.inner.capabilities()

    def close(self) -> None:
        self.inner.close()


class _WrongRelu(_Wrapper):
    def run(self, case: Case) -> Outcome:
        out = self.inner.run(case)
        if case.op == "Relu" and out.status == OK:
            out = replace(out, outputs=[np.asarray(o) + np.asarray(1, dtype=np.asarray(o).dtype) for o in out.outputs])
        return out


def wrong_relu(options: dict[str, Any]) -> _WrongRelu:
    from adapters.reference import make

    return _WrongRelu(make(options))


class _ZeroRelu(_Wrapper):
    def run(self, case: Case) -> Outcome:
        out = self.inner.run(case)
        if case.op == "Relu" and out.status == OK:
            out = replace(out, outputs=[np.zeros_like(np.asarray(o)) for o in out.outputs])
        return out


def zero_relu(options: dict[str, Any]) -> _ZeroRelu:
    from adapters.reference import make

    return _ZeroRelu(make(options))


class _Rejecting(_Wrapper):
    def run(self, case: Case) -> Outcome:
        return Outcome(REJECTED, message="this test backend refuses every case")


def rejecting(options: dict[str, Any]) -> _Rejecting:
    from adapters.reference import make

    return _Rejecting(make(options))


class _Bias32Only(_Wrapper):
    def run(self, case: Case) -> Outcome:
        import opdefs

        op = opdefs.load(case.op)
        for k, decl in enumerate(op.inputs):
            t = case.inputs[k] if k < len(case.inputs) else None
            if decl.get("encoding_from") and t is not None and t.encoding is not None and t.dtype != "SFIXED_POINT_32":
                return Outcome(REJECTED, message=f"this test backend takes a 32-bit bias only, not {t.dtype}")
        return self.inner.run(case)


def bias_32bit_only(options: dict[str, Any]) -> _Bias32Only:
    from adapters.reference import make

    return _Bias32Only(make(options))


class _KillOnce(_Wrapper):
    """On the N-th case the worker is sent a case that keeps it busy (the debug hang hook) and is
    killed from here after a moment: the outcome must be CRASH for the case that was running."""

    def __init__(self, inner: Any, at: int) -> None:
        super().__init__(inner)
        self.at, self.count = at, 0

    def run(self, case: Case) -> Outcome:
        self.count += 1
        if self.count != self.at:
            return self.inner.run(case)
        self.inner.available()  # make sure a worker is up, so there is a pid to kill
        pid = self.inner.worker_pid
        timer = threading.Timer(1.0, os.kill, (pid, signal.SIGKILL))
        timer.start()
        try:
            return self.inner.run(Case("__debug_hang__", [], {}, []))
        finally:
            timer.cancel()


def _at() -> int:
    return int(os.environ.get("KILL_AT_CASE", "2"))


def killing_qnn_htp(options: dict[str, Any]) -> _KillOnce:
    from adapters.qnn.adapter import QnnAdapter

    return _KillOnce(QnnAdapter(precision=options.get("precision", "auto"), debug_hooks=True, timeout=60), _at())


def killing_ort_qnn(options: dict[str, Any]) -> _KillOnce:
    from adapters.ort_qnn import OrtQnnAdapter

    return _KillOnce(OrtQnnAdapter(precision=options.get("precision", "auto"), debug_hooks=True, timeout=60), _at())
