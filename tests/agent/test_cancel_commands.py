"""Esc stops the commands the cancelled block started; those earlier blocks left running go on."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import yaml
from processes import alive

from vis_core.events import ActivityStarted, Event
from vis_core.host import Host, HostOptions

EARLIER = 'server = await shell("echo $$ > server.pid; exec sleep 60")\nprint("up")'
CANCELLED = 'build = await shell("echo $$ > build.pid; exec sleep 60")\nawait build.wait(600)'


async def _pid(path: Path) -> int:
    for _ in range(500):
        if path.exists() and path.read_text().strip():
            return int(path.read_text())
        await asyncio.sleep(0.02)
    raise AssertionError(f"{path} was never written")


@pytest.mark.usefixtures("jail_off")  # explicitly: pids on the host
async def test_esc_stops_the_commands_the_cancelled_block_started(
    workspace: Path, tmp_path: Path
) -> None:
    script = tmp_path / "script.yaml"
    turns = [{"code": EARLIER}, {"text": "started"}, {"code": CANCELLED}, {"text": "never"}]
    script.write_text(yaml.safe_dump(turns), encoding="utf-8")
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted", script=script))
    try:
        session = await host.new_session()
        await session.submit("start the server")
        server = await _pid(workspace / "server.pid")
        assert alive(server)

        started = asyncio.Event()

        def watch(event: Event) -> None:
            if isinstance(event, ActivityStarted) and event.activity.tool == "shell":
                started.set()

        session.subscribe(watch)
        turn = asyncio.ensure_future(session.submit("build"))
        await started.wait()
        build = await _pid(workspace / "build.pid")
        session.cancel()
        await turn
        for _ in range(250):
            if not alive(build):
                break
            await asyncio.sleep(0.02)
        assert not alive(build)  # the cancelled block's command was stopped
        assert alive(server)  # the one an earlier block left running goes on
    finally:
        await host.close()
