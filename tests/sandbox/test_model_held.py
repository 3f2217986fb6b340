"""While Vis holds the model's processes (an editor's file call, git in a draft), only they are
stopped: the sandbox child and what the model left running in the jail. The session's
extension worker goes on answering and its MCP stdio server goes on running."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import textwrap
import threading
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import yaml
from warm_servers import command

from vis_core.host import Host, HostOptions
from vis_core.system.quiet import model_stopped

from .hostile import BWRAP_PROBLEM

pytestmark = pytest.mark.skipif(BWRAP_PROBLEM is not None, reason=BWRAP_PROBLEM or "")

SERVER = Path(__file__).parents[1] / "mcp_servers" / "server_app.py"
PINGER = """
import os
import vis_core.extension as vis

vis.register_extension(vis.Extension(
    name="pinger", alias="pinger", description="Says where it runs.",
    slash_commands=[vis.SlashCommand("ping", lambda ctx: f"pong {os.getpid()}")],
))
"""
BLOCK = """
h = await shell("while :; do sleep 0.01; done")  # left running
print((await mcp__fixture__weather(city="Oslo")).is_error)
"""


def _below(root: int) -> dict[int, tuple[str, bool, str]]:
    """Every process below ``root``: its state, whether it is in another PID namespace, and
    its command line."""
    own = os.readlink("/proc/self/ns/pid")
    table: dict[int, tuple[int, str, bool, str]] = {}
    for name in filter(str.isdigit, os.listdir("/proc")):
        try:
            fields = Path(f"/proc/{name}/stat").read_text().rsplit(")", 1)[1].split()
            jailed = os.readlink(f"/proc/{name}/ns/pid") != own
            cmdline = Path(f"/proc/{name}/cmdline").read_bytes().decode(errors="replace")
        except (OSError, IndexError):
            continue
        table[int(name)] = (int(fields[1]), fields[0], jailed, cmdline)
    found: dict[int, tuple[str, bool, str]] = {}
    pending = [root]
    while pending:
        parent = pending.pop()
        for pid, (ppid, state, jailed, cmdline) in table.items():
            if ppid == parent:
                found[pid] = (state, jailed, cmdline)
                pending.append(pid)
    return found


def _state(pid: int) -> str:
    """The state of process ``pid`` (``T`` when stopped)."""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]


async def _in_the_jail(mark: str) -> None:
    """Once a jailed process below this one has ``mark`` in its command line (bwrap may still
    be setting up the jail when the command was started)."""
    async with asyncio.timeout(60):
        while not any(j and mark in line for _, j, line in _below(os.getpid()).values()):
            await asyncio.sleep(0.01)


@contextlib.asynccontextmanager
async def _held() -> AsyncIterator[None]:
    """Inside, ``model_stopped`` is held by another thread (as an editor's file call is)."""
    inside, leave = threading.Event(), threading.Event()

    def hold() -> None:
        try:
            with model_stopped():
                inside.set()
                leave.wait()
        finally:  # NotQuiet: what the test then finds running says it
            inside.set()

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        await asyncio.to_thread(inside.wait)
        yield
    finally:
        leave.set()
        await asyncio.to_thread(holder.join)


async def test_only_the_models_processes_are_held(
    workspace: Path, vis_home: Path, tmp_path: Path
) -> None:
    (vis_home / "extensions").mkdir()
    (vis_home / "extensions" / "pinger.py").write_text(textwrap.dedent(PINGER))
    program, *args = command(SERVER, "stdio")
    pidfile = tmp_path / "server.pid"  # the server's own process, below the launcher's
    server = {"command": program, "args": args, "env": {"PIDFILE": str(pidfile)}}
    (vis_home / "mcp.json").write_text(json.dumps({"mcpServers": {"fixture": server}}))
    script = tmp_path / "script.yaml"
    script.write_text(yaml.safe_dump([{"code": BLOCK}, {"text": "Done."}]))
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted", script=script))
    try:
        session = await host.new_session()
        await session.submit("go")
        pong = (await host.commands.run(session, "/ping")).title
        worker = int(pong.split()[-1])
        await _in_the_jail("while :")
        async with _held():
            below = _below(os.getpid())
            jailed = {pid: (state, line) for pid, (state, j, line) in below.items() if j}
            # the sandbox child and the loop (and its sleep, when one was running), jailed
            # stopped; a sleep that ended just before is a zombie its stopped shell cannot reap
            assert {state for state, _ in jailed.values()} <= {"T", "Z"}, below
            assert any("while :" in line for _, line in jailed.values()), below
            assert len(jailed) >= 2, below
            assert below[worker][0] != "T", below[worker]
            # its MCP server (and any an earlier test of this process still closes), started
            # warm: its launcher, and the server's own process (forked from the run's warm
            # parent, so not below this one)
            servers = [state for state, _, line in below.values() if str(SERVER) in line]
            assert servers and "T" not in servers, below
            assert _state(int(pidfile.read_text())) != "T", below
            assert (await host.commands.run(session, "/ping")).title == pong  # it answers
    finally:
        await host.close()


LOOPER = """
import vis_core.extension as vis

started = []

def loop(ctx):
    started.append(vis.jailed_shell("while :; do sleep 0.01; done # extension's"))
    return f"looping {started[-1].pid}"

def touch(ctx):
    started.append(vis.jailed_shell("touch started.txt # begun during a hold"))
    return "touching"

vis.register_extension(vis.Extension(
    name="looper", alias="looper", description="Leaves a jailed loop running.",
    slash_commands=[
        vis.SlashCommand("loop", loop),
        vis.SlashCommand("touch", touch),
        vis.SlashCommand("ping", lambda ctx: "pong"),
    ],
))
"""


async def test_a_jailed_command_an_extension_started_is_held_too(
    workspace: Path, vis_home: Path, tmp_path: Path
) -> None:
    (vis_home / "config.toml").write_text("jail = true\n")
    (vis_home / "extensions").mkdir()
    (vis_home / "extensions" / "looper.py").write_text(textwrap.dedent(LOOPER))
    script = tmp_path / "script.yaml"
    script.write_text(yaml.safe_dump([{"text": "Done."}]))
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted", script=script))
    try:
        session = await host.new_session()
        title = (await host.commands.run(session, "/loop")).title
        assert title.startswith("looping"), title
        mine = "extension's"
        await _in_the_jail(mine)
        async with _held():
            below = _below(os.getpid())
            loops = [state for state, j, line in below.values() if j and mine in line]
            assert loops and set(loops) <= {"T", "Z"} and "T" in loops, below
            assert (await host.commands.run(session, "/ping")).title == "pong"  # the worker runs
        async with asyncio.timeout(60):  # continued once the hold ends
            while any(s == "T" for s, j, ln in _below(os.getpid()).values() if j and mine in ln):
                await asyncio.sleep(0.01)
    finally:
        await host.close()


async def test_a_jailed_command_an_extension_starts_during_a_hold_waits_for_its_end(
    workspace: Path, vis_home: Path, tmp_path: Path
) -> None:
    """Before, a worker knew of no hold: a ``vis.jailed_shell`` started while Vis held the
    model (git in a draft) ran the workspace's code then, unstopped."""
    (vis_home / "config.toml").write_text("jail = true\n")
    (vis_home / "extensions").mkdir()
    (vis_home / "extensions" / "looper.py").write_text(textwrap.dedent(LOOPER))
    script = tmp_path / "script.yaml"
    script.write_text(yaml.safe_dump([{"text": "Done."}]))
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted", script=script))
    marker = workspace / "started.txt"
    try:
        session = await host.new_session()
        assert (await host.commands.run(session, "/ping")).title == "pong"  # its worker runs
        async with _held():
            assert (await host.commands.run(session, "/touch")).title == "touching"
            async with asyncio.timeout(60):  # its keeper is there, waiting to start it
                while not any("begun during" in ln for _, _, ln in _below(os.getpid()).values()):
                    await asyncio.sleep(0.01)
            await asyncio.sleep(1.0)  # what it would have done by now, unheld
            assert not marker.exists()
            jailed = [line for _, j, line in _below(os.getpid()).values() if j]
            assert not any("begun during" in line for line in jailed), jailed
        async with asyncio.timeout(60):  # started once the hold ends
            while not marker.exists():
                await asyncio.sleep(0.01)
    finally:
        await host.close()
