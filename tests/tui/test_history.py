"""Stored turns read back from a real store as the transcript shows them (vis_tui/history.py)."""

from __future__ import annotations

from pathlib import Path

from vis_core.events import (
    AssistantMessage,
    BlockFinished,
    DraftChanged,
    IterationStarted,
    TurnEnded,
    TurnStarted,
)
from vis_core.model.draft import DraftAction
from vis_core.model.turn import TurnStatus
from vis_core.store import Store
from vis_tui.history import PartKind, store_page_loader


def test_a_draft_mark_made_in_a_turn_is_read_back_in_its_place(tmp_path: Path) -> None:
    """A draft entered by a turn's block leaves its mark in that turn, after what was said
    before it and before what was said after; the person's own ``/draft`` (no turn) leaves
    none there (its command note says it)."""
    with Store(tmp_path / "vis.db") as store:
        sid = store.create_session(tmp_path, tmp_path, title="drafted").id
        store.append_many(
            [
                DraftChanged(sid, action=DraftAction.ENTERED, label="mine", text="Entered mine"),
                TurnStarted(sid, turn_id="t1", position=1, request="draft it"),
                AssistantMessage(sid, turn_id="t1", iteration=0, text="Into a draft."),
                IterationStarted(sid, turn_id="t1", iteration_id="i1", index=0, code="..."),
                DraftChanged(sid, turn_id="t1", label="fix", text="Entered draft fix"),
                BlockFinished(sid, turn_id="t1", iteration_id="i1", duration=0.1),
                AssistantMessage(sid, turn_id="t1", iteration=1, text="Drafted."),
                TurnEnded(sid, turn_id="t1", status=TurnStatus.COMPLETED, content="Drafted."),
            ]
        )
        page = store_page_loader(store, sid)(None)
    [turn] = page.turns
    said = [(p.kind, p.text) for p in turn.parts() if p.kind in (PartKind.REPLY, PartKind.NOTE)]
    assert said == [
        (PartKind.REPLY, "Into a draft."),
        (PartKind.NOTE, "✎ Entered draft fix"),
        (PartKind.REPLY, "Drafted."),
    ]
