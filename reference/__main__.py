"""``python -m reference status``: how much of the reference exists and how it is verified.

Counts come from the registry: ``@register(op, verified_by=...)`` declares how an implementation is
verified (an independent implementation's name, or ``hand``). Test modules written before that
declaration existed still list ``CROSSCHECKED`` / ``HAND_CHECKED``; those lists are read too until
every module has moved its claims to the registration.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path

import opdefs
import reference

TESTS = Path(__file__).resolve().parent.parent / "tests"


def _declared() -> tuple[set[str], set[str]]:
    cross: set[str] = set()
    hand: set[str] = set()
    sys.path.insert(0, str(TESTS.parent))
    for path in sorted(TESTS.glob("test_reference_*.py")):
        spec = importlib.util.spec_from_file_location(f"tests.{path.stem}", path)
        mod = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(mod)  # the suite's own test modules, not spec data
        except ImportError as e:  # e.g. onnx not installed: its cross-checks cannot be claimed
            print(f"warning: {path.name} not importable ({e})", file=sys.stderr)
            continue
        cross |= set(getattr(mod, "CROSSCHECKED", []))
        hand |= set(getattr(mod, "HAND_CHECKED", []))
    return cross, hand


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m reference")
    ap.add_argument("cmd", choices=["status"])
    ap.add_argument("--list", action="store_true", help="also list the ops in each group")
    args = ap.parse_args(argv)
    impl = set(reference.implemented())
    specs = set(opdefs.load_all())
    cross, hand = _declared()
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
