"""A scripted turn end to end through the Host: model → sandbox → host tool → store."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import yaml

from vis_core.events import (
    ActivityEnded,
    AssistantDelta,
    BlockFinished,
    IterationStarted,
    TurnEnded,
)
from vis_core.host import Host, HostOptions
from vis_core.model.activity import ActivityState
from vis_core.model.turn import TurnStatus


def write_script(path: Path, responses: list[dict]) -> Path:
    path.write_text(yaml.safe_dump(responses), encoding="utf-8")
    return path


async def open_host(workspace: Path, script: Path) -> Host:
    return await Host.open(HostOptions(workspace=workspace, provider="scripted", script=script))


async def test_scripted_turn_calls_a_host_tool_and_is_stored(workspace: Path, tmp_path: Path):
    (workspace / "notes.txt").write_text("alpha\nbeta\n", encoding="utf-8")
    script = write_script(
        tmp_path / "script.yaml",
        [
            {"text": "Reading the notes.", "code": 'print(await cat("notes.txt"))'},
            {"text": "The notes hold alpha and beta."},
        ],
    )
    host = await open_host(workspace, script)
    events = []
    try:
        session = await host.new_session()
        session.subscribe(events.append)
        ended = await session.submit("What is in notes.txt?")
    finally:
        await host.close()

    assert ended.status is TurnStatus.COMPLETED
    assert ended.content == "The notes hold alpha and beta."
    block = next(e for e in events if isinstance(e, BlockFinished))
    assert "alpha" in block.stdout and "beta" in block.stdout
    assert block.error is None
    activity = next(e for e in events if isinstance(e, ActivityEnded)).activity
    assert activity.tool == "cat"
    assert activity.state is ActivityState.SUCCEEDED
    assert "".join(e.text for e in events if isinstance(e, AssistantDelta)).startswith("Reading")

    db = sqlite3.connect(host.paths.db_file)
    try:
        turns = db.execute("select status, content from turns").fetchall()
        assert turns == [("completed", "The notes hold alpha and beta.")]
        assert db.execute("select count(*) from iterations").fetchone()[0] == 1
        (stdout,) = db.execute("select stdout from blocks").fetchone()
        assert "alpha" in stdout
        assert db.execute("select count(*) from activities").fetchone()[0] == 1
    finally:
        db.close()


async def test_block_error_reaches_the_model_and_the_turn_goes_on(workspace, tmp_path):
    script = write_script(
        tmp_path / "s.yaml",
        [
            {"code": "x = 1\nraise ValueError('bad value')"},
            {"code": "print(x + 1)"},
            {"text": "done"},
        ],
    )
    host = await open_host(workspace, script)
    events = []
    try:
        session = await host.new_session()
        session.subscribe(events.append)
        ended = await session.submit("go")
    finally:
        await host.close()
    blocks = [e for e in events if isinstance(e, BlockFinished)]
    assert "ValueError: bad value" in blocks[0].error
    assert blocks[1].stdout.strip() == "2"
    assert ended.status is TurnStatus.COMPLETED


async def test_max_iterations_ends_the_turn_with_its_own_status(workspace, tmp_path):
    script = write_script(tmp_path / "s.yaml", [{"code": "print(1)"}] * 4)
    host = await open_host(workspace, script)
    try:
        session = await host.new_session()
        session.limits.max_iterations = 2
        ended = await session.submit("loop")
    finally:
        await host.close()
    assert ended.status is TurnStatus.MAX_ITERATIONS
    assert "max_iterations" in (ended.error or "")


async def test_cancel_interrupts_a_runaway_block(workspace, tmp_path):
    import asyncio

    spin = "open('spinning', 'w').close()\nwhile True:\n    pass"  # says it runs, then spins
    script = write_script(tmp_path / "s.yaml", [{"code": spin}])
    host = await open_host(workspace, script)
    events = []
    try:
        session = await host.new_session()
        session.subscribe(events.append)
        task = asyncio.create_task(session.submit("spin"))
        async with asyncio.timeout(30):
            while not (workspace / "spinning").exists():  # the block is in its loop
                await asyncio.sleep(0.02)
        assert any(isinstance(e, IterationStarted) for e in events)
        session.cancel()
        ended = await task
    finally:
        await host.close()
    assert ended.status is TurnStatus.CANCELLED
    assert isinstance(events[-1], TurnEnded)


async def test_exhausted_script_fails_the_turn(workspace, tmp_path):
    script = write_script(tmp_path / "s.yaml", [{"code": "print(1)"}])
    host = await open_host(workspace, script)
    try:
        session = await host.new_session()
        ended = await session.submit("go")
    finally:
        await host.close()
    assert ended.status is TurnStatus.FAILED
    assert "script exhausted after 1 response" in ended.error
    assert "1 responses" not in ended.error


async def test_resumed_session_keeps_conversation_and_sandbox_values(workspace, tmp_path):
    first_script = write_script(tmp_path / "a.yaml", [{"code": "y = 41"}, {"text": "set"}])
    host = await open_host(workspace, first_script)
    try:
        first = await host.new_session()
        await first.submit("set y")
    finally:
        await host.close()

    second_script = write_script(tmp_path / "b.yaml", [{"code": "print(y + 1)"}, {"text": "42"}])
    host = await open_host(workspace, second_script)
    try:
        assert host.registry.latest_session_id() == first.id
        resumed = await host.open_session(first.id)
        assert [m.role for m in resumed.conversation.messages] == [
            "user",
            "assistant",
            "tool",
            "assistant",
        ]
        events = []
        resumed.subscribe(events.append)
        ended = await resumed.submit("print y + 1")
    finally:
        await host.close()
    assert ended.status is TurnStatus.COMPLETED
    block = next(e for e in events if isinstance(e, BlockFinished))
    note, value = block.stdout.strip().splitlines()
    assert "restored" in note and "y" in note
    assert value == "42"


async def test_first_request_names_the_session(workspace, tmp_path):
    from vis_core.agent.session import title_from_request

    script = write_script(tmp_path / "s.yaml", [{"text": "ok"}])
    host = await open_host(workspace, script)
    try:
        session = await host.new_session()
        await session.submit("\n  Fix the flaky login test\nthen run the suite")
        assert session.title == "Fix the flaky login test"
        assert host.store.get_session(session.id).title == "Fix the flaky login test"
    finally:
        await host.close()
    assert title_from_request("word " * 30).endswith("…")
    assert len(title_from_request("word " * 30)) <= 61


async def test_introspection_off_removes_apropos_and_doc(workspace, tmp_path):
    script = write_script(
        tmp_path / "s.yaml",
        [{"code": "print('apropos' in dir(), 'doc' in dir())"}, {"text": "ok"}] * 2,
    )
    host = await open_host(workspace, script)
    try:
        session = await host.new_session()
        assert "apropos(pattern)" in await session.system_prompt()
        events = []
        session.subscribe(events.append)
        await session.submit("look")
        await host.settings.set("introspection", False, "session", session_id=session.id)
        assert "apropos(pattern)" not in await session.system_prompt()
        await session.submit("look again")
    finally:
        await host.close()
    outputs = [e.stdout.strip() for e in events if isinstance(e, BlockFinished)]
    assert outputs == ["True True", "False False"]
