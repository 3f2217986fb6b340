"""fold_session keys: every form of the grammar, and the refusals naming the valid keys."""

from __future__ import annotations

import pytest

from vis_core.context.hints import hint_text
from vis_core.context.keys import (
    FoldKeyError,
    TurnSteps,
    parse_key,
    settled_steps_key,
    unfolded_turns_key,
)
from vis_core.events import FoldCreated

# t1: 2 iterations; t2: none (a chat turn); t3: 3; t4 is the current turn, i3 live.
TURNS = {
    1: TurnSteps(1, (1, 2)),
    2: TurnSteps(2, ()),
    3: TurnSteps(3, (1, 2, 3)),
    4: TurnSteps(4, (1, 2, 3), live=3, current=True),
}


@pytest.mark.parametrize(
    ("key", "spans"),
    [
        ("t1", [(1, 0, 0)]),
        ("t2", [(2, 0, 0)]),
        ("t3/i1-i2", [(3, 1, 2)]),
        ("t3/i2-", [(3, 2, 3)]),
        ("t4/i1-", [(4, 1, 2)]),  # settled steps only: the live i3 stays
        ("-t3", [(1, 0, 0), (2, 0, 0), (3, 0, 0)]),
        ("-t3/i2", [(1, 0, 0), (2, 0, 0), (3, 1, 2)]),
        ("-t4", [(1, 0, 0), (2, 0, 0), (3, 0, 0), (4, 1, 2)]),
        ("t1, t3/i2-i3", [(1, 0, 0), (3, 2, 3)]),
        ("t1-t3", [(1, 0, 0), (2, 0, 0), (3, 0, 0)]),
        ("t2-t4", [(2, 0, 0), (3, 0, 0), (4, 1, 2)]),
        ("t4", [(4, 1, 2)]),  # the current turn: its settled steps, request and answer stay
    ],
)
def test_each_key_form_becomes_its_spans(key: str, spans: list[tuple[int, int, int]]) -> None:
    assert list(parse_key(key, TURNS).spans) == spans


@pytest.mark.parametrize(
    ("key", "why"),
    [
        ("t4/i3", "you cannot fold the live step (t4/i3)"),
        ("t4/i2-i3", "you cannot fold the live step (t4/i3)"),
        ("-t1/i16", "turn t1 has no iteration i16 (it has i1-i2)"),
        ("t9", "there is no turn t9"),
        ("t2/i1-", "turn t2 has no iterations"),
        ("t1,t1", "commas join disjoint ranges"),
        ("t3/i1-i2,t3/i2-i3", "commas join disjoint ranges"),
        ("undo", "there is no inline undo"),
        ("+t1", "there is no inline undo"),
        ("turn 2", "is not a key"),
        ("t" + "9" * 5000, "is not a key"),  # was int()'s "Exceeds the limit (4300 digits)"
        ("t3/i3-i1", "ends before it starts"),
        ("t3-t1", "the range t3-t1 ends before it starts"),
        ("t2-t9", "there is no turn t5 (the turns are t1-t4)"),
        ("t1-t2,t2", "commas join disjoint ranges"),
        ("t01", "write 't1', not 't01': numbers have no leading zeros"),
        ("-t3/i02", "write '-t3/i2', not '-t3/i02'"),
    ],
)
def test_a_bad_key_is_refused_with_the_valid_keys_of_every_turn(key: str, why: str) -> None:
    with pytest.raises(FoldKeyError) as caught:
        parse_key(key, TURNS)
    message = str(caught.value)
    assert why in message
    assert "- t1 (the whole turn) or a range of t1/i1-i2 (2 iterations)" in message
    assert "- t2 (a turn without steps)" in message
    assert "- t3 (the whole turn) or a range of t3/i1-i3 (3 iterations)" in message
    assert "- t4/i1-i2 (settled steps of the current turn; i3 is the live step" in message


def test_a_key_must_be_text() -> None:
    with pytest.raises(FoldKeyError, match="key must be text"):
        parse_key(3, TURNS)


def test_the_hint_key_folds_every_unfolded_earlier_turn() -> None:
    assert unfolded_turns_key(TURNS, set(), 4) == "-t3"
    assert unfolded_turns_key(TURNS, {1}, 4) == "t2,t3"
    assert unfolded_turns_key(TURNS, {1, 2, 3}, 4) is None
    assert unfolded_turns_key({1: TURNS[1]}, set(), 1) is None


def test_whole_turns_in_a_row_are_named_as_one_range() -> None:
    from vis_core.context.keys import describe_spans

    many = [(p, 0, 0) for p in range(1, 61)]
    assert describe_spans(many) == "t1-t60"
    assert describe_spans([(1, 0, 0), (2, 0, 0), (4, 0, 0), (5, 1, 2)]) == "t1, t2, t4, t5/i1-i2"
    assert describe_spans([*many[2:], (61, 3, 3)]) == "t3-t60, t61/i3"
    turns = {p: TurnSteps(p, ()) for p in range(1, 8)} | {8: TurnSteps(8, (1,), current=True)}
    assert unfolded_turns_key(turns, {1}, 8) == "t2-t7"
    assert parse_key("t2-t7", turns).spans == tuple((p, 0, 0) for p in range(2, 8))


def folded(key: str, *spans: tuple[int, int, int]) -> FoldCreated:
    return FoldCreated("s", key=key, spans=[list(span) for span in spans])


@pytest.mark.parametrize(
    ("earlier", "key", "why"),
    [
        ([folded("t1", (1, 0, 0))], "t1/i1", "t1/i1 was folded already by 't1'"),
        ([folded("t3/i1-i2", (3, 1, 2))], "t3/i2-i3", "t3/i2-i3 was folded already by 't3/i1-i2'"),
        ([folded("t1-t3", (1, 0, 0), (2, 0, 0), (3, 0, 0))], "t3", "t3 was folded already by"),
        # an earlier fold another covers has given way: the clash names the one in effect
        (
            [folded("t3/i1", (3, 1, 1)), folded("t3", (3, 0, 0))],
            "t3/i1-i2",
            "t3/i1-i2 was folded already by 't3'",
        ),
    ],
)
def test_a_key_taking_part_of_an_earlier_fold_is_refused_by_that_folds_key(
    earlier: list[FoldCreated], key: str, why: str
) -> None:
    with pytest.raises(FoldKeyError) as caught:
        parse_key(key, TURNS, earlier)
    assert f"fold_session({key!r}) is refused: {why}" in str(caught.value)
    assert "- t1 (the whole turn) or a range of t1/i1-i2 (2 iterations)" in str(caught.value)


@pytest.mark.parametrize(
    ("earlier", "key", "replaces", "turns", "steps"),
    [
        ([folded("t1", (1, 0, 0))], "t1", ("t1",), (), 0),  # a new gist, nothing more leaves
        ([folded("t3/i1", (3, 1, 1))], "t3/i1-i2", ("t3/i1",), (), 1),
        ([folded("t3/i1-i2", (3, 1, 2))], "-t3", ("t3/i1-i2",), (1, 2, 3), 0),
        # a whole turn over some folded steps of it: the earlier gist (of t1 too) stays
        ([folded("-t3/i2", (1, 0, 0), (2, 0, 0), (3, 1, 2))], "t3", (), (3,), 0),
        ([folded("t1", (1, 0, 0))], "t3/i1", (), (), 1),
    ],
)
def test_a_key_covering_an_earlier_fold_replaces_it_and_counts_only_what_leaves(
    earlier: list[FoldCreated],
    key: str,
    replaces: tuple[str, ...],
    turns: tuple[int, ...],
    steps: int,
) -> None:
    plan = parse_key(key, TURNS, earlier)
    assert plan.replaces == replaces
    assert (plan.leaving_turns, plan.leaving_steps) == (turns, steps)


def test_the_current_turns_key_leaves_out_the_steps_folded_already() -> None:
    turn = TurnSteps(4, (1, 2, 3, 4, 5, 6), live=6, current=True)
    assert settled_steps_key(turn, set()) == "t4/i1-"
    assert settled_steps_key(turn, {1}) == "t4/i2-"
    assert settled_steps_key(turn, {2, 3}) == "t4/i1,t4/i4-"
    assert settled_steps_key(turn, {5}) == "t4/i1-i4"
    assert settled_steps_key(turn, {1, 2, 3, 4, 5}) is None
    plan = parse_key("t4/i1,t4/i4-", {4: turn}, [folded("t4/i2-i3", (4, 2, 3))])
    assert (plan.replaces, plan.leaving_steps) == ((), 3)


def test_the_hint_never_says_100_percent_above_the_budget() -> None:
    hint = hint_text(2_711, 2_700, "-t1", None) or ""
    assert hint.startswith("Context is above the soft budget: 101% of the soft budget (2,711 of")
    assert (hint_text(2_700, 2_700, "-t1", None) or "").startswith("Context is at 100% of")
    assert (hint_text(2_699, 2_700, "-t1", None) or "").startswith("Context is at 99% of")
