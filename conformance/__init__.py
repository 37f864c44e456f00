"""The run: where a spec's cases meet a backend and become records.

The flow reads top-down through the rooms, each importing only those before it (``tests/test_layers.py``):
``opdefs`` (specs) -> ``cases`` (drawn cases) -> ``reference`` (expected values) -> ``adapters`` (backends) ->
``reports`` (records, findings, matrices) -> ``conformance`` (this room) -> ``bench``.

- ``execute``: one case becomes one record (a ``RunContext`` says which run);
- ``test_conformance`` and ``cell``: the pytest module, a cell per op x configuration x tier, and the cell runner;
- ``plugin``, ``run_end``, ``options``: the pytest plugin, its end-of-run summary, the options of a run declared once;
- ``replay``: one saved case again, alone;
- ``main_job`` and ``progress``: every default backend, live progress, the reports;
- ``cli``: ``qnn-conformance``, the installed front door.
"""
