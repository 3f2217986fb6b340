"""One server connection against real servers: progress, timeouts, drops, changes, stops."""

from __future__ import annotations

import asyncio
import dataclasses
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from processes import WATCH_IMPORTS, alive, fresh_python

from vis_core.mcp.client import ConnectionLost, McpCallError, ServerConnection, State
from vis_core.mcp.config import Source, parse_entry
from vis_core.mcp.logfile import McpLog
from vis_core.mcp.stderr_tail import StderrTail

from .conftest import SERVER, stdio_entry, write_config


def _connection(tmp_path: Path, raw: dict, name: str = "fix") -> ServerConnection:
    config = parse_entry(name, raw, source=Source.USER, origin=str(tmp_path / "mcp.json"))
    return ServerConnection(config, workspace=tmp_path, mcp_log=McpLog(tmp_path / "mcp.log"))


async def _wait(predicate, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached")
        await asyncio.sleep(0.05)


async def test_stdio_progress_restarts_the_timeout_and_silence_ends_the_call(
    tmp_path: Path,
) -> None:
    conn = _connection(tmp_path, stdio_entry(env={"ASK_CLIENT": "1"}))
    conn.start()
    try:
        assert await conn.wait_ready(30) and conn.state is State.CONNECTED
        # a server asking for what Vis does not offer is told no at once, and a notification
        # Vis does not know is passed over: the call ends, the server stays connected
        asked = await conn.call_tool("ask_client", {})
        assert asked.content[0].text.splitlines() == [
            "sampling: Sampling not supported",
            "roots: List roots not supported",
            "elicitation: Elicitation not supported",
        ]
        assert conn.state is State.CONNECTED
        conn.config = dataclasses.replace(conn.config, timeout=1.5)
        seen: list[tuple] = []
        result = await conn.call_tool(
            "slow", {"steps": 4, "pause": 0.5}, lambda *p: seen.append(p)
        )  # 2 s in all, never 1.5 s without progress
        assert result.content[0].text == "done after 4 steps" and len(seen) == 4
        assert seen[0] == (1.0, 4.0, "step 1")
        with pytest.raises(TimeoutError, match="sent nothing for 1.5 s while running 'slow'"):
            await conn.call_tool("slow", {"steps": 1, "pause": 5})
        # logging notifications went to mcp.log
        lines = (tmp_path / "mcp.log").read_text().splitlines()
        assert any("[fix] info" in line and "slow step 1" in line for line in lines)
        # a changed tool list adds tools
        assert "extra" not in [t.tool for t in conn.tools]
        await conn.call_tool("grow", {})  # listed again before the call returns
        assert "mcp__fix__extra" in [t.name for t in conn.tools]
        # ... and withdraws them
        await conn.call_tool("grow", {})
        assert "extra" not in [t.tool for t in conn.tools]
    finally:
        await conn.stop()


async def test_a_server_dying_mid_call_shows_disconnected_and_reconnects(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    conn = _connection(tmp_path, stdio_entry(cwd="sub"))  # relative to the session folder
    conn.start()
    try:
        await conn.wait_ready(30)
        with pytest.raises(ConnectionLost, match="reconnects on the next call"):
            await conn.call_tool("die", {})
        await _wait(lambda: conn.state is State.DISCONNECTED)
        assert f"fixture server starting in {tmp_path / 'sub'}" in conn.stderr_tail()
        result = await conn.call_tool("echo", {"text": "back again"})
        assert result.content[0].text == "back again" and conn.state is State.CONNECTED
    finally:
        await conn.stop()


# A launcher like npx or uvx: the server is its child, not the process Vis started.
WRAPPER = (
    "import subprocess, sys, pathlib\n"
    "child = subprocess.Popen([sys.executable, *sys.argv[1:]])\n"
    "pathlib.Path(sys.argv[-1]).with_name('wrapper').write_text(str(child.pid))\n"
    "sys.exit(child.wait())\n"
)


async def test_a_server_that_never_answers_initialize_fails_and_is_killed(
    tmp_path: Path,
) -> None:
    pidfile = tmp_path / "pid"
    env = {"MODE": "hang", "PIDFILE": str(pidfile)}
    raw = {
        "command": sys.executable,
        "args": ["-c", WRAPPER, str(SERVER), str(pidfile)],
        "env": env,
        "timeout": 0.5,  # it never answers: any timeout ends the wait
    }
    conn = _connection(tmp_path, raw)
    conn.start()
    await conn.wait_ready(30)
    assert conn.state is State.FAILED
    assert "did not answer initialize within 0.5 s" in (conn.error or "")
    # the server under the launcher ignored stdin closing and SIGTERM: the SIGKILL of the
    # launcher's process group ended it too
    server_pid = int(pidfile.read_text())
    assert int((tmp_path / "wrapper").read_text()) == server_pid
    await _wait(lambda: not alive(server_pid), 10)  # SIGKILL sent; the kernel reaps it


# Never answers initialize and outlives its stdin's close (it says so in the file it is given)
DEAF = (
    "import os, sys, time, pathlib\n"
    "sys.stdin.buffer.read()\n"
    "pathlib.Path(sys.argv[1]).write_text(str(os.getpid()))\n"
    "time.sleep(600)\n"
)


async def test_a_stop_while_the_sdk_stops_a_server_that_timed_out_ends_it(
    tmp_path: Path,
) -> None:
    """Stopping the connection while the SDK stops a server whose initialize timed out (its
    stdin closed, SIGTERM not sent yet): before, the stop cancelled the SDK's shutdown, and
    both the server and the stop waited for ever (`vis run` never exited)."""
    closed = tmp_path / "stdin-closed"
    conn = _connection(
        tmp_path, {"command": sys.executable, "args": ["-c", DEAF, str(closed)], "timeout": 0.5}
    )
    conn.start()
    await _wait(closed.exists, 60)
    pid = int(closed.read_text())
    stopping = asyncio.ensure_future(conn.stop())
    try:
        await asyncio.wait({stopping}, timeout=60)  # not cancelled: a stuck one fails the test
        assert stopping.done(), "the stop did not end"
        assert not alive(pid)
        assert conn.state is State.FAILED
        assert "did not answer initialize within 0.5 s" in (conn.error or "")
    finally:
        if alive(pid):  # its end unblocks a stuck stop
            os.kill(pid, signal.SIGKILL)
        await stopping


@pytest.mark.parametrize("stderr", ["", "boom: no config file"])
async def test_a_server_that_exits_before_initialize_fails_and_shows_only_what_it_wrote(
    tmp_path: Path, stderr: str
) -> None:
    """The error says the process ended; its stderr, when it wrote some, comes with it (the
    error pointed at a stderr that was empty)."""
    code = f"import sys; sys.stderr.write({stderr!r}); sys.exit(3)"
    conn = _connection(tmp_path, {"command": sys.executable, "args": ["-c", code]})
    conn.start()
    await conn.wait_ready(30)
    assert conn.state is State.FAILED
    assert conn.error == "the server process ended before it answered initialize"
    assert conn.stderr_tail().strip() == stderr


async def test_http_listing_retries_a_503_and_tool_calls_work(
    tmp_path: Path, http_server: str
) -> None:
    conn = _connection(tmp_path, {"url": f"{http_server}/flaky/mcp"}, name="web")
    conn.start()
    try:
        await conn.wait_ready(30)
        assert conn.state is State.CONNECTED, conn.error
        listed = await conn.list_resources()  # the first attempt is answered 503
        assert "file:///notes.txt" in [str(r.uri) for r in listed.resources]
        result = await conn.call_tool("weather", {"city": "Lima"})
        assert result.structured_content == {"city": "Lima", "celsius": 21.5}
        read = await conn.read_resource("greeting://Ada")
        assert read.contents[0].text == "Hello, Ada!"
        # the server's own error, in an HTTP 200 answer, names no HTTP status
        with pytest.raises(McpCallError) as unknown:
            await conn.read_resource("demo://nothere")
        assert str(unknown.value) == "MCP server 'web': Unknown resource: demo://nothere"
        # a tool call answered 503 is not retried: the server may already have done it
        with pytest.raises(McpCallError, match=r"error response \(HTTP 503\)"):
            await conn.call_tool("echo", {"text": "fragile"})
        count = await asyncio.to_thread(_get, f"{http_server}/flaky/fragile")
        assert count == "1"
    finally:
        await conn.stop()


async def test_http_initialize_is_retried_and_its_failure_names_the_status(
    tmp_path: Path, http_server: str
) -> None:
    """A server answering 503 to initialize as it started got one POST and stayed failed for
    the run, and one answering 500 failed with "Server returned an error response", no status
    (spec 001: HTTP network errors and 408, 429 and 5xx are retried twice)."""
    key = tmp_path.name
    starting = _connection(tmp_path, {"url": f"{http_server}/starting/{key}/mcp"}, "starting")
    broken = _connection(tmp_path, {"url": f"{http_server}/broken/{key}/mcp"}, "broken")
    starting.start()
    broken.start()
    try:
        await starting.wait_ready(30)
        await broken.wait_ready(30)
        assert starting.state is State.CONNECTED, starting.error
        assert await asyncio.to_thread(_get, f"{http_server}/starting/{key}") == "3"
        assert broken.state is State.FAILED
        assert broken.error == "MCPError: Server returned an error response (HTTP 500)"
        assert await asyncio.to_thread(_get, f"{http_server}/broken/{key}") == "3"
    finally:
        await starting.stop()
        await broken.stop()


def _get(url: str) -> str:
    import urllib.request

    with urllib.request.urlopen(url, timeout=10) as response:
        return response.read().decode()


def test_mcp_log_moves_to_dot_1_past_its_limit(tmp_path: Path) -> None:
    log = McpLog(tmp_path / "logs" / "mcp.log", max_bytes=200)
    for index in range(6):
        log.write("srv", "info", "app", f"message number {index}")
    current = (tmp_path / "logs" / "mcp.log").read_text()
    older = (tmp_path / "logs" / "mcp.log.1").read_text()
    assert "[srv] info app: message number 5" in current
    assert "message number 0" not in current and "message number" in older


def test_a_stderr_tail_is_drained_once_every_holder_of_its_pipe_has_ended() -> None:
    """A failed server's last words are read before they are told (``vis mcp list`` once
    printed a failure without them: the reader thread had not had its turn yet)."""
    tail = StderrTail()
    holder = subprocess.Popen(
        ["sh", "-c", "echo 'config missing: set API_URL' >&2; exec sleep 60"], stderr=tail.writer
    )
    tail.release()
    try:
        assert not tail.drained(0.05)  # the sleep still holds the pipe
    finally:
        holder.kill()
        holder.wait()
    assert tail.drained(30)
    assert tail.text() == "config missing: set API_URL"


# A fresh process: which thread first imports the SDK's client modules while servers connect.
SDK_IMPORTED_ON = (
    WATCH_IMPORTS
    + """
import asyncio, sys
from pathlib import Path

WATCHED = (
    "mcp", "mcp_types", "mcp.client.stdio", "mcp.client.streamable_http", "httpx2",
    "anyio._backends._asyncio",
)

watch_imports(WATCHED.__contains__)
from vis_core.host import Host, HostOptions

async def main():
    host = await Host.open(HostOptions(workspace=Path(sys.argv[1])))
    try:
        host.mcp.start()
        await host.mcp.manager.wait_all(60)
        for conn in host.mcp.manager.connections():
            print(conn.name, conn.state.value, flush=True)
    finally:
        await host.close()

asyncio.run(main())
"""
)


def test_servers_connect_without_importing_the_sdk_on_the_loop(
    workspace: Path, vis_home: Path, http_server: str
) -> None:
    """``import mcp`` takes about a second of CPU: on the loop, the app froze (keys, drawing)
    while its servers connected, at every start with servers in mcp.json."""
    write_config(
        vis_home / "mcp.json", {"local": stdio_entry(), "web": {"url": http_server + "/mcp"}}
    )
    done = fresh_python(SDK_IMPORTED_ON, str(workspace), vis_home=vis_home)
    lines = done.stdout.splitlines()
    assert "local connected" in lines and "web connected" in lines, done.stderr[-2000:]
    imported = [line for line in lines if line.endswith("the loop")]
    assert "mcp imported off the loop" in imported, done.stdout
    assert "anyio._backends._asyncio imported off the loop" in imported, done.stdout
    assert not [line for line in imported if line.endswith("on the loop")], done.stdout


def _serve(listening, *env: tuple[str, str]) -> subprocess.Popen[bytes]:
    """The HTTP test server on ``listening`` (a socket this test holds: the port stays the
    same across restarts, and a request made while none serves waits in its queue)."""
    from warm_servers import command
    from web_server import _answers

    process = subprocess.Popen(
        command(SERVER, "http", str(listening.fileno())),
        pass_fds=[listening.fileno()],
        stdout=subprocess.DEVNULL,
    )
    _answers(f"http://127.0.0.1:{listening.getsockname()[1]}", process)
    return process


def _end(process: subprocess.Popen[bytes]) -> None:
    """The server ended: SIGTERM, which its launcher passes on and exits once it ended (a
    SIGKILL of the launcher leaves the server to end a moment later, still answering)."""
    process.terminate()
    process.wait()


async def test_an_http_server_that_restarted_is_reached_on_a_new_session(tmp_path: Path) -> None:
    """A restarted server answers the old session id 404 (``Session not found``): the same
    call goes again on a new session (the server ran nothing for the old one). Before, every
    later call failed with that 404 while /mcp said connected."""
    import socket

    with socket.create_server(("127.0.0.1", 0)) as listening:
        port = listening.getsockname()[1]
        server = await asyncio.to_thread(_serve, listening)
        conn = _connection(tmp_path, {"url": f"http://127.0.0.1:{port}/mcp"}, name="web")
        conn.start()
        try:
            await conn.wait_ready(30)
            assert conn.state is State.CONNECTED, conn.error
            assert (await conn.call_tool("echo", {"text": "one"})).content[0].text == "one"
            await asyncio.to_thread(_end, server)
            server = await asyncio.to_thread(_serve, listening)
            result = await conn.call_tool("echo", {"text": "two"})
            assert result.content[0].text == "two" and conn.state is State.CONNECTED
            assert (await conn.call_tool("echo", {"text": "three"})).content[0].text == "three"
            await asyncio.to_thread(_end, server)  # resources too
            server = await asyncio.to_thread(_serve, listening)
            read = await conn.read_resource("greeting://Ada")
            assert read.contents[0].text == "Hello, Ada!"
        finally:
            await conn.stop()
            await asyncio.to_thread(_end, server)


def test_mcp_log_writes_a_servers_control_characters_escaped(tmp_path: Path) -> None:
    """A server's log message (and its level and logger name) reaches ``mcp.log`` as text:
    ``cat mcp.log`` showed ESC sequences acting on the terminal."""
    log = McpLog(tmp_path / "mcp.log")
    log.write("srv", "info\x1b[2J", "app\x07", "done\x1b[31m red\x1b]52;c;aGk=\x07\u202eok\r")
    line = (tmp_path / "mcp.log").read_text(encoding="utf-8")
    assert line.endswith(
        "[srv] info\\x1b[2J app\\x07: done\\x1b[31m red\\x1b]52;c;aGk=\\x07<U+202E>ok\n"
    )
    assert not any(c < " " and c != "\n" for c in line)


def test_mcp_log_writes_a_key_vis_knows_as_redacted(tmp_path: Path) -> None:
    """A server that logs the token Vis sent in its header: ``vis.log`` redacted it,
    ``mcp.log`` wrote it as it came."""
    from vis_core.system.redaction import remember_secrets

    remember_secrets(["ghp_header_token_5f0e9a1c"])
    log = McpLog(tmp_path / "mcp.log")
    log.write("srv", "info", "auth", "got Authorization: Bearer ghp_header_token_5f0e9a1c")
    line = (tmp_path / "mcp.log").read_text(encoding="utf-8")
    assert line.endswith("[srv] info auth: got Authorization: Bearer [REDACTED]\n"), line


async def test_a_servers_stderr_tail_hides_the_key_vis_gave_it(tmp_path: Path) -> None:
    """A server that printed the token of its ``env`` to stderr as it failed: ``/mcp`` and the
    notice after the start showed it. Outside a Host (``vis mcp list``) a line redacted
    before the server started also fixed the secrets known then, and a key Vis gave a
    server later was written to the log as it was."""
    from vis_core.system.redaction import redact_log_text

    redact_log_text("a line logged before the server starts")
    raw = {
        "command": "sh",
        "args": ["-c", 'echo "token $API_TOKEN" >&2; exit 2'],
        "env": {"API_TOKEN": "stderr-tail-token-3141"},
    }
    conn = _connection(tmp_path, raw)
    conn.start()
    await conn.wait_ready(30)
    assert conn.state is State.FAILED
    assert conn.stderr_tail() == "token [REDACTED]"
    assert redact_log_text("sent stderr-tail-token-3141") == "sent [REDACTED]"


def test_a_secret_the_line_limit_falls_inside_is_hidden_whole() -> None:
    """A line is cut at 2,000 characters for /mcp; cut before it was redacted, a secret that
    the cut fell inside no longer matched and its first half was shown."""
    from vis_core.system.redaction import remember_secrets

    secret = "sk-live-ABCDEFGHIJKLMNOPQRSTUVWXYZ012345"
    remember_secrets([secret])
    tail = StderrTail()
    tail.writer.write("x" * 1980 + secret + "\n")
    tail.release()
    assert tail.drained(30)
    shown = tail.text()
    assert "sk-live" not in shown and shown.endswith("x[REDACTED]")
