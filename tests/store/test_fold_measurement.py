"""``fold_measurement``: pending until the next response of the conversation, then measured
for the whole request (shared by every fold made since), or unavailable with its reason."""

from __future__ import annotations

import dataclasses

import pytest

from vis_core.events import FoldCreated, TurnStarted, UsageReported
from vis_core.store import Store

MODEL = "anthropic/claude-sonnet-4-6"


def fold(sid: str, turn: str, n: int, *, model: str = MODEL, origin: str = "model") -> FoldCreated:
    return FoldCreated(
        sid,
        fold_id=f"f{n}",
        turn_id=turn,
        key=f"t{n}",
        gist="g",
        spans=[[n, 0, 0]],
        origin=origin,
        removed_tokens=100,
        before_input_tokens=50_000,
        model=model,
    )


def usage(
    sid: str, turn: str, tokens: int, *, model: str = MODEL, purpose: str = ""
) -> UsageReported:
    return UsageReported(sid, turn_id=turn, context_tokens=tokens, model=model, purpose=purpose)


def test_pending_then_measured_for_every_fold_since_the_last_request(store: Store) -> None:
    sid = store.create_session("/w", "/w").id
    store.append(TurnStarted(sid, turn_id="T", position=3, request="r"))
    store.append(fold(sid, "T", 1))
    store.append(fold(sid, "T", 2))
    assert [f.measurement() for f in store.folds(sid)] == [{"status": "pending"}] * 2
    store.append(usage(sid, "T", 900, purpose="gist"))  # a side call measures nothing
    assert store.folds(sid)[-1].measurement() == {"status": "pending"}
    store.append(usage(sid, "T", 42_000))
    measured = {
        "status": "measured",
        "before_input_tokens": 50_000,
        "after_input_tokens": 42_000,
        "net_reduction_tokens": 8_000,
        "fold_count": 2,
    }
    assert [f.measurement() for f in store.folds(sid)] == [measured, measured]
    store.append(fold(sid, "T", 3))  # a later fold starts its own measurement
    store.append(usage(sid, "T", 61_000))  # the request grew: a negative reduction
    latest = store.folds(sid)[-1].measurement()
    assert latest["net_reduction_tokens"] == -11_000 and latest["fold_count"] == 1
    assert store.folds(sid)[0].measurement() == measured  # measured once, kept


@pytest.mark.parametrize(
    ("made", "answered", "reason"),
    [
        (fold("S", "T", 1), usage("S", "T", 0), "usage is missing"),
        (
            fold("S", "T", 1),
            usage("S", "T", 40_000, model="openai/gpt-5"),
            "the provider or model changed",
        ),
        (fold("S", "T", 1, model=""), usage("S", "T", 40_000), "the provider or model is unknown"),
        (fold("S", "T", 1), usage("S", "U", 40_000), "the turn changed"),
    ],
)
def test_unavailable_says_why(
    store: Store, made: FoldCreated, answered: UsageReported, reason: str
) -> None:
    sid = store.create_session("/w", "/w").id
    store.append(TurnStarted(sid, turn_id="T", position=1, request="r"))
    store.append(dataclasses.replace(made, session_id=sid))
    store.append(dataclasses.replace(answered, session_id=sid))
    assert store.folds(sid)[0].measurement() == {
        "status": "unavailable",
        "reason": reason,
        "fold_count": 1,
    }


def test_compact_between_turns_is_measured_by_the_next_turn(store: Store) -> None:
    sid = store.create_session("/w", "/w").id
    store.append(TurnStarted(sid, turn_id="T", position=1, request="r"))
    store.append(fold(sid, "T", 1, origin="compact"))
    store.append(TurnStarted(sid, turn_id="U", position=2, request="r"))
    store.append(usage(sid, "U", 30_000))
    assert store.folds(sid)[0].measurement()["status"] == "measured"
