"""What a running block prints is committed (``BlockPrinted``) before its row shows it, so
a Vis that is killed keeps what it showed."""

from __future__ import annotations

import asyncio
from pathlib import Path

import yaml

from vis_core.agent.printed import (
    PRINTED_EVERY,
    PRINTED_MOST,
    PRINTED_SLOW_EVERY,
    printed_pause,
)
from vis_core.events import BlockFinished, BlockPrinted, Event
from vis_core.host import Host, HostOptions

BLOCK = """\
import pathlib, time
for i in range(5):
    print("tick", i, flush=True)
while not pathlib.Path("stop").exists():  # the test ends it once it saw the ticks
    time.sleep(0.02)
"""


async def _until(condition, what: str) -> None:  # type: ignore[no-untyped-def]
    for _ in range(1500):
        if condition():
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"never: {what}")


async def test_a_running_blocks_lines_are_shown_only_once_committed(
    workspace: Path, tmp_path: Path
) -> None:
    script = tmp_path / "script.yaml"
    script.write_text(yaml.safe_dump([{"code": BLOCK}, {"text": "done"}]), encoding="utf-8")
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted", script=script))
    try:
        session = await host.new_session()
        published: list[Event] = []
        session.subscribe(published.append)
        turn = asyncio.ensure_future(session.submit("tick"))
        await _until(lambda: "tick 4" in session.printed(3), "the row showed tick 4")
        shown = session.printed(3)
        stored = "".join(
            r.event.text  # type: ignore[attr-defined]
            for r in host.store.events(session.id, types=["BlockPrinted"])
        )
        assert shown == "tick 2\ntick 3\ntick 4"
        assert "tick 0\ntick 1\ntick 2\ntick 3\ntick 4\n" in stored  # saved before shown
        printed = [e for e in published if isinstance(e, BlockPrinted)]
        assert "tick 4" in "".join(e.text for e in printed)  # and published, as every event
        (workspace / "stop").write_text("")
        await turn
        assert session.printed(3) == ""  # no block runs
        (finished,) = [e for e in published if isinstance(e, BlockFinished)]
        assert finished.stdout.startswith("tick 0\n") and printed[0].iteration_id == (
            finished.iteration_id
        )
    finally:
        await host.close()


def test_a_block_printing_without_pause_for_30_minutes_stores_under_4_mb() -> None:
    """The whole block time limit at the most each look can commit: quick looks while the
    block is short, slow ones after (before, 16 KB/s: 29 MB a block)."""
    committed = elapsed = looks = 0.0
    while elapsed < 30 * 60:
        elapsed += printed_pause(int(committed))
        committed += PRINTED_MOST
        looks += 1
    assert committed < 4_000_000
    assert printed_pause(0) == PRINTED_EVERY  # a short block's row still moves every look
    assert looks > 30 * 60 / PRINTED_SLOW_EVERY  # and a long one's at least every 2 s
