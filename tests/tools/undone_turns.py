"""One scripted turn whose block runs some code, then ``/undo``: what a block's row listed
and what /undo did, for the tests of what a block can hide from both."""

from __future__ import annotations

from pathlib import Path

from cli_support import script

from vis_core.agent.person_input import undo
from vis_core.events import BlockFinished
from vis_core.host import Host, HostOptions
from vis_core.model.undo import UndoReport


async def turn_then_undo(
    ws: Path, tmp_path: Path, code: str
) -> tuple[list[BlockFinished], UndoReport]:
    """One turn whose one block runs ``code`` (in the sandbox, jailed where bubblewrap
    works), then ``/undo``: the block's row and what /undo did."""
    steps = [{"code": code}, {"text": "Done."}]
    host = await Host.open(
        HostOptions(workspace=ws, provider="scripted", script=script(tmp_path, steps))
    )
    events: list[object] = []
    try:
        session = await host.new_session()
        session.subscribe(events.append)
        await session.submit("work")
        report = await undo(session)
    finally:
        await host.close()
    return [e for e in events if isinstance(e, BlockFinished)], report
