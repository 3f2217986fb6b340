"""A resumed session rebuilds exactly the conversation the live one had, from fewer events."""

from __future__ import annotations

from pathlib import Path

import yaml
from sample_turns import conversation_of

from vis_core.agent.conversation import ConversationBuilder
from vis_core.agent.session import HISTORY_EVENTS
from vis_core.events import BlockFinished, IterationStarted, TurnEnded, TurnStarted
from vis_core.host import Host, HostOptions
from vis_core.model.turn import TurnStatus
from vis_core.store import Store


async def test_resume_reads_only_history_events_and_rebuilds_the_same_conversation(
    workspace: Path, tmp_path: Path
) -> None:
    (workspace / "notes.txt").write_text("alpha\n", encoding="utf-8")
    script = tmp_path / "s.yaml"
    script.write_text(
        yaml.safe_dump(
            [
                {"text": "Reading.", "code": 'print(await cat("notes.txt"))'},
                {"text": "It says alpha."},
                {"code": "raise ValueError('boom')"},
                {"text": "That failed."},
                {"text": "Plain answer."},
            ]
        ),
        encoding="utf-8",
    )
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted", script=script))
    try:
        session = await host.new_session()
        for request in ("read the notes", "fail once", "just answer"):
            await session.submit(request)
        live = list(session.conversation.messages)
        stored = host.store.events(session.id)
        everything = [row.event for row in stored]
        await session.close()
        resumed = await host.open_session(session.id)
        try:
            assert resumed.conversation.messages == live
            assert conversation_of(everything) == live
            assert resumed.turn_count == 3
        finally:
            await resumed.close()
        some = host.store.events(session.id, types=HISTORY_EVENTS)
        assert {row.type for row in stored} - HISTORY_EVENTS  # Activities etc. are skipped
        assert [row.seq for row in some] == [
            row.seq for row in stored if row.type in HISTORY_EVENTS
        ]
    finally:
        await host.close()


def test_events_of_no_type_and_of_unknown_types_are_none(tmp_path: Path) -> None:
    store = Store(tmp_path / "vis.db")
    row = store.create_session(tmp_path, tmp_path, title="t")
    store.append(TurnStarted(row.id, turn_id="t1", position=1, request="hi"))
    assert store.events(row.id, types=()) == []
    assert store.events(row.id, types={"NoSuchEvent"}) == []
    assert [e.type for e in store.events(row.id, types={"TurnStarted"})] == ["TurnStarted"]
    store.close()


def test_calls_left_without_a_result_are_answered_once_in_call_order() -> None:
    builder = ConversationBuilder()
    builder.add(TurnStarted("s", turn_id="t1", position=1, request="go"))
    for index, call in enumerate(("c1", "c2", "c3"), start=1):
        builder.add(IterationStarted("s", turn_id="t1", iteration_id=call, index=index))
    builder.add(BlockFinished("s", turn_id="t1", iteration_id="c2", stdout="done"))
    builder.add(TurnEnded("s", turn_id="t1", status=TurnStatus.CANCELLED))
    builder.add(TurnEnded("s", turn_id="t1", status=TurnStatus.CANCELLED))  # twice: no repeat
    tools = [(m.tool_call_id, m.text) for m in builder.messages if m.role == "tool"]
    assert tools == [("c2", "done"), ("c1", "(cancelled)"), ("c3", "(cancelled)")]
