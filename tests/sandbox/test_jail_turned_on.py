"""A jail turned on between turns leaves nothing of the unjailed period running on the host."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from processes import alive

from vis_core.events import BlockFinished, TurnEnded
from vis_core.host import Host, HostOptions
from vis_core.paths import VisPaths

from .hostile import BWRAP_PROBLEM

pytestmark = pytest.mark.skipif(BWRAP_PROBLEM is not None, reason=str(BWRAP_PROBLEM))

# with the jail off: an unjailed bash that reads commands from its stdin, and a leftover that
# outlives its command (in a session of its own), each writing its pid into the workspace
UNJAILED = """\
import asyncio, pathlib
bash_reader = await shell("echo $$ > reader.pid; exec bash")
leftover = await shell(
    "setsid sh -c 'echo $$ > leftover.pid; exec sleep 600' & "
    "sleep 1000 & echo $! > waiter.pid; exit 0"
)
await leftover.wait(30)
while not all(pathlib.Path(n).exists() for n in ("reader.pid", "leftover.pid", "waiter.pid")):
    await asyncio.sleep(0.01)
print("started")
"""
# with the jail on: the model finds the old handle again and types into it
TYPES_INTO_IT = """\
import asyncio
reader = (await shells())[0]  # the first command: the bash
try:
    await reader.type("cat {outside} > leaked.txt; echo done\\n")
    while "done" not in await reader.logs():
        await asyncio.sleep(0.01)
    print("typed")
except Exception as exc:
    print("refused", type(exc).__name__)
"""


async def test_shells_started_unjailed_stop_when_the_jail_goes_on(
    workspace: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("the person's own file", encoding="utf-8")
    script = tmp_path / "script.yaml"
    script.write_text(
        yaml.safe_dump(
            [
                {"code": UNJAILED},
                {"text": "Started."},
                {"code": TYPES_INTO_IT.format(outside=outside)},
                {"text": "Done."},
            ]
        ),
        encoding="utf-8",
    )
    VisPaths.from_env().ensure().config_file.write_text("jail = false\n")
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted", script=script))
    try:
        session = await host.new_session()
        blocks: list[BlockFinished] = []
        session.subscribe(blocks.append, kinds=(BlockFinished,))
        first = await session.submit("start them")
        assert first.status == "completed", first.error
        assert blocks[0].stdout.strip() == "started", blocks[0]
        pids = {
            n: int((workspace / f"{n}.pid").read_text()) for n in ("reader", "leftover", "waiter")
        }
        assert all(alive(pid) for pid in pids.values())

        assert (await host.settings.set("jail", True, "global")).changed
        # nothing started unjailed runs on once the save returns
        assert {n: alive(p) for n, p in pids.items()} == dict.fromkeys(pids, False)
        second: TurnEnded = await session.submit("read it")
    finally:
        await host.close()
    assert second.status == "completed", second.error
    assert blocks[1].stdout.strip().splitlines()[-1] == "refused RuntimeError", blocks[1]
    assert not (workspace / "leaked.txt").exists()
