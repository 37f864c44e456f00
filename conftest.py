"""The conformance options and recorder live in the installed pytest plugin ``cases.plugin`` (entry point
``pytest11``). A checkout that was never installed, or a run with plugin autoloading off, gets it from
here; when the entry point already registered it (under the same name) this does nothing."""

import pytest


def pytest_addoption(parser: pytest.Parser, pluginmanager: pytest.PytestPluginManager) -> None:
    if not pluginmanager.has_plugin("cases.plugin"):
        import cases.plugin

        pluginmanager.register(cases.plugin, "cases.plugin")  # its pytest_addoption runs at once (historic)
