"""The MCP servers section of the system prompt: listed servers; a changed one is appended to
the conversation."""

from __future__ import annotations

import sys
from pathlib import Path

from vis_core.host import Host, HostOptions
from vis_core.mcp.client import State
from vis_core.mcp.config import load_config
from vis_core.mcp.manager import McpManager
from vis_core.paths import VisPaths

from .conftest import SERVER, http_entry, stdio_entry, write_config


async def test_the_section_lists_indirect_servers_and_grows_by_appending(
    vis_home: Path, workspace: Path, http_server: str
) -> None:
    write_config(
        vis_home / "mcp.json",
        {
            "fixture": http_entry(http_server),
            "notes": http_entry(http_server, description="Team notes", exposure="deferred"),
            "tools": http_entry(http_server, exposure="direct"),
            "off": stdio_entry(enabled=False),
        },
    )
    host = await Host.open(HostOptions(workspace=workspace))
    try:
        mcp = host.mcp  # the manager is made at once: the config names servers
        manager = mcp.manager
        section = mcp.prompt_for_session()
        before = section()
        assert "- `mcp__fixture__` " not in before
        assert "- `mcp__fixture` (codemode)\n" in before + "\n"  # no summary before it connects
        assert "- `mcp__notes` (deferred): Team notes" in before
        assert "mcp__tools" not in before and "mcp__off" not in before  # direct, disabled
        mcp.start()
        await manager.wait_all(60)
        assert section() == before  # what the system prompt sent stays as it was
        appended = section.update()  # the changed section goes to the conversation
        assert appended is not None and appended.startswith("## MCP servers (updated)")
        assert "- `mcp__fixture` (codemode): Test fixtures for Vis." in appended
        assert "Second line" not in appended  # one line of the instructions
        assert section.update() is None  # unchanged: nothing more is appended
        specs = manager.direct_specs("s1", workspace, [].append)
        names = {spec.definition.name for spec in specs}
        assert "mcp__tools__echo" in names and "mcp__fixture__echo" not in names
        assert "read_mcp_resource" in names  # the widest exposure with resources is direct
        manager.note_found("s1", ["mcp__notes__echo", "mcp__fixture__echo"])
        names = {spec.definition.name for spec in manager.direct_specs("s1", workspace, [].append)}
        assert "mcp__notes__echo" in names and "mcp__fixture__echo" not in names
        assert "mcp__notes__echo" not in {
            spec.definition.name for spec in manager.direct_specs("s2", workspace, [].append)
        }
    finally:
        await host.close()


async def test_reload_connects_new_servers_and_stops_removed_ones(
    vis_home: Path, workspace: Path
) -> None:
    path = write_config(vis_home / "mcp.json", {"first": stdio_entry()})
    manager = McpManager(
        load_config(path, None, trusted=False), workspace=workspace, paths=VisPaths.from_env()
    )
    manager.start()
    try:
        await manager.wait_all(60)
        first = manager.get("first")
        assert first is not None and first.state.value == "connected"
        write_config(path, {"second": stdio_entry(exposure="hidden")})
        await manager.reload(load_config(path, None, trusted=False))
        await manager.wait_all(60)
        assert manager.get("first") is None and first.state.value == "disconnected"
        second = manager.get("second")
        assert second is not None and second.state.value == "connected"
        assert manager.reachable() == []  # hidden: registered but unreachable
    finally:
        await manager.close()


def _mute(**extra: object) -> dict[str, object]:
    """A server that never answers initialize (it ends when Vis closes its stdin)."""
    return {"command": sys.executable, "args": [str(SERVER)], "env": {"MODE": "mute"}, **extra}


async def test_the_first_prompt_waits_only_for_direct_servers_and_a_block_for_its_own(
    vis_home: Path, workspace: Path
) -> None:
    path = write_config(
        vis_home / "mcp.json",
        {
            "quick": stdio_entry(toolExposure={"echo": "direct"}),
            # still connecting at the end, however long "quick" takes to start; a first prompt
            # that waited for it would see it fail (its timeout is shorter than that wait)
            "stuck": _mute(timeout=60),
            # fails before or after the first prompt: a block naming it restarts and waits
            "brief": _mute(timeout=0.5),
        },
    )
    manager = McpManager(
        load_config(path, None, trusted=False),
        workspace=workspace,
        paths=VisPaths.from_env(),
        first_prompt_wait=120,  # "quick" connects whatever the load (10 s in use)
    )
    manager.start()
    try:
        quick, stuck, brief = manager.get("quick"), manager.get("stuck"), manager.get("brief")
        assert quick is not None and stuck is not None and brief is not None
        assert quick.state is State.CONNECTING
        await manager.before_first_prompt()
        assert quick.state is State.CONNECTED  # it has a direct tool: waited for
        assert stuck.state is State.CONNECTING  # codemode only: not waited for
        await manager.wait_named("print(1)")  # a block that names no server waits for none
        assert stuck.state is State.CONNECTING
        await manager.wait_named("r = await mcp__brief__echo(text='x')")
        assert brief.state is State.FAILED  # named: waited for until its timeout
        assert "did not answer initialize within 0.5 s" in (brief.error or "")
        assert stuck.state is State.CONNECTING  # not named: not waited for
    finally:
        await manager.close()


async def test_the_first_prompt_waits_for_a_direct_server_only_so_long(
    vis_home: Path, workspace: Path
) -> None:
    path = write_config(vis_home / "mcp.json", {"stuck": _mute(exposure="direct")})
    manager = McpManager(
        load_config(path, None, trusted=False),
        workspace=workspace,
        paths=VisPaths.from_env(),
        first_prompt_wait=0.5,  # 10 s in use
    )
    manager.start()
    try:
        await manager.before_first_prompt()
        stuck = manager.get("stuck")
        assert stuck is not None and stuck.state is State.CONNECTING
    finally:
        await manager.close()


async def test_a_server_without_a_description_is_described_by_its_instructions_first_line(
    vis_home: Path, workspace: Path, http_server: str
) -> None:
    """As in the prompt's section, ``doc("mcp__<server>")`` and apropos take the first line of
    the instructions once the server connected (they said '(none configured)', found nothing)."""
    import re

    write_config(
        vis_home / "mcp.json",
        {"fixture": http_entry(http_server), "notes": http_entry(http_server, description="Notes")},
    )
    host = await Host.open(HostOptions(workspace=workspace))
    try:
        manager = host.mcp.manager
        assert "Description: (none configured)" in (manager.namespace_doc("fixture") or "")
        assert manager.described_tools(re.compile("fixtures").search) == []  # not connected yet
        host.mcp.start()
        await manager.wait_all(60)
        text = manager.namespace_doc("mcp__fixture") or ""
        assert "Description: Test fixtures for Vis. (the first line of its instructions)" in text
        assert "Description: Notes\n" in (manager.namespace_doc("notes") or "")  # configured
        found = manager.described_tools(re.compile("fixtures").search)
        assert "mcp__fixture__echo" in found and "mcp__notes__echo" not in found
        assert "mcp__notes__echo" in manager.described_tools(re.compile("Notes").search)
    finally:
        await host.close()
