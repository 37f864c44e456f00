"""``--qnn-soc`` / ``--qnn-arch`` / ``--qnn-sdk``: the simulated HTP target and the QNN release of a
conformance run, for the QNN backends (qnn-htp, qnn-cpu; the target also for ort-qnn).

Why a plugin of its own and environment variables: the SoC and the release are properties of the whole
run (every record says which ones it ran on), the adapters are built in places this plugin does not own
(the conformance module's fixture, ``python -m cases replay``), and xdist workers and the adapters'
worker processes inherit the environment. So the options only set $QNN_HTP_SOC / $QNN_HTP_ARCH /
$QNN_CONFORMANCE_SDK, which the adapters' ``make()`` read when no explicit option is given.

The hook runs first (``tryfirst``): the conformance plugin opens the backend at the door in its own
``pytest_configure``, and an adapter built before the variables are set runs the default target while
its records say so (that was the bug: ``--qnn-soc 43`` recorded and ran ``soc: default``).
A release that cannot be had (unknown, no network, a wheel that does not verify) stops the run at the
door with one line and exit code 4, as any unavailable backend does.
Registered under the ``pytest11`` entry point (and by the repository's conftest.py when not installed).
"""

from __future__ import annotations

import os

import pytest

from adapters.qnn.adapter import ENV_ARCH, ENV_SOC
from adapters.qnn.releases import ENV_SDK, ReleaseNotAvailable, parse

# backends whose library a release names; ort-qnn runs the onnxruntime-qnn wheel installed here
RELEASE_BACKENDS = ("qnn-htp", "qnn-cpu")


def _number(text: str) -> int:
    try:
        return int(text, 0)
    except ValueError:
        raise pytest.UsageError(f"not an integer: {text!r} (an HTP SoC model or arch number, e.g. 43 or 73)") from None


def pytest_addoption(parser: pytest.Parser) -> None:
    g = parser.getgroup("conformance")
    g.addoption("--qnn-soc", default=None,
                help=f"HTP SoC model the simulator emulates (qnn-htp, ort-qnn; sets ${ENV_SOC}), default: its own; "
                     "43 = SM8550 (v73), 57 = SM8650 (v75), 69 = SM8750 (v79)")
    g.addoption("--qnn-arch", default=None,
                help=f"HTP architecture number, e.g. 68, 73, 75 (qnn-htp, ort-qnn; sets ${ENV_ARCH})")
    g.addoption("--qnn-sdk", default=None, metavar="RELEASE",
                help="QNN release for qnn-htp / qnn-cpu: a QNN version (2.47) or a wheel (ort-qnn==2.3.0); "
                     f"its onnxruntime-qnn wheel is fetched with pip into the cache on first use (${ENV_SDK})")


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    for opt, env in (("--qnn-soc", ENV_SOC), ("--qnn-arch", ENV_ARCH)):
        value = config.getoption(opt, default=None)
        if value is not None:
            os.environ[env] = str(_number(str(value)))
    sdk = config.getoption("--qnn-sdk", default=None)
    if sdk is None:
        return
    backend = (config.getoption("--backend", default=None) or "").partition("@")[0]
    if backend and backend not in RELEASE_BACKENDS:
        raise pytest.UsageError(f"--qnn-sdk {sdk}: applies to {', '.join(RELEASE_BACKENDS)}, not to {backend}")
    if config.getoption("--qnn-backend-lib", default=None):
        raise pytest.UsageError(f"--qnn-sdk {sdk} and --qnn-backend-lib name two libraries; give one")
    try:
        parse(sdk)
    except ReleaseNotAvailable as e:
        raise pytest.UsageError(str(e)) from None
    os.environ[ENV_SDK] = str(sdk).strip()
