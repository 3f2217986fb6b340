"""A turn a killed Vis cut off ends with what it showed: only the call that had not ended and
only the answer still streaming, each where the loop would have put it."""

from __future__ import annotations

from pathlib import Path

from vis_core.events import (
    ActivityEnded,
    ActivityStarted,
    ActivityUpdated,
    AssistantDelta,
    AssistantMessage,
    BlockFinished,
    BlockPrinted,
    IterationStarted,
    SessionCreated,
    TurnEnded,
    TurnStarted,
)
from vis_core.model.activity import ActivityRecord, ActivityState, SymbolTag
from vis_core.model.turn import Incomplete, TurnStatus
from vis_core.store import Store
from vis_core.store.interrupted import BLOCK_INTERRUPTED, INTERRUPTED, cut_off_endings


def _session(store: Store, workspace: Path) -> str:
    row = store.create_session(workspace, workspace)
    store.append(SessionCreated(row.id, workspace=str(workspace)))
    return row.id


def test_the_streaming_answer_after_an_ended_block_is_kept_as_that_requests_answer(
    tmp_path: Path,
) -> None:
    with Store(tmp_path / "vis.db") as store:
        sid = _session(store, tmp_path)
        t = "t1"
        store.append_many(
            [
                TurnStarted(sid, turn_id=t, position=1, request="go"),
                AssistantDelta(sid, turn_id=t, text="Let me "),
                AssistantDelta(sid, turn_id=t, text="look."),
                AssistantMessage(sid, turn_id=t, iteration=0, text="Let me look."),
                IterationStarted(sid, turn_id=t, iteration_id="c1", index=1, code="print(1)"),
                BlockPrinted(sid, turn_id=t, iteration_id="c1", text="1\n"),
                BlockFinished(sid, turn_id=t, iteration_id="c1", stdout="1\n"),
                AssistantDelta(sid, turn_id=t, text="It printed "),
                AssistantDelta(sid, turn_id=t, text="one and"),
            ]
        )
        ending = cut_off_endings(store, sid)
    assert ending == [
        AssistantMessage(
            sid,
            turn_id=t,
            iteration=1,
            text="It printed one and",
            incomplete=Incomplete.INTERRUPTED,
        ),
        TurnEnded(
            sid,
            turn_id=t,
            status=TurnStatus.CANCELLED,
            content="It printed one and",
            error=INTERRUPTED,
        ),
    ]


def test_each_call_not_ended_ends_with_what_it_printed_and_an_ended_turn_is_left_alone(
    tmp_path: Path,
) -> None:
    with Store(tmp_path / "vis.db") as store:
        sid = _session(store, tmp_path)
        store.append_many(
            [
                TurnStarted(sid, turn_id="t1", position=1, request="done before"),
                TurnEnded(sid, turn_id="t1"),
                TurnStarted(sid, turn_id="t2", position=2, request="go"),
                IterationStarted(sid, turn_id="t2", iteration_id="c1", index=1, code="..."),
                BlockPrinted(sid, turn_id="t2", iteration_id="c1", text="tick 0\n"),
                BlockPrinted(sid, turn_id="t2", iteration_id="c1", text="tick 1\n"),
            ]
        )
        (block, end) = cut_off_endings(store, sid)
        store.append_many([block, end])
        assert cut_off_endings(store, sid) == []  # ended once
    assert isinstance(block, BlockFinished) and isinstance(end, TurnEnded)
    assert (block.iteration_id, block.stdout, block.error) == (
        "c1",
        "tick 0\ntick 1\n",
        BLOCK_INTERRUPTED,
    )
    assert (end.turn_id, end.status, end.content) == ("t2", TurnStatus.CANCELLED, "")


def _call(sid: str, ident: str, turn_id: str, state: ActivityState) -> ActivityRecord:
    return ActivityRecord(
        id=ident,
        session_id=sid,
        turn_id=turn_id,
        iteration_id="c1",
        tool="shell",
        tag=SymbolTag.MUTATION,
        state=state,
        presentation=None,
        started_at=100.0,
    )


def test_a_tool_call_that_had_not_ended_ends_cancelled_not_running_forever(
    tmp_path: Path,
) -> None:
    running, done = ActivityState.RUNNING, ActivityState.SUCCEEDED
    with Store(tmp_path / "vis.db") as store:
        sid = _session(store, tmp_path)
        store.append_many(
            [
                TurnStarted(sid, turn_id="t1", position=1, request="before"),
                ActivityStarted(sid, activity=_call(sid, "a0", "t1", running)),
                TurnEnded(sid, turn_id="t1"),  # a call of an ended turn is not this turn's
                TurnStarted(sid, turn_id="t2", position=2, request="go"),
                IterationStarted(sid, turn_id="t2", iteration_id="c1", index=1, code="..."),
                ActivityStarted(sid, activity=_call(sid, "a1", "t2", running)),
                ActivityEnded(sid, activity=_call(sid, "a1", "t2", done)),
                ActivityStarted(sid, activity=_call(sid, "a2", "t2", running)),
                ActivityUpdated(sid, activity=_call(sid, "a2", "t2", running)),
            ]
        )
        (call, block, end) = cut_off_endings(store, sid)
        store.append_many([call, block, end])
        assert cut_off_endings(store, sid) == []
    assert isinstance(call, ActivityEnded) and call.activity is not None
    assert isinstance(block, BlockFinished) and isinstance(end, TurnEnded)
    assert (call.activity.id, call.activity.state, call.activity.error) == (
        "a2",
        ActivityState.CANCELLED,
        BLOCK_INTERRUPTED,
    )
    assert call.activity.ended_at is not None and call.activity.ended_at >= 100.0
