"""The typical tier's schedule of boolean and enum values (``enumerated_slots``)."""

from __future__ import annotations

import ast
import itertools
from collections.abc import Callable
from typing import Any

from cases.case import Case
from cases.generate.configurations import Config, configs
from cases.generate.evaluate import _fits
from opdefs import OpDef, TensorSpec, expr

_FREE = object()  # no value forced on a parameter: it is drawn
CELL_CASES = 20  # the typical cases of a main job's cell: how far along the slots each next cell starts


def enumerated_members(op: OpDef) -> dict[str, list[Any]]:
    """Every scalar boolean and enum parameter a typical cell schedules (curated ones keep their curation), with
    the values in order that the typical tier's conditions on parameters alone allow (InstanceNorm's converters'
    MU_SIGMA, ACROSS_SPATIAL; ``typical_excluded`` names the rest); a parameter left one value is not scheduled."""
    members: dict[str, list[Any]] = {}
    steer = _typical_steer(op)
    env = {**op.enum_names(), **op.param_defaults()}
    for name, p in op.param_specs.items():
        if not p.scalar or p.curated is not None:
            continue
        values = sorted(p.members.values()) if p.members else [False, True] if p.dtype == "BOOL_8" else []
        values = [v for v in values if _fits([c for c in steer if name in c.names()], {**env, name: v})]
        if len(values) > 1:
            members[name] = values
    return members


def typical_excluded(op: OpDef) -> dict[str, list[Any]]:
    """Values of boolean and enum parameters the typical tier's conditions rule out: drawn in the edge tier only."""
    steer = _typical_steer(op)
    env = {**op.enum_names(), **op.param_defaults()}
    out: dict[str, list[Any]] = {}
    for name, p in op.param_specs.items():
        if not p.scalar or p.curated is not None:
            continue
        values = sorted(p.members.values()) if p.members else [False, True] if p.dtype == "BOOL_8" else []
        ruled = [v for v in values if not _fits([c for c in steer if name in c.names()], {**env, name: v})]
        if ruled:
            out[name] = ruled
    return out


def _typical_steer(op: OpDef) -> list[expr.Expr]:
    """The typical tier's conditions on parameters and dims alone (``plan.steer``)."""
    conditions = [expr.parse(x) for x in op.generation.get("typical_when") or []]
    return [c for c in conditions if not c.tensor_refs() and not ({"in", "out"} & c.names())]


def _valid(op: OpDef, assignment: dict[str, Any]) -> bool:
    """Whether the checks on these parameters alone can hold with this assignment: a check that names another
    parameter (it may be left out: Resize's cubic_coeff beside NEAREST), a tensor or an unknown name is no
    objection."""
    env = {**op.enum_names(), **op.param_defaults(), **assignment}
    env["present"] = lambda name: True  # the scheduled parameters are given
    params = set(op.params)
    for c in op.constraints:
        named = c.check.names() & params if c.check is not None else set()
        if not named or not named <= set(assignment) or c.check.tensor_refs():
            continue
        try:
            if not expr.holds(c.check, env):
                return False
        except (expr.EvalError, TypeError, KeyError):
            continue
    return True


def interacting_pairs(op: OpDef) -> list[tuple[tuple[str, Any], tuple[str, Any]]]:
    """Every pair of values of two scheduled parameters that a case can hold together (``_valid``). Why every two:
    each one's value changes what the op computes, so a bug may need two of them at once (Resize's ALIGN_CORNERS
    transformation beside NEAREST interpolation), and the spec says which pairs cannot meet, never which cannot
    matter together."""
    members = enumerated_members(op)
    names = list(members)
    return [((a, x), (b, y)) for i, a in enumerate(names) for b in names[i + 1:]
            for x in members[a] for y in members[b] if _valid(op, {a: x, b: y})]  # fmt: skip


_ROWS: dict[tuple[str, int], list[dict[str, Any]]] = {}


def covering_rows(op: OpDef) -> list[dict[str, Any]]:
    """Slots that force the scheduled parameters so that together they hold every pair of ``interacting_pairs``: a
    covering array, built greedily. Each row starts from a pair not held yet, takes the values of other parameters
    that complete more pairs beside it (a parameter no value helps is left to the draw) and the companions its
    checks need (nearest_mode needs NEAREST); of the rows every such start gives, the one holding the most new
    pairs is kept. Resize's 4 x 4 x 3 x 2 values take 16 rows where one value at a time took 13 slots and left most
    pairs to chance. Worked out once per spec."""
    key = (op.name, id(op))
    if key not in _ROWS:
        _ROWS[key] = _covering(op)
    return _ROWS[key]


def _covering(op: OpDef) -> list[dict[str, Any]]:
    members = enumerated_members(op)
    todo = set(interacting_pairs(op))
    names = sorted(members, key=lambda n: -len(members[n]))
    rows: list[dict[str, Any]] = []
    while todo:
        best_row, best_held = None, set()
        for start in sorted(todo, key=repr):
            row = dict(start)
            for name in names:
                if name in row:
                    continue
                options = [v for v in members[name] if _valid(op, {**row, name: v})]
                gains = {v: _gain(todo, row, name, v) for v in options}
                pick = max(options, key=lambda v: gains[v], default=None)
                if pick is not None and gains[pick][0] > 0:  # a value that holds no new pair here is left to the draw
                    row[name] = pick
            for name, value in list(row.items()):
                for other, v in _companions(op, name, value, members).items():
                    if other not in row and _valid(op, {**row, other: v}):
                        row[other] = v
            held = {pair for pair in todo if all(row.get(n) == v for n, v in pair)}
            if len(held) > len(best_held):
                best_row, best_held = row, held
        if best_row is None:
            break
        todo -= best_held
        rows.append(best_row)
    return rows


def _gain(todo: set, row: dict[str, Any], name: str, value: Any) -> tuple[int, int]:
    """What ``name = value`` adds to a row: pairs it completes with the values chosen so far, then pairs it could
    still complete with parameters not chosen yet."""
    done = could = 0
    for pair in todo:
        mine = [n for n, v in pair if n == name and v == value]
        if not mine:
            continue
        other, wanted = next((n, v) for n, v in pair if n != name)
        if other in row:
            done += row[other] == wanted
        else:
            could += 1
    return done, could


def enumerated_slots(op: OpDef) -> list[dict[str, Any]]:
    """One slot per value of every scalar boolean and enum parameter, in spec order: ``{parameter: value}``, with
    the values of other such parameters its own checks need beside it (Resize's nearest_mode FLOOR needs
    interpolation_mode NEAREST). The first attempts of a typical cell force one slot each, in turn, twice over, and
    draw the rest of the case as usual.

    Why: hypothesis draws a member with no promise of ever drawing all of them, and every cell of an op follows
    the same choices under one seed, so at 20 cases a cell ElementWiseBinary drew 7 of its 11 typical
    operations in every cell and Resize never drew LINEAR or CUBIC: a bug in one of them was invisible
    (``python -m bench drawn`` lists what is never drawn). Forcing one slot at a time leaves the other
    parameters random, so a value the backend refuses beside one companion (ResizeBilinear's align_corners
    beside antialias) gets a second try beside another."""
    members = enumerated_members(op)
    if len(members) >= 2:  # every pair of two parameters' values, not one value at a time (``covering_rows``)
        return covering_rows(op)
    return [{name: v, **_companions(op, name, v, members)} for name, values in members.items() for v in values]


def typical_slots(op: OpDef, config: Config) -> list[dict[str, Any]]:
    """``enumerated_slots`` a typical cell of ``config`` forces: not those the typical conditions rule out for the
    configuration's datatypes (ElementWiseBinary's comparisons on a FLOAT_32 output)."""
    slots = enumerated_slots(op)
    by_type = [c for c in (expr.parse(x) for x in op.generation.get("typical_when") or [])
               if c.tensor_refs() and _reads_only_datatypes(c)]  # fmt: skip
    if by_type:
        env = {**op.enum_names(), **_datatype_stand_ins(op, config)}
        slots = [slot for slot in slots if _fits([c for c in by_type if c.names() & set(slot)], {**env, **slot})]
    # each cell of the op starts further along the list: where the rows outnumber a cell's cases (Resize needs 24,
    # its nearest modes only beside NEAREST), the op's cells together still hold every pair
    labels = [c.label for c in configs(op)]
    at = (labels.index(config.label) * CELL_CASES) % len(slots) if slots and config.label in labels else 0
    return slots[at:] + slots[:at]


class _Schedule:
    """Which slot of ``enumerated_slots`` a strategy's next draw forces: each slot until a case kept it (at most
    ``TRIES`` draws: a value refused beside every companion drawn is given up), the whole list twice over, then
    none. One per strategy, so one per cell, in the order hypothesis draws."""

    TRIES = 8

    def __init__(self, slots: list[dict[str, Any]], shows: Callable[[str, Case], bool] = lambda name, case: True,
                 ) -> None:  # fmt: skip
        self.slots, self.at, self.tries, self.shows = slots, 0, 0, shows

    def slot(self) -> dict[str, Any]:
        if self.at >= 2 * len(self.slots):
            return {}
        self.tries += 1
        return self.slots[self.at % len(self.slots)]

    def kept(self, case: Case) -> None:
        """A drawn case came out of the build: its slot is done if the case kept the forced value where the value
        shows (an optional parameter its other parameters rule out is left out; the spec's ``shows_when`` says
        when a value changes the result), else the slot is tried again."""
        if self.at >= 2 * len(self.slots):
            return
        slot = self.slots[self.at % len(self.slots)]
        held = all((p := case.params.get(name)) is not None and p.value == value and self.shows(name, case)
                   for name, value in slot.items())  # fmt: skip
        if held or self.tries >= self.TRIES:
            self.at, self.tries = self.at + 1, 0

    def refused(self) -> None:
        if self.at < 2 * len(self.slots) and self.tries >= self.TRIES:
            self.at, self.tries = self.at + 1, 0


def _companions(op: OpDef, name: str, value: Any, members: dict[str, list[Any]]) -> dict[str, Any]:
    """Values of the other enumerated parameters under which ``name``'s own checks hold with ``name`` at ``value``
    (the first such combination, in member order); {} where its checks name none of them or hold anyway."""
    checks = [c.check for c in op.constraints if c.owner == name and c.check is not None]
    named = sorted({n for c in checks for n in c.names() if n in members and n != name})
    if not named:
        return {}
    base = {**op.enum_names(), name: value}
    defaults = op.param_defaults()
    # the defaults first: a companion that converters leave at its default is the likeliest to run
    orders = [sorted(members[n], key=lambda m, n=n: m != defaults.get(n)) for n in named]
    for combo in itertools.product(*orders):
        try:
            if all(expr.holds(c, {**base, **dict(zip(named, combo, strict=True))}) for c in checks):
                return dict(zip(named, combo, strict=True))
        except (expr.EvalError, TypeError, KeyError):
            return {}
    return {}


# inputs a repeated declaration without a last index is drawn as, at most (Concat's in[0..m])
_REPEATED_AT_MOST = 3


_DATATYPE_FUNCTIONS = frozenset({"dtype", "is_float", "is_quantized", "is_integer", "is_bool"})


def _reads_only_datatypes(condition: expr.Expr) -> bool:
    """Whether every tensor the condition names is the argument of a datatype function (``is_quantized(in[0])``)."""
    inside = {id(call.args[0]) for call in ast.walk(condition.tree)
              if isinstance(call, ast.Call) and isinstance(call.func, ast.Name)
              and call.func.id in _DATATYPE_FUNCTIONS and len(call.args) == 1}  # fmt: skip
    refs = [n for n in ast.walk(condition.tree) if isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name)
            and n.value.id in ("_in", "_out")]  # fmt: skip
    return bool(refs) and all(id(n) in inside for n in refs)


def _datatype_stand_ins(op: OpDef, config: Config) -> dict[str, Any]:
    """``_in``/``_out`` for conditions that read only datatypes: each declared tensor with the configuration's type
    (a repeated one's at each of its indices) and no shape yet."""

    def stand_ins(decls: list[TensorSpec]) -> list[expr.TensorInfo]:
        typed: dict[int, str] = {}
        for d in decls:
            first, rep = d.first_index, d.repeated or {}
            last = rep["last"] if isinstance(rep.get("last"), int) else first + (_REPEATED_AT_MOST - 1 if rep else 0)
            typed.update(dict.fromkeys(range(first, last + 1), config.dtype_of(d.name)))
        return [expr.TensorInfo((), typed[k]) if k in typed else expr.TensorInfo((), "", present=False)
                for k in range(max(typed, default=-1) + 1)]  # fmt: skip

    return {"_in": stand_ins(op.input_specs), "_out": stand_ins(op.output_specs)}
