"""The conformance options and recorder live in the installed pytest plugin ``conformance.plugin`` (entry point
``pytest11``). A checkout that was never installed, or a run with plugin autoloading off, gets it from
here; when the entry point already registered it (under the same name) this does nothing."""

import pytest

import adapters.qnn.pytest_plugin
import conformance.plugin

conformance.plugin.use_profile()  # the suite's own tests: fast hypothesis settings unless $HYPOTHESIS_PROFILE says


def pytest_addoption(parser: pytest.Parser, pluginmanager: pytest.PytestPluginManager) -> None:
    plugins = (("conformance.plugin", conformance.plugin), ("adapters.qnn.pytest_plugin", adapters.qnn.pytest_plugin))
    for name, module in plugins:
        if not pluginmanager.has_plugin(name):
            pluginmanager.register(module, name)  # its pytest_addoption runs at once (historic)
