"""How ``vis run`` ends with MCP servers that fail: it exits, stops them, and says so once."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from processes import alive

from .conftest import write_config
from .test_client import DEAF
from .test_run import _vis_run

# waits in the workspace until the server says its stdin was closed (Vis gave up on it)
WAIT_FOR_CLOSED = """
import asyncio, os
while not os.path.exists("stdin-closed"):
    await asyncio.sleep(0.05)
"""


def test_a_run_ends_while_the_sdk_stops_a_server_that_timed_out(
    vis_home: Path, workspace: Path
) -> None:
    """The turn ends while the SDK stops a server whose initialize timed out (the tester's
    7 s answer with a 5 s timeout): `vis run` never exited, and the server outlived it once
    `vis run` was killed. Now it exits, the server has ended, and the failure was said."""
    closed = workspace / "stdin-closed"
    entry = {"command": sys.executable, "args": ["-c", DEAF, str(closed)], "timeout": 0.5}
    write_config(vis_home / "mcp.json", {"deaf": entry})
    script = [{"code": WAIT_FOR_CLOSED}, {"text": "done"}]
    try:
        done = _vis_run(vis_home, workspace, script, "--toggles", "jail=false")
    except subprocess.TimeoutExpired as exc:
        raise AssertionError("vis run did not exit after its turn") from exc
    finally:
        pid = int(closed.read_text()) if closed.exists() else None
        left = pid is not None and alive(pid)
        if left:
            os.kill(pid, signal.SIGKILL)
    assert done.returncode == 0, done.stderr
    assert not left, "the server outlived vis run"
    said = [line for line in done.stderr.splitlines() if "MCP server 'deaf'" in line]
    assert len(said) == 1, done.stderr
    assert "did not answer initialize within 0.5 s" in said[0]
    assert said[0].endswith("; `vis mcp list` shows details"), said


def test_a_quick_run_says_each_failed_server_once_and_where_to_look(
    vis_home: Path, workspace: Path, http_server: str
) -> None:
    """A run whose turn ended before its servers failed said nothing of them (three failed
    servers, no warning), and a warning pointed to `/mcp`, a screen of the app only."""
    # a shell fails within the run's settle even on a loaded machine (a Python took >5 s); the
    # missing command, and the executable text file, fail before the SDK is imported
    # (test_launch.py shows it without one)
    exits = "echo 'boom: no config' >&2; exit 3"
    notes = workspace.parent / "notes.txt"
    notes.write_text("not a program\n")
    notes.chmod(0o755)
    servers = {
        "nocmd": {"command": str(workspace / "no-such-server")},
        "notes": {"command": str(notes)},
        "exits": {"command": "/bin/sh", "args": ["-c", exits]},
        "nowhere": {"url": f"{http_server}/no-such-path/mcp"},
    }
    write_config(vis_home / "mcp.json", servers)
    done = _vis_run(vis_home, workspace, [{"text": "done"}])
    assert done.returncode == 0, done.stderr
    for name in servers:
        said = [line for line in done.stderr.splitlines() if f"MCP server {name!r}" in line]
        assert len(said) == 1, done.stderr
        assert said[0].startswith(f"warn: MCP server {name!r} failed: "), said
        assert said[0].endswith("; `vis mcp list` shows details"), said
    assert f"failed: cannot start {str(notes)!r}: {notes} is not a program Vis can run: a " in (
        done.stderr
    )
    assert "/mcp shows" not in done.stderr


# a server as `npx` starts one: a wrapper whose child serves (here: a child that sleeps, and
# the wrapper becomes the server)
WRAPPED = """
import os, subprocess, sys
mark, server = sys.argv[1], sys.argv[2]
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)", mark + "-child"])
os.execv(sys.executable, [sys.executable, server, "stdio", mark + "-server"])
"""


def test_kill_9_of_vis_run_leaves_no_process_of_an_mcp_server(
    vis_home: Path, workspace: Path
) -> None:
    """The SDK starts a stdio server in a session of its own, with nothing tying it to Vis:
    after `kill -9` of Vis the server and what it started ran on for ever (one more after
    each crash or closed terminal). Now they end with Vis."""
    import contextlib
    import json
    import time
    import uuid

    from processes import marked

    from .server_app import __file__ as server_app

    mark = f"vis-mcp-orphan-{uuid.uuid4().hex}"
    entry = {"command": sys.executable, "args": ["-c", WRAPPED, mark, server_app]}
    write_config(vis_home / "mcp.json", {"wrapped": entry})
    script = workspace.parent / "script.json"
    script.write_text(json.dumps([{"code": "import asyncio\nawait asyncio.sleep(300)"}]))
    proc = subprocess.Popen(
        [sys.executable, "-m", "vis_core.cli", "run", "--toggles", "jail=false"]
        + ["--provider", "scripted", "--script", str(script), "go"],
        cwd=workspace,
        env={**os.environ, "VIS_HOME": str(vis_home)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )

    def started() -> bool:  # the server (after its wrapper's exec) and its child
        argv = set()
        for pid in marked(mark):
            with contextlib.suppress(OSError):
                argv |= set(Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0"))
        return {f"{mark}-child", f"{mark}-server"} <= argv

    try:
        deadline = time.monotonic() + 60
        while not started() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert started(), "the server and its child did not start"
        proc.kill()
        proc.wait(timeout=30)
        deadline = time.monotonic() + 20
        while marked(mark) and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        proc.kill()
        proc.wait()
        left = marked(mark)
        for pid in left:  # the test cleans up after a failure
            os.kill(pid, signal.SIGKILL)
    assert not left, "the MCP server or its child outlived kill -9 of vis run"


# the test server, noting in the file MARK each time it is started
NOTED = """
import os, sys
mark, server = sys.argv[1], sys.argv[2]
with open(mark, "a") as out:
    out.write("started\\n")
os.execv(sys.executable, [sys.executable, server, "stdio"])
"""


def test_a_command_run_starts_no_server_unless_it_sends_a_request(
    vis_home: Path, workspace: Path, tmp_path: Path
) -> None:
    """`vis run "/goal …"` (or /context, an extension's command) ended before its healthy
    servers connected and warned of each: 'MCP server 'demo' was still connecting when the run
    ended and was stopped'. A command that sends no request now starts no server and says
    nothing of them; one that sends a request (a command file) starts them for its turn."""
    from cli_support import script, vis

    from .server_app import __file__ as server_app

    mark = tmp_path / "started"
    entry = {"command": sys.executable, "args": ["-c", NOTED, str(mark), server_app]}
    write_config(vis_home / "mcp.json", {"demo": entry})
    (vis_home / "commands").mkdir()
    (vis_home / "commands" / "shout.md").write_text("Shout $1.\n")
    goal = vis("run", "/goal finish the report", cwd=workspace, env_home=vis_home)
    assert goal.returncode == 0, goal.stderr
    assert "finish the report" in goal.stdout
    assert "MCP server" not in goal.stderr, goal.stderr
    assert not mark.exists(), "a command that sent no request started the server"
    block = 'print(await mcp__demo__echo(text="HEY"))'
    model = script(tmp_path, [{"code": block}, {"text": "Shouted."}])
    shout = vis(
        "run", "--provider", "scripted", "--script", str(model), "--json", "/shout hey",
        cwd=workspace, env_home=vis_home,
    )  # fmt: skip
    assert shout.returncode == 0, shout.stderr
    assert mark.read_text() == "started\n"
    events = [json.loads(line) for line in shout.stdout.splitlines() if line.startswith("{")]
    blocks = [e for e in events if e["type"] == "BlockFinished"]
    assert blocks and "HEY" in json.dumps(blocks), shout.stdout
    assert "MCP server" not in shout.stderr, shout.stderr
