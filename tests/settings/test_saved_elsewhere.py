"""A value saved by another process (``vis settings set`` in a second terminal) reaches the
open sessions of a running Vis at their next request, as a save of its own does."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from cli_support import vis
from sandbox.hostile import BWRAP_PROBLEM

from vis_core.host import Host, HostOptions
from vis_core.settings.service import SaveResult

from .test_saved_between_requests import write_script

ELEVEN_BLOCKS = [{"code": f"print({n})"} for n in range(11)]


async def _set(workspace: Path, vis_home: Path, *args: str) -> None:
    done = await asyncio.to_thread(vis, "settings", "set", *args, cwd=workspace, env_home=vis_home)
    assert done.returncode == 0, done.stderr


async def test_a_value_saved_in_a_second_terminal_reaches_the_open_session(
    workspace: Path, tmp_path: Path, vis_home: Path
) -> None:
    """The iteration limit set from a shell, in config.toml and then for the session alone,
    bounds the session's next turns (before, it kept the limit it was opened with until a
    /reload, and a session value until it was opened again)."""
    turns = [{"text": "one"}, *ELEVEN_BLOCKS, *ELEVEN_BLOCKS, {"text": "three"}]
    script = write_script(tmp_path / "script.yaml", turns)
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted", script=script))
    heard: list[tuple[str, str, str | None]] = []

    async def hear(result: SaveResult) -> None:
        heard.append((result.setting_id, result.scope.value, result.session_id))

    host.settings.saved_listeners.append(hear)
    try:
        session = await host.new_session()
        first = await session.submit("one")
        await _set(workspace, vis_home, "max_iterations", "10")
        second = await session.submit("two")
        await _set(
            workspace,
            vis_home,
            "max_iterations",
            "25",
            "--scope",
            "session",
            "--session",
            session.id,
        )
        third = await session.submit("three")
    finally:
        await host.close()
    assert first.status.value == "completed", first.error
    assert second.status.value == "max_iterations", second.error
    assert "stopped after 10 iterations (the max_iterations setting)" in (second.error or "")
    assert third.status.value == "completed", third.error
    # each change heard at the level it was saved at: config.toml's, then the session's own
    assert [h for h in heard if h[0] == "max_iterations"] == [
        ("max_iterations", "global", None),
        ("max_iterations", "session", session.id),
    ], heard


async def test_the_settings_screen_shows_a_value_saved_in_a_second_terminal(
    workspace: Path, vis_home: Path
) -> None:
    from .support import SettingsApp, open_host

    host = await open_host(workspace)
    try:
        assert host.settings.value("summarize_steps") is True
        await _set(workspace, vis_home, "summarize_steps", "false")
        app = SettingsApp(host)
        async with app.run_test(size=(100, 60)):
            screen = await app.loaded()
            await asyncio.wait_for(screen.caught_up.wait(), 30)
            row = screen.row("summarize_steps")
            assert row.state.value is False and row.state.source.value == "global"
    finally:
        await host.close()


@pytest.mark.skipif(BWRAP_PROBLEM is not None, reason=str(BWRAP_PROBLEM))
async def test_the_jail_turned_on_from_a_second_terminal_holds_the_next_block(
    workspace: Path, tmp_path: Path, vis_home: Path
) -> None:
    """The jail is off in config.toml; a person sees the session read a host file and turns
    the jail on for it from a shell: its next block runs jailed (before, it ran unjailed
    until the session was opened again)."""
    (vis_home / "config.toml").write_text("jail = false\n", encoding="utf-8")
    hidden = tmp_path / "hidden"
    hidden.mkdir()
    (hidden / "secret.txt").write_text("host secret\n", encoding="utf-8")
    read = (
        "try:\n"
        f"    print(open({str(hidden / 'secret.txt')!r}).read().strip())\n"
        "except OSError as exc:\n"
        "    print('hidden', exc.errno)\n"
    )
    turns = [{"code": read}, {"text": "read"}, {"code": read}, {"text": "read again"}]
    script = write_script(tmp_path / "script.yaml", turns)
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted", script=script))
    try:
        session = await host.new_session()
        await session.submit("read it")
        await _set(
            workspace, vis_home, "jail", "true", "--scope", "session", "--session", session.id
        )
        await session.submit("read it again")
        printed = [
            e.event.stdout for e in host.store.events(session.id) if e.type == "BlockFinished"
        ]
    finally:
        await host.close()
    assert printed[0] == "host secret\n", printed
    assert "changed setting jail" in printed[1] and printed[1].endswith("\nhidden 2"), printed
