"""A child session keeps what bounds its parent's blocks: settings saved for the parent session
alone (the jail, its folders, the limits) hold for the children it starts."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from sandbox.hostile import BWRAP_PROBLEM

from vis_core.events import BlockFinished

from .support import open_host, script, write_config


def _reading_a_host_secret(tmp_path: Path) -> str:
    """A block that prints a host file outside the workspace, or ``hidden 2`` (ENOENT) when
    the jail hides it."""
    hidden = tmp_path / "hidden"
    hidden.mkdir()
    (hidden / "secret.txt").write_text("host secret\n", encoding="utf-8")
    return (
        "try:\n"
        f"    print(open({str(hidden / 'secret.txt')!r}).read().strip())\n"
        "except OSError as exc:\n"
        "    print('hidden', exc.errno)\n"
    )


@pytest.mark.skipif(BWRAP_PROBLEM is not None, reason=str(BWRAP_PROBLEM))
async def test_a_child_runs_jailed_when_the_jail_is_on_for_its_parent_alone(
    workspace: Path, tmp_path: Path, vis_home: Path
):
    """The jail is off in config.toml and turned on for one session: the child that session
    starts must not read a host file the jail hides."""
    write_config(vis_home, "jail = false\n")
    read = _reading_a_host_secret(tmp_path)
    path = script(
        tmp_path / "s.yaml",
        [{"code": 'print(await run_session("read it", read_only=False))'}, {"text": "done"}],
        {"read it": [{"code": read}, {"text": "read"}]},
    )
    host = await open_host(workspace, path)
    try:
        parent = await host.new_session()
        await host.settings.set("jail", True, "session", session_id=parent.id)
        ended = await parent.submit("start a child")
        (child,) = [row for row in host.store.list_sessions() if row.parent_id]
        told = [e.event for e in host.store.events(child.id) if isinstance(e.event, BlockFinished)]
    finally:
        await host.close()
    assert ended.status.value == "completed", ended
    assert [block.stdout for block in told] == ["hidden 2\n"], told


@pytest.mark.skipif(BWRAP_PROBLEM is not None, reason=str(BWRAP_PROBLEM))
async def test_a_consulted_session_in_a_group_without_the_jail_answers_jailed(
    workspace: Path, tmp_path: Path, vis_home: Path
):
    """A stored session lies in a group whose jail is off, and is off for it alone too. A
    jailed session consults it: the fork that answers took the consulted session's group, so
    its blocks ran unjailed (a fork keeps the session's values: the asker's replace them)."""
    read = _reading_a_host_secret(tmp_path)
    ask = (
        "rows = [s for s in await list_sessions() if s['title'].startswith('earlier')]\n"
        "print((await consult(rows[0], 'what is in the secret?'))['answer'])\n"
    )
    path = script(
        tmp_path / "s.yaml",
        [{"code": ask}, {"text": "done"}],
        {
            "earlier work": [{"text": "nothing yet"}],
            "what is in the secret": [{"code": read}, {"text": "read"}],
        },
    )
    host = await open_host(workspace, path)
    try:
        source = await host.new_session()
        await host.settings.move_to_group(source.id, "loose")
        await host.settings.set("jail", False, "group", session_id=source.id)
        await host.settings.set("jail", False, "session", session_id=source.id)
        await source.submit("earlier work")
        await host.close_session(source)
        parent = await host.new_session()
        ended = await parent.submit("ask it")
        (fork,) = host.store.children(parent.id)
        told = [e.event for e in host.store.events(fork.id) if isinstance(e.event, BlockFinished)]
        values = host.store.list_overrides("session", fork.id)
    finally:
        await host.close()
    assert ended.status.value == "completed", ended
    assert [block.stdout for block in told] == ["hidden 2\n"], told
    assert fork.group is None and values == {}  # the asker's: no group, no value of its own


@pytest.mark.skipif(BWRAP_PROBLEM is not None, reason=str(BWRAP_PROBLEM))
async def test_a_fork_keeps_the_jail_turned_on_for_its_session_alone(
    workspace: Path, tmp_path: Path, vis_home: Path
):
    """/fork copies a session up to a turn: the fork went on without the jail that was
    turned on for that session alone (config.toml has it off), and read a hidden host file."""
    from vis_core.extension_host.session_changes import fork_stored

    write_config(vis_home, "jail = false\n")
    read = _reading_a_host_secret(tmp_path)
    path = script(
        tmp_path / "s.yaml",
        [{"text": "first"}],
        {"go on": [{"code": read}, {"text": "read"}]},
    )
    host = await open_host(workspace, path)
    try:
        source = await host.new_session()
        await host.settings.set("jail", True, "session", session_id=source.id)
        await source.submit("one")
        row = await asyncio.wrap_future(fork_stored(host.store, source.id, None, "/fork"))
        fork = await host.open_session(row.id)
        ended = await fork.submit("go on")
        told = [e.event for e in host.store.events(row.id) if isinstance(e.event, BlockFinished)]
    finally:
        await host.close()
    assert ended.status.value == "completed", ended
    assert [block.stdout for block in told] == ["hidden 2\n"], told
