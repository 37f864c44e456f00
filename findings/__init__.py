"""The recorded backend findings (``<backend>.yaml``, their minimal cases under ``cases/``) and the explanations of
route disagreements (``routes.yaml``): data, shipped with the package so ``python -m reports findings`` and
``--expectations`` work from an installed copy. Read by ``reports.findings`` and ``reports.agree``."""
