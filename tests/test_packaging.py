"""Every package and data file the code reads is declared for a non-editable install (pyproject.toml): a
subpackage or a data folder left out works in the checkout and breaks once installed."""

from __future__ import annotations

import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CONFIG = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]


def test_every_package_of_the_tree_is_declared():
    declared = set(CONFIG["packages"])
    found = {str(p.parent.relative_to(REPO)).replace("/", ".") for p in REPO.glob("**/__init__.py")
             if not {"tests", ".venv", "build"} & set(p.relative_to(REPO).parts) and "out" not in p.parts}  # fmt: skip
    assert found <= declared, f"packages missing from pyproject.toml: {sorted(found - declared)}"


def test_every_spec_data_file_is_declared():
    patterns = CONFIG["package-data"]["opdefs"]
    root = REPO / "opdefs"
    covered = {p for pattern in patterns for p in root.glob(pattern)}  # setuptools' globs: "*" stops at a folder
    missing = [str(p.relative_to(root)) for p in root.rglob("*") if p.suffix in (".yaml", ".json") and p not in covered]
    assert missing == [], f"opdefs data files no package-data pattern covers: {missing}"
