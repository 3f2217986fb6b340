"""Calls on a host handle (a shell's logs/wait/type/stop) are Activities like tool calls."""

from __future__ import annotations

from pathlib import Path

import yaml

from vis_core.events import BlockFinished
from vis_core.host import Host, HostOptions
from vis_core.model.activity import ActivityState, SymbolTag
from vis_core.model.turn import TurnStatus

BLOCK = """
h = await shell("python3 echo_input.py")
polls = 0
while polls < 3000:  # until the command has said it is ready (at most ~60 s)
    polls += 1
    out = await h.logs()
    if "ready" in out:
        break
    await asyncio.sleep(0.02)
print(out)
print("polls", polls)
try:
    await h.wait(0.2)
except TimeoutError as exc:
    print("still running")
await h.type("hello\\n")
echoes = 0
while echoes < 3000:  # until the command has echoed the line (stop would race it)
    echoes += 1
    if "got hello" in await h.logs():
        break
    await asyncio.sleep(0.02)
print("echoes", echoes)
status = await h.stop()
print("stopped", status.exit_code)
"""


async def test_each_shell_handle_call_is_an_activity_with_the_handle_id(
    workspace: Path, tmp_path: Path
):
    (workspace / "echo_input.py").write_text(
        "import sys\n"
        "print('ready', flush=True)\n"
        "print('got', sys.stdin.readline().strip(), flush=True)\n"
        "sys.stdin.readline()\n",
        encoding="utf-8",
    )
    script = tmp_path / "script.yaml"
    script.write_text(
        yaml.safe_dump([{"code": "import asyncio\n" + BLOCK}, {"text": "done"}]),
        encoding="utf-8",
    )
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted", script=script))
    events: list = []
    try:
        session = await host.new_session()
        session.subscribe(events.append)
        ended = await session.submit("run it")
        stored = host.store.activities(ended.turn_id)
    finally:
        await host.close()

    assert ended.status is TurnStatus.COMPLETED
    block = next(e for e in events if isinstance(e, BlockFinished))
    assert block.error is None, block.error
    assert "ready" in block.stdout and "still running" in block.stdout
    assert "stopped" in block.stdout
    polls = int(block.stdout.split("polls ")[1].split()[0])
    echoes = int(block.stdout.split("echoes ")[1].split()[0])

    assert [a.tool for a in stored] == [
        "shell",
        *["shell.logs"] * polls,
        "shell.wait",
        "shell.type",
        *["shell.logs"] * echoes,
        "shell.stop",
    ]
    handle_ids = {a.handle_id for a in stored}
    assert len(handle_ids) == 1 and None not in handle_ids
    assert {a.owner for a in stored} == {"vis"}  # the owner of shell(), as receipts group
    assert [a.tag for a in stored] == [
        SymbolTag.MUTATION,
        *[SymbolTag.OBSERVATION] * polls,
        SymbolTag.OBSERVATION,
        SymbolTag.MUTATION,
        *[SymbolTag.OBSERVATION] * echoes,
        SymbolTag.MUTATION,
    ]
    assert [a.state for a in stored] == [
        ActivityState.SUCCEEDED,
        *[ActivityState.SUCCEEDED] * polls,
        ActivityState.FAILED,
        ActivityState.SUCCEEDED,
        *[ActivityState.SUCCEEDED] * echoes,
        ActivityState.SUCCEEDED,
    ]
    by_tool = {a.tool: a for a in stored}
    wait = by_tool["shell.wait"]
    assert wait.error is not None and wait.error.startswith("TimeoutError")
    assert "still running" in wait.presentation.summary
    assert all(a.presentation.headline == "Run command" for a in stored)
    assert all(a.ended_at is not None and a.ended_at >= a.started_at for a in stored)
    assert "typed 'hello\\n'" in by_tool["shell.type"].presentation.summary
    assert "read output" in by_tool["shell.logs"].presentation.summary
    assert "stopped" in by_tool["shell.stop"].presentation.summary
    terminal = by_tool["shell.stop"].presentation.content[0]
    assert any("got hello" in line.text for line in terminal.lines)
