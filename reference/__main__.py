"""``python -m reference status``: how much of the reference exists and how it is verified.

Counts come from the registry: ``@register(op, verified_by=...)`` declares how an implementation is
verified (an independent implementation's name, or ``hand``); tests/test_reference_registry.py holds
each claim to account. Production code never runs the test modules to learn it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import opdefs
import reference

TESTS = Path(__file__).resolve().parent.parent / "tests"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m reference")
    ap.add_argument("cmd", choices=["status"])
    ap.add_argument("--list", action="store_true", help="also list the ops in each group")
    args = ap.parse_args(argv)
    impl = set(reference.implemented())
    specs = set(opdefs.load_all())
    cross: set[str] = set()
    hand: set[str] = set()
    for op in impl:
        how = reference.verified_by(op)
        if how == reference.HAND:
            hand.add(op)
        elif how:
            cross.add(op)
    cross &= impl
    hand = (hand & impl) - cross
    unverified = impl - cross - hand
    print(f"spec ops: {len(specs)}")
    print(f"ops implemented: {len(impl)}")
    print(f"ops cross-checked against an independent implementation: {len(cross)}")
    print(f"ops checked only by hand-computed cases: {len(hand)}")
    print(f"ops implemented but not verified by either: {len(unverified)}")
    print(f"spec ops with no reference yet: {len(specs - impl)}")
    if args.list:
        for label, ops in (("hand-checked", hand), ("unverified", unverified), ("no reference", specs - impl)):
            print(f"{label}: {', '.join(sorted(ops)) or '-'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
