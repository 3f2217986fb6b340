"""A turn a killed Vis cut off ends with what it showed: only the call that had not ended and
only the answer still streaming, each where the loop would have put it."""

from __future__ import annotations

from pathlib import Path

from vis_core.events import (
    AssistantDelta,
    AssistantMessage,
    BlockFinished,
    BlockPrinted,
    IterationStarted,
    SessionCreated,
    TurnEnded,
    TurnStarted,
)
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
