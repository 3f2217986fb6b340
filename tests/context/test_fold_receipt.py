"""A fold receipt reports what left the context and what came in, each by local estimate."""

from __future__ import annotations

import re
from pathlib import Path

from vis_core.events import BlockFinished

from .support import open_host, run_turns, write_script

GIST = "The person asked for a greeting and got one; nothing is open. " * 3


async def test_folding_a_short_chat_turn_reports_what_left_and_what_came_in(
    workspace: Path, tmp_path: Path
) -> None:
    script = write_script(
        tmp_path / "s.yaml",
        [
            {"text": "Hello! How can I help you today with this repository?"},
            {"code": f"print(await fold_session('t1', {GIST!r}))"},
            {"text": "folded"},
        ],
    )
    host = await open_host(workspace, script)
    try:
        session = await host.new_session()
        events = await run_turns(session, "Say hello to me, please, in one sentence.", "fold")
    finally:
        await host.close()
    receipt = next(e for e in events if isinstance(e, BlockFinished)).stdout
    found = re.search(
        r"left the active context \(~(\d+) tokens by local estimate\); "
        r"your gist came in \(~(\d+) tokens\)",
        receipt,
    )
    assert found, receipt
    left, came = int(found[1]), int(found[2])
    assert left > 10  # the request and the answer (not "~0 tokens": the gist is counted apart)
    assert came > left  # this gist is longer than the short turn it replaced
