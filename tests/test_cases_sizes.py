"""Deployed sizes in the typical tier (``cases/generate/sizes.py``): batch 1 for half the cases, a third of them
filling the HTP's vectors, drawn from the spec's own dim names."""

from __future__ import annotations

import math

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hyp_seed

import opdefs
from cases import generate
from cases.generate import sizes
from reference.expected import infer

VECTOR_BYTES = 128  # the HTP's vector: 128 8-bit elements


def _cell(name: str, n: int = 20, seed: int = 4, tier: str = generate.TYPICAL, config: int = 0) -> list:
    """A cell's cases as the conformance run draws them (its parts, each under its own seed offset)."""
    op = opdefs.load(name)
    cfg = generate.configs(op)[config]
    got: dict = {}
    for strategy, count, salt in generate.cell_strategies(op, cfg, generate.Settings(infer=infer, tier=tier), n):

        @hyp_seed(seed + salt)
        @settings(max_examples=count, phases=[Phase.generate], database=None, deadline=None,
                  suppress_health_check=list(HealthCheck))  # fmt: skip
        @given(strategy)
        def run(case) -> None:
            got.setdefault(case.case_id(), case)

        run()
    return list(got.values())


def test_a_typical_cell_splits_half_batch_one_and_a_third_at_a_deployed_size():
    split = sizes.parts(20)
    assert sum(c for _, _, c in split) == 20
    assert sum(c for one, _, c in split if one) == 20 // 2, split
    assert sum(c for _, big, c in split if big) == round(20 / sizes.DEPLOYED_SHARE), split


def test_an_op_without_a_batch_or_a_dim_to_grow_is_not_split_into_parts_that_draw_alike():
    assert sizes.parts(20, batched=False, grows=False) == [(True, False, 20)]


def test_half_of_a_typical_convolution_cell_is_batch_one():
    cases = _cell("Conv2d")
    ones = sum(c.inputs[0].shape[0] == 1 for c in cases)
    assert 0.4 <= ones / len(cases) <= 0.6, f"{ones} of {len(cases)} Conv2d cases are batch 1"


def test_deployed_sized_cases_fill_a_vector_with_a_tail_after_it():
    """Some typical cases hold a channel past a vector and not a whole number of them: a kernel's main loop and
    its tail both run."""
    for name in ("Conv2d", "Softmax", "FullyConnected"):
        cases = _cell(name)
        large = [c for c in cases if max(math.prod(t.shape) for t in c.inputs if t is not None) >= 2048]
        assert large, f"no {name} case holds 2048 elements"
        lasts = {t.shape[-1] for c in large for t in c.inputs if t is not None and t.shape}
        assert any(d > VECTOR_BYTES // 4 and d % (VECTOR_BYTES // 4) for d in lasts), f"{name}: innermost {lasts}"


def test_the_grown_dims_come_from_the_spec_names_not_from_a_table_of_ops():
    conv = opdefs.load("Conv2d")
    assert set(sizes.growable(conv)) == {"height", "width", "channel_in", "channel_out"}
    assert "filter_height" not in sizes.growable(conv), "a filter's taps are a curated size, not a deployed one"
    assert sizes.growable(opdefs.load("ElementWiseAdd")) == (sizes.FREE,)


def test_the_edge_tier_keeps_its_sizes():
    cases = _cell("Conv2d", tier=generate.EDGE, n=10)
    assert all(max(math.prod(t.shape) for t in c.inputs if t is not None) <= generate.Settings().max_elements
               for c in cases)  # fmt: skip


def test_every_pair_of_two_switches_a_case_can_hold_is_a_row_of_the_schedule():
    from cases.generate import slots

    for name in ("Resize", "DetectionOutput", "InstanceNorm", "GridSample"):
        op = opdefs.load(name)
        pairs = slots.interacting_pairs(op)
        rows = slots.covering_rows(op)
        held = {pair for pair in pairs for row in rows if all(row.get(n) == v for n, v in pair)}
        assert held == set(pairs), f"{name}: pairs no row holds: {sorted(set(pairs) - held)[:5]}"


def test_a_pair_its_checks_rule_out_is_not_asked_for():
    from cases.generate import slots

    op = opdefs.load("Resize")
    linear = op.enum_names()["LINEAR"]
    assert not any({n: v for n, v in pair} == {"interpolation_mode": linear, "nearest_mode": mode}
                   for pair in slots.interacting_pairs(op) for mode in range(4)), \
        "nearest_mode beside LINEAR interpolation: the spec gives nearest_mode only with NEAREST"


def test_a_dim_s_room_keeps_every_input_that_names_it_within_the_cap():
    inputs = (("batch", "depth", "height", "width", "channel"), ("channel",))
    got = sizes.room("width", inputs, {"batch": 1, "depth": 14, "height": 13}, {"channel": 96}, 65536)
    assert got == 65536 // (14 * 13 * 96), f"room for width {got}: the channel still to grow must keep its 96"
    assert sizes.room("depth", (("channel",),), {}, {}, 65536) is None, "a dim no input names has no room to keep"


def _refused_per_kept(name: str) -> tuple[int, int]:
    from bench.run import draw_cases

    label = generate.configs(opdefs.load(name))[0].label
    got, refused, _ = draw_cases(name, label, generate.TYPICAL, 20, 0)
    return refused, len(got)


def test_a_deployed_five_d_convolution_grows_its_dims_within_the_cap_instead_of_refusing_the_draws():
    from bench.run import TARGETS

    refused, kept = _refused_per_kept("Conv3d")
    assert refused <= TARGETS["refusals_per_case"] * kept, f"Conv3d: {refused} draws refused for {kept} cases"


def test_a_dim_a_check_makes_equal_to_an_integer_parameter_takes_the_parameter_s_value():
    from bench.run import TARGETS

    for case in _cell("Stft"):
        window = case.inputs[1] if len(case.inputs) > 1 else None
        if window is not None and "frame_length" in case.params:
            assert window.shape[0] == int(case.params["frame_length"].value), (window.shape, case.params)
    refused, kept = _refused_per_kept("Stft")
    assert refused <= TARGETS["refusals_per_case"] * kept, f"Stft: {refused} draws refused for {kept} cases"


def test_batch_one_gives_way_where_a_check_wants_the_batch_a_multiple_of_the_blocks():
    from bench.run import TARGETS

    for case in _cell("BatchToSpace"):
        block = case.params["block_size"].value
        assert case.inputs[0].shape[0] % (int(block[0]) * int(block[1])) == 0, (case.inputs[0].shape, block)
    refused, kept = _refused_per_kept("BatchToSpace")
    assert refused <= TARGETS["refusals_per_case"] * kept, f"BatchToSpace: {refused} draws refused for {kept} cases"
