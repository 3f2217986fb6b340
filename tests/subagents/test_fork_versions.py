"""A fork numbers file versions on from the session it copies: its transcript names them."""

from __future__ import annotations

import asyncio
from pathlib import Path

from vis_core.events import BlockFinished

from .support import open_host, script

HEADER = 'print(str(await cat("a.py")).split(chr(10))[0])'


async def test_a_fork_numbers_on_from_the_versions_its_copied_reads_name(
    workspace: Path, tmp_path: Path, vis_home: Path
):
    from vis_core.extension_host.session_changes import fork_stored

    (workspace / "a.py").write_text("x = 1\n")
    path = script(
        tmp_path / "s.yaml",
        [{"code": HEADER}, {"text": "read"}],
        {"go on": [{"code": HEADER}, {"text": "read again"}]},
    )
    host = await open_host(workspace, path)
    try:
        source = await host.new_session()
        await source.submit("one")
        (workspace / "a.py").write_text("x = 2\n")  # outside Vis
        row = await asyncio.wrap_future(fork_stored(host.store, source.id, None, "/fork"))
        fork = await host.open_session(row.id)
        await fork.submit("go on")
        shown = [
            e.event.stdout for e in host.store.events(row.id) if isinstance(e.event, BlockFinished)
        ]
    finally:
        await host.close()
    # the copied turn's read said @1 of x = 1: the fork's read of x = 2 is another number
    assert shown == ["a.py @1\n", "a.py @2\n"], shown
