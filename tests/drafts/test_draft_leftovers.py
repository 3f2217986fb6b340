"""Entering a draft stops what shell commands left running in the live workspace, too."""

from __future__ import annotations

import uuid
from pathlib import Path

import yaml
from processes import marked

from vis_core.events import BlockFinished
from vis_core.host import Host, HostOptions


async def test_what_an_ended_command_left_running_stops_with_the_draft(
    repo: Path, tmp_path: Path, jail_off: None
) -> None:
    """With the jail off (with it on, the jail's PID namespace ends with the command)."""
    marker = f"vis-left-{uuid.uuid4().hex}"
    # the command ends at once; the loop it left behind would write the live tree on
    code = (
        f"h = await shell(\"sh -c 'while :; do date >> live.log; sleep 0.05; done' {marker} &\")\n"
        "await h.wait(30)\n"
        'await draft_create("now")\n'
    )
    script = tmp_path / "script.yaml"
    script.write_text(yaml.safe_dump([{"code": code}, {"text": "done"}]), encoding="utf-8")
    host = await Host.open(HostOptions(workspace=repo, provider="scripted", script=script))
    try:
        session = await host.new_session()
        blocks: list[BlockFinished] = []
        session.subscribe(blocks.append, kinds=(BlockFinished,))
        ended = await session.submit("go")
        assert ended.status == "completed", ended.error
        assert blocks[0].error is None, blocks[0]
        assert marked(marker) == []
    finally:
        await host.close()
