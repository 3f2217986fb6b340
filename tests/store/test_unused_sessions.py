"""A session nobody used is not kept: opening Vis and quitting leaves nothing in the session
list. A turn, a setting saved for the session or a command run in it keeps it. One left by a
Vis that was killed goes at the next start, unless another Vis has it open."""

from __future__ import annotations

import sqlite3
from collections.abc import Awaitable, Callable
from pathlib import Path

import yaml

from vis_core.agent.session import AgentSession
from vis_core.host import Host, HostOptions
from vis_core.paths import VisPaths

Use = Callable[[Host, AgentSession], Awaitable[None]]


async def _kept(folder: Path, use: Use) -> int:
    """How many sessions a workspace in ``folder`` keeps after one is opened, ``use``d and
    closed (read by the next Vis)."""
    workspace = folder / "workspace"
    workspace.mkdir(parents=True)
    script = folder / "script.yaml"
    script.write_text(yaml.safe_dump([{"text": "Hello."}]), encoding="utf-8")
    options = HostOptions(workspace=workspace, provider="scripted", script=script)
    host = await Host.open(options)
    try:
        session = await host.new_session()
        await use(host, session)
        assert [row.id for row in host.store.list_sessions(workspace=workspace)] == [session.id]
    finally:
        await host.close()
    again = await Host.open(options)
    try:
        return len(again.store.list_sessions(workspace=workspace))
    finally:
        await again.close()


async def _nothing(host: Host, session: AgentSession) -> None:
    pass


async def _turn(host: Host, session: AgentSession) -> None:
    assert (await session.submit("hi")).status == "completed"


async def _setting(host: Host, session: AgentSession) -> None:
    await host.settings.set("max_iterations", "10", "session", session_id=session.id)


async def _command(host: Host, session: AgentSession) -> None:
    assert not (await host.commands.run(session, "/undo")).ok  # "no turn changed files"


async def test_an_untouched_session_is_not_kept(tmp_path: Path) -> None:
    assert await _kept(tmp_path, _nothing) == 0


async def test_a_session_with_a_turn_a_setting_or_a_command_is_kept(tmp_path: Path) -> None:
    for use in (_turn, _setting, _command):
        assert await _kept(tmp_path / use.__name__, use) == 1, use.__name__


async def test_a_session_left_by_a_killed_vis_goes_at_the_next_start(tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    options = HostOptions(workspace=workspace, provider="scripted", script=tmp_path / "none")
    running = await Host.open(options)  # another Vis, its session open and untouched
    try:
        held = await running.new_session()
        store = running.store
        left = store.create_session(workspace, workspace).id  # a Vis killed before its close
        titled = store.create_session(workspace, workspace, title="kept by its title").id
        db = sqlite3.connect(VisPaths.from_env().db_file)
        with db:  # all made an hour ago
            db.execute("UPDATE sessions SET created = created - 3600")
        db.close()
        young = store.create_session(workspace, workspace).id  # its Vis may be starting
        elsewhere = store.create_session(tmp_path, tmp_path).id  # another workspace's
        starting = await Host.open(options)
        try:
            starting.store.writer.settle()
            listed = {row.id for row in starting.store.list_sessions()}
        finally:
            await starting.close()
    finally:
        await running.close()
    assert left not in listed
    assert {held.id, titled, young, elsewhere} <= listed


async def test_continue_skips_a_later_session_that_only_showed_a_command(
    workspace: Path, tmp_path: Path
) -> None:
    script = tmp_path / "script.yaml"
    script.write_text(yaml.safe_dump([{"text": "Hello."}]), encoding="utf-8")
    options = HostOptions(workspace=workspace, provider="scripted", script=script)
    host = await Host.open(options)
    try:
        worked = await host.new_session()
        assert (await worked.submit("hi")).status == "completed"
        await host.close_session(worked)
        looked = await host.new_session()  # the app: /context, then quit (kept, as a command)
        assert (await host.commands.run(looked, "/context")).ok
        await host.close_session(looked)
        assert len(host.store.list_sessions(workspace=workspace)) == 2
        latest = host.store.latest_session(workspace)
        assert latest is not None and latest.id == worked.id
    finally:
        await host.close()
