"""``--qnn-soc`` / ``--qnn-arch``: the simulated HTP target of a conformance run, for qnn-htp and ort-qnn.

Why a plugin of its own and environment variables: the SoC is a property of the whole run (every
record says which one it ran on), the adapters are built in places this plugin does not own (the
conformance module's fixture, ``python -m cases replay``), and xdist workers and the adapters' worker
processes inherit the environment. So the options only set $QNN_HTP_SOC / $QNN_HTP_ARCH, which both
adapters' ``make()`` read when no explicit ``soc``/``arch`` option is given.
Registered under the ``pytest11`` entry point (and by the repository's conftest.py when not installed).
"""

from __future__ import annotations

import os

import pytest

from adapters.qnn.adapter import ENV_ARCH, ENV_SOC


def _number(text: str) -> int:
    try:
        return int(text, 0)
    except ValueError:
        raise pytest.UsageError(f"not an integer: {text!r} (an HTP SoC model or arch number, e.g. 43 or 73)") from None


def pytest_addoption(parser: pytest.Parser) -> None:
    g = parser.getgroup("conformance")
    g.addoption("--qnn-soc", default=None,
                help=f"HTP SoC model the simulator emulates (qnn-htp, ort-qnn; sets ${ENV_SOC}), default: its own")
    g.addoption("--qnn-arch", default=None,
                help=f"HTP architecture number, e.g. 68, 73, 75 (qnn-htp, ort-qnn; sets ${ENV_ARCH})")  # fmt: skip


def pytest_configure(config: pytest.Config) -> None:
    for opt, env in (("--qnn-soc", ENV_SOC), ("--qnn-arch", ENV_ARCH)):
        value = config.getoption(opt, default=None)
        if value is not None:
            os.environ[env] = str(_number(str(value)))
