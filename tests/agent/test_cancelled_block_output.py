"""A block cancelled with Esc keeps what it printed, its ``finally:`` output included: on its
row (the stored BlockFinished) and in what the model reads next."""

from __future__ import annotations

import asyncio
from pathlib import Path

import yaml

from vis_core.events import BlockFinished, Event
from vis_core.host import Host, HostOptions
from vis_core.model.turn import BLOCK_CANCELLED

BLOCK = """\
import asyncio, pathlib
print("step one done")
try:  # the test cancels once "started" exists: by then the finally: is sure to run
    pathlib.Path("started").write_text("yes")
    await asyncio.sleep(60)
finally:
    print("cleanup ran")
"""


async def test_a_cancelled_block_keeps_its_output_for_the_row_and_the_model(
    workspace: Path, tmp_path: Path
) -> None:
    script = tmp_path / "script.yaml"
    turns = [{"code": BLOCK}, {"text": "never"}, {"text": "I see it was cancelled."}]
    script.write_text(yaml.safe_dump(turns), encoding="utf-8")
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted", script=script))
    try:
        session = await host.new_session()
        finished: list[BlockFinished] = []

        def watch(event: Event) -> None:
            if isinstance(event, BlockFinished):
                finished.append(event)

        session.subscribe(watch)
        turn = asyncio.ensure_future(session.submit("run the long job"))
        for _ in range(1000):
            if (workspace / "started").exists():
                break
            await asyncio.sleep(0.02)
        session.cancel()
        await turn
        assert len(finished) == 1 and finished[0].error == BLOCK_CANCELLED
        assert "step one done" in finished[0].stdout and "cleanup ran" in finished[0].stdout
        stored = [
            r.event for r in host.store.events(session.id) if isinstance(r.event, BlockFinished)
        ]
        assert "cleanup ran" in stored[0].stdout
        await session.submit("what happened?")
        request = session.model.provider.requests[-1]  # type: ignore[union-attr]
        sent = "\n".join(str(message) for message in request.messages)
        assert "step one done" in sent and "cleanup ran" in sent, sent
    finally:
        await host.close()
