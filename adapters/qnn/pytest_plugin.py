"""``--qnn-soc`` / ``--qnn-arch`` / ``--qnn-sdk``: the simulated HTP target and the QNN release of a
conformance run, for the QNN backends (qnn-htp, qnn-cpu; the target also for ort-qnn).

Why a plugin of its own and environment variables: the SoC and the release are properties of the whole
run (every record says which ones it ran on), the adapters are built in places this plugin does not own
(the conformance module's fixture, ``python -m conformance replay``), and xdist workers and the adapters'
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


# The target and release options, declared here only (flag, help, metavar): this plugin must act on them before the
# conformance plugin opens a backend. The run's options table (conformance/options.py) takes its replay rows for
# the target from ``TARGET_OPTIONS``: a replay line of a run on SoC 43 carries ``--qnn-soc 43``.
TARGET_OPTIONS = (
    ("--qnn-soc", f"HTP SoC model the simulator emulates (qnn-htp, ort-qnn; sets ${ENV_SOC}), default: its own; "
                  "43 = SM8550 (v73), 57 = SM8650 (v75), 69 = SM8750 (v79)", None),
    ("--qnn-arch", f"HTP architecture number, e.g. 68, 73, 75 (qnn-htp, ort-qnn; sets ${ENV_ARCH})", None),
)
RELEASE_OPTION = ("--qnn-sdk", "QNN release for qnn-htp / qnn-cpu: a QNN version (2.47) or a wheel (ort-qnn==2.3.0); "
                  f"its onnxruntime-qnn wheel is fetched with pip into the cache on first use (${ENV_SDK})", "RELEASE")
_TARGET_ENV = {"--qnn-soc": ENV_SOC, "--qnn-arch": ENV_ARCH}


def set_target(values: dict[str, str | None]) -> None:
    """Set the simulated target for every QNN adapter built after this (``{"--qnn-soc": "43"}``): the plugin and
    replay both go through here. ValueError for a value that is no integer."""
    for flag, value in values.items():
        if value is None:
            continue
        try:
            number = int(str(value), 0)
        except ValueError:
            raise ValueError(f"{flag}: not an integer: {value!r} (an HTP SoC model or arch number, e.g. 43 or 73)"
                             ) from None
        os.environ[_TARGET_ENV[flag]] = str(number)


def pytest_addoption(parser: pytest.Parser) -> None:
    g = parser.getgroup("conformance")
    for flag, help_text, metavar in (*TARGET_OPTIONS, RELEASE_OPTION):
        g.addoption(flag, default=None, help=help_text, metavar=metavar)


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    try:
        set_target({flag: config.getoption(flag, default=None) for flag, _, _ in TARGET_OPTIONS})
    except ValueError as e:
        raise pytest.UsageError(str(e)) from None
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
