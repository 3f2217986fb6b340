"""At a turn's end nothing its blocks started outside shell() runs on; the namespace stays."""

from __future__ import annotations

import os
import time
import uuid
from pathlib import Path

import yaml

from vis_core.events import BlockFinished
from vis_core.host import Host, HostOptions

STRAYS = """
import os, subprocess, sys
MARK = {mark!r}
sleeper = [sys.executable, "-c", "import time; time.sleep(300)"]
kept = subprocess.Popen(sleeper + [MARK + "-child"])
loose = subprocess.Popen(sleeper + [MARK + "-session"], start_new_session=True)
first = os.fork()
if first == 0:
    os.setsid()
    if os.fork() == 0:
        os.execv(sys.executable, sleeper + [MARK + "-double-fork"])
    os._exit(0)
os.waitpid(first, 0)
import time


def started():
    count = 0
    for p in os.listdir("/proc"):
        try:
            count += MARK.encode() in open(f"/proc/{{p}}/cmdline", "rb").read()
        except OSError:
            pass
    return count


while started() < 3:  # each has run its exec
    time.sleep(0.02)
value = 42
"""


def marked(mark: str) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        try:
            with open(f"/proc/{name}/cmdline", "rb") as file:
                cmdline = file.read()
            with open(f"/proc/{name}/stat") as file:
                state = file.read().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if mark.encode() in cmdline and state != "Z":
            found.append(int(name))
    return found


async def test_the_turns_end_kills_what_its_blocks_left_running(
    workspace: Path, tmp_path: Path
) -> None:
    mark = f"vis-stray-{uuid.uuid4().hex}"
    (workspace.parent / "vis-home" / "config.toml").write_text("jail = false\n")
    script = tmp_path / "script.yaml"
    responses = [
        {"code": STRAYS.format(mark=mark)},
        {"text": "started"},
        {"code": "print(value)"},
        {"text": "done"},
    ]
    script.write_text(yaml.safe_dump(responses), encoding="utf-8")
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted", script=script))
    try:
        session = await host.new_session()
        blocks: list[BlockFinished] = []
        session.subscribe(lambda e: blocks.append(e) if isinstance(e, BlockFinished) else None)
        await session.submit("start")
        assert blocks[0].error is None, blocks[0].error
        deadline = time.monotonic() + 10  # SIGKILL was sent at the turn's end
        while (left := marked(mark)) and time.monotonic() < deadline:
            time.sleep(0.02)
        await session.submit("again")
    finally:
        await host.close()
        for pid in marked(mark):  # clean up after a failure
            os.kill(pid, 9)
    assert left == [], "processes a block started outlived its turn"
    assert blocks[1].stdout == "42\n"  # the sandbox and its namespace stayed
