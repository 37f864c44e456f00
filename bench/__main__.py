"""``python -m bench [speed|mutants|drawn|qnn-worker] ...``: see ``bench.cli``."""

from bench.cli import main

raise SystemExit(main())
