"""Where the suite's own tests find the seeds: ../shared next to the repo (as in CI's clone)."""

from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"
SEED = SHARED / "seeds" / "004_b46271055e0d5186.txt"
CROSSWALK = SHARED / "seed-crosswalk.md"
DATA = Path(__file__).resolve().parent / "data"
