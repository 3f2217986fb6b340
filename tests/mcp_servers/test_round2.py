"""Round 2 of the MCP chapter: reconnects, deferred tools after a resume, the servers section
in the conversation, ``doc("mcp__<server>")``, waits, retries, hints and shutdown."""

from __future__ import annotations

import ast
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import yaml
from warm_servers import vis_command

from .conftest import http_entry, stdio_entry, write_config
from .test_run import _of, _run_here

DROP = """
try:
    await mcp__st__die()
except Exception as exc:
    print("dropped:", str(exc).split(":")[0])
print(await mcp__st__echo(text="back in the same block"))
"""


async def test_a_dropped_server_reconnects_on_the_next_call_of_the_same_block(
    vis_home: Path, workspace: Path
) -> None:
    write_config(vis_home / "mcp.json", {"st": stdio_entry(toolExposure={"echo": "direct"})})
    script = [
        {"code": DROP},
        {"tool": {"name": "mcp__st__echo", "arguments": {"text": "direct again"}}},
        {"code": "await mcp__st__die()"},
        {"tool": {"name": "mcp__st__echo", "arguments": {"text": "direct after a drop"}}},
        {"text": "done"},
    ]
    events = await _run_here(workspace, script)
    blocks = _of(events, "BlockFinished")
    assert blocks[0]["stdout"].splitlines() == [
        "dropped: ConnectionLost",
        "back in the same block",
    ], blocks[0]["error"]
    assert blocks[1]["stdout"] == "direct again" and blocks[1]["error"] is None
    assert "ConnectionLost" in (blocks[2]["error"] or "")
    assert blocks[3]["stdout"] == "direct after a drop", blocks[3]["error"]


def _run_more(home: Path, workspace: Path, script: list[dict[str, Any]], *args: str) -> list[Any]:
    """``vis run --json [args] go`` with ``script``; its events."""
    path = workspace / "script.yaml"
    path.write_text(yaml.safe_dump(script), encoding="utf-8")
    done = subprocess.run(
        [*vis_command(), "run", "--provider", "scripted", "--script",
         str(path), "--json", *args, "go"],
        cwd=workspace, env={**os.environ, "VIS_HOME": str(home)}, capture_output=True,
        text=True, timeout=300,
    )  # fmt: skip
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert events, done.stderr
    return events


def test_deferred_tools_a_search_declared_stay_declared_after_continue(
    vis_home: Path, workspace: Path, http_server: str
) -> None:
    write_config(vis_home / "mcp.json", {"later": http_entry(http_server, exposure="deferred")})
    found = [{"code": 'print(await doc("mcp__later__echo") != "")'}, {"text": "found"}]
    first = _run_more(vis_home, workspace, found)
    assert _of(first, "BlockFinished")[0]["stdout"].strip() == "True"
    again = [
        {"tool": {"name": "mcp__later__echo", "arguments": {"text": "still declared"}}},
        {"text": "done"},
    ]
    events = _run_more(vis_home, workspace, again, "--continue")
    block = _of(events, "BlockFinished")[0]
    assert block["stdout"] == "still declared", block["error"]


async def test_a_changed_servers_section_goes_to_the_conversation_not_the_system_prompt(
    vis_home: Path, workspace: Path, tmp_path: Path, http_server: str
) -> None:
    from vis_core.host import Host, HostOptions

    write_config(
        vis_home / "mcp.json",
        {
            "notes": http_entry(http_server, description="Team notes"),
            "fixture": http_entry(http_server, enabled=False),
        },
    )
    script = tmp_path / "s.yaml"
    script.write_text(yaml.safe_dump([{"text": "one"}, {"text": "two"}]), encoding="utf-8")
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted", script=script))
    try:
        session = await host.new_session()
        await session.submit("first")
        manager = host.mcp.manager
        await manager.set_enabled("fixture", True)  # the section changes between turns
        await manager.wait_all(60)
        await session.submit("second")
        first, second = session.model.provider.requests  # type: ignore[union-attr]
    finally:
        await host.close()
    assert "- `mcp__notes` (codemode): Team notes" in first.system
    assert "mcp__fixture" not in first.system
    assert second.system == first.system  # byte-identical: the cached prefix stays
    assert second.messages[: len(first.messages)] == first.messages  # earlier messages too
    assert "mcp__fixture" not in second.system  # its tools are not listed as they connect
    request = second.messages[-1]
    assert request.role == "user" and request.text.startswith("second\n\n## MCP servers (updated)")
    assert "- `mcp__fixture` (codemode): Test fixtures for Vis." in request.text


async def test_a_generic_apropos_waits_for_servers_still_connecting(
    vis_home: Path, workspace: Path
) -> None:
    from vis_core.mcp.client import State
    from vis_core.mcp.config import load_config
    from vis_core.mcp.manager import McpManager
    from vis_core.paths import VisPaths

    path = write_config(vis_home / "mcp.json", {"slow": stdio_entry(env={"DELAY": "2"})})
    manager = McpManager(
        load_config(path, None, trusted=False),
        workspace=workspace,
        paths=VisPaths.from_env(),
        first_prompt_wait=120,  # what is tested is the wait, not its 10 s bound (a loaded CI)
    )
    manager.start()
    try:
        slow = manager.get("slow")
        assert slow is not None and slow.state is State.CONNECTING
        await manager.wait_named("print(await apropos('echo'))")
        assert slow.state is State.CONNECTED
    finally:
        await manager.close()


DOC = """
text = await doc("mcp__fix-ture")
print(text)
print("same", text == await doc("fix_ture"))
print([h.name for h in await apropos("notes|echo")])
print([h.name for h in await apropos("notes")])
"""


async def test_doc_of_a_server_and_apropos_by_its_description(
    vis_home: Path, workspace: Path, http_server: str
) -> None:
    write_config(
        vis_home / "mcp.json",
        {
            "other": http_entry(http_server),
            "fix-ture": http_entry(http_server, description="Weather, pictures and notes"),
        },
    )
    events = await _run_here(workspace, [{"code": DOC}, {"text": "done"}])
    block = _of(events, "BlockFinished")[0]
    out = block["stdout"]
    assert block["error"] is None, block["error"]
    assert "Description: Weather, pictures and notes" in out
    assert "Test fixtures for Vis.\nSecond line of instructions." in out  # whole instructions
    assert "mcp__fix_ture__weather" in out and "mcp__fix_ture__echo" in out
    assert "same True" in out
    *_, either, hits = out.strip().splitlines()
    hits = ast.literal_eval(hits)  # the description brings the server's tools
    assert "mcp__fix_ture__echo" in hits and "mcp__other__echo" not in hits
    either = ast.literal_eval(either)  # and ranks them first
    assert either.index("mcp__fix_ture__echo") < either.index("mcp__other__echo")


async def test_a_wrapper_scripts_background_child_ends_with_the_server(tmp_path: Path) -> None:
    import shlex

    from processes import alive
    from warm_servers import command

    from vis_core.mcp.client import ServerConnection, State
    from vis_core.mcp.config import Source, parse_entry
    from vis_core.mcp.logfile import McpLog

    from .conftest import SERVER

    script = tmp_path / "wrapper.sh"  # a launcher that leaves a helper running, then execs
    script.write_text(
        f'#!/bin/sh\nsleep 300 &\necho $! > "{tmp_path}/helper.pid"\n'
        f"exec {shlex.join(command(SERVER, 'stdio'))}\n"
    )
    script.chmod(0o755)
    config = parse_entry(
        "wrapped", {"command": str(script)}, source=Source.USER, origin=str(tmp_path / "m.json")
    )
    conn = ServerConnection(config, workspace=tmp_path, mcp_log=McpLog(tmp_path / "mcp.log"))
    conn.start()
    try:
        assert await conn.wait_ready(60) and conn.state is State.CONNECTED, conn.error
        helper = int((tmp_path / "helper.pid").read_text())
        assert alive(helper)
    finally:
        await conn.stop()
    survived = alive(helper)
    if survived:
        os.kill(helper, 9)
    assert not survived  # the process group was ended, not only the server


async def test_a_resource_read_is_retried_once(tmp_path: Path, http_server: str) -> None:
    import asyncio
    import urllib.request

    import pytest

    from vis_core.mcp.client import McpCallError, ServerConnection, State
    from vis_core.mcp.config import Source, parse_entry
    from vis_core.mcp.logfile import McpLog

    config = parse_entry(
        "web", {"url": f"{http_server}/flaky/mcp"}, source=Source.USER, origin=str(tmp_path)
    )
    conn = ServerConnection(config, workspace=tmp_path, mcp_log=McpLog(tmp_path / "mcp.log"))
    conn.start()
    try:
        assert await conn.wait_ready(30) and conn.state is State.CONNECTED, conn.error
        with pytest.raises(McpCallError, match=r"\(HTTP 503\)"):
            await conn.read_resource("busy://always")
    finally:
        await conn.stop()

    def count() -> str:
        with urllib.request.urlopen(f"{http_server}/flaky/busy", timeout=10) as response:
            return response.read().decode()

    assert await asyncio.to_thread(count) == "2"  # the read and one retry


async def test_a_plain_sse_url_that_fails_gets_the_sse_hint(
    tmp_path: Path, http_server: str
) -> None:
    from vis_core.mcp.client import ServerConnection, State
    from vis_core.mcp.config import Source, parse_entry
    from vis_core.mcp.logfile import McpLog

    config = parse_entry(
        "old", {"url": f"{http_server}/sse", "timeout": 5}, source=Source.USER, origin="m.json"
    )
    conn = ServerConnection(config, workspace=tmp_path, mcp_log=McpLog(tmp_path / "mcp.log"))
    conn.start()
    try:
        await conn.wait_ready(30)
        assert conn.state is State.FAILED
        assert "legacy SSE transport is not supported" in (conn.error or "")
        assert "at /mcp instead of /sse" in (conn.error or "")
    finally:
        await conn.stop()


async def test_a_killed_server_comes_back_with_its_direct_tools_next_turn(
    vis_home: Path, workspace: Path, tmp_path: Path
) -> None:
    import asyncio
    import signal
    import time

    from vis_core.events import BlockFinished
    from vis_core.host import Host, HostOptions
    from vis_core.mcp.client import State

    pidfile = tmp_path / "st.pid"
    write_config(
        vis_home / "mcp.json",
        {"st": stdio_entry(exposure="direct", env={"PIDFILE": str(pidfile)})},
    )
    echo = {"name": "mcp__st__echo"}
    script = tmp_path / "s.yaml"
    script.write_text(
        yaml.safe_dump(
            [
                {"tool": {**echo, "arguments": {"text": "before"}}},
                {"text": "one"},
                {"tool": {**echo, "arguments": {"text": "after the kill"}}},
                {"text": "two"},
            ]
        ),
        encoding="utf-8",
    )
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted", script=script))
    try:
        session = await host.new_session()
        seen: list[Any] = []
        session.subscribe(seen.append)
        await session.submit("first")
        conn = host.mcp.manager.get("st")
        assert conn is not None and conn.state is State.CONNECTED
        os.kill(int(pidfile.read_text()), signal.SIGKILL)  # killed from outside, mid-session
        deadline = time.monotonic() + 30
        while conn.state is not State.DISCONNECTED and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        assert conn.state is State.DISCONNECTED, conn.state
        await session.submit("second")
        requests = session.model.provider.requests  # type: ignore[union-attr]
    finally:
        await host.close()
    blocks = [e for e in seen if isinstance(e, BlockFinished)]
    assert [b.stdout for b in blocks] == ["before", "after the kill"], blocks[-1].error
    assert "mcp__st__echo" in [t.name for t in requests[2].tools]  # still declared


async def test_a_direct_tool_call_is_an_iteration_with_its_own_activity(
    vis_home: Path, workspace: Path, http_server: str
) -> None:
    entry = http_entry(http_server, toolExposure={"echo": "direct"})
    write_config(vis_home / "mcp.json", {"st": entry})
    script = [
        {"tool": {"name": "mcp__st__echo", "arguments": {"text": "Oslo"}}},
        {"text": "It will be sunny."},
    ]
    events = await _run_here(workspace, script)
    iteration = _of(events, "IterationStarted")[0]
    assert iteration["tool"] == "mcp__st__echo" and iteration["arguments"] == {"text": "Oslo"}
    block = _of(events, "BlockFinished")[0]
    assert block["stdout"] == "Oslo" and block["error"] is None
    activities = [e["activity"] for e in _of(events, "ActivityEnded")]
    assert [(a["tool"], a["owner"], a["iteration_id"]) for a in activities] == [
        ("mcp__st__echo", "mcp", iteration["iteration_id"])
    ]
    assert activities[0]["presentation"]["headline"] == "MCP st · echo"


GROWN = """
print(await mcp__dyn__grow())
print(await mcp__dyn__extra())
print([h.name for h in await apropos("mcp__dyn__extra")])
print(await mcp__dyn__grow())
try:
    await mcp__dyn__extra()
except NameError as exc:
    print("gone:", exc)
print([h.name for h in await apropos("mcp__dyn__extra")])
"""


async def test_a_tool_a_server_adds_during_a_block_is_callable_in_that_block(
    vis_home: Path, workspace: Path
) -> None:
    """After ``tools/list_changed`` the block's names agree with apropos: the added tool is
    callable at once and the withdrawn one is gone (apropos listed a tool the block could
    not call until the next block)."""
    write_config(vis_home / "mcp.json", {"dyn": stdio_entry()})
    events = await _run_here(workspace, [{"code": GROWN}, {"text": "done"}])
    block = _of(events, "BlockFinished")[0]
    assert block["error"] is None, block["error"]
    assert block["stdout"].splitlines() == [
        "grown",
        "extra!",
        "['mcp__dyn__extra']",
        "shrunk",
        "gone: name 'mcp__dyn__extra' is not defined",
        "[]",
    ]
