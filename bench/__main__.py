"""``python -m bench``: see ``bench.run`` (the worker processes import it by name, so it is not this file)."""

from bench.run import main

raise SystemExit(main())
