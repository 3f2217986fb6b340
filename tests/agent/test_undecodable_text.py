"""Text that is not valid Unicode (a lone surrogate: a file name decoded with
``surrogateescape``, a ``\\udcff`` escape in a provider's JSON) never breaks a session: its
events are stored with each such character written out, and the turn ends as it would."""

from __future__ import annotations

from pathlib import Path

from vis_core.events import BlockFinished, TurnEnded
from vis_core.host import Host, HostOptions
from vis_core.model.turn import TurnStatus

SCRIPT = r"""
- code: 'print("out \udcff"); raise ValueError("bad \udcff name")'
- text: "done \udcff"
"""


async def test_lone_surrogates_in_a_turn_are_stored_written_out(workspace: Path) -> None:
    script = workspace / "script.yaml"
    script.write_text(SCRIPT, encoding="utf-8")
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted", script=script))
    try:
        session = await host.new_session()
        seen: list[object] = []
        session.subscribe(seen.append)
        await session.submit("go")
        stored = [s.event for s in host.store.events(session.id)]
        ended = [e for e in stored if isinstance(e, TurnEnded)]
        assert [e.status for e in ended] == [TurnStatus.COMPLETED]
        assert ended[0].content == "done \\udcff"
        block = next(e for e in stored if isinstance(e, BlockFinished))
        assert block.error is not None and "bad \\udcff name" in block.error
        assert block.stdout.startswith("out ")
        assert any(isinstance(e, TurnEnded) for e in seen)  # published too
        # the next turn of the same session is stored as usual
        script.write_text('- text: "again"\n', encoding="utf-8")
    finally:
        await host.close()
    reopened = await Host.open(HostOptions(workspace=workspace, provider="scripted", script=script))
    try:
        resumed = await reopened.open_session(session.id)
        await resumed.submit("more")
        statuses = [
            e.status
            for e in (s.event for s in reopened.store.events(session.id))
            if isinstance(e, TurnEnded)
        ]
        assert statuses == [TurnStatus.COMPLETED, TurnStatus.COMPLETED]
    finally:
        await reopened.close()


async def test_a_lone_surrogate_in_the_code_itself_runs_as_its_escape(workspace: Path) -> None:
    script = workspace / "script.yaml"
    # YAML's double quotes decode the escape: the block's code holds a real lone surrogate
    script.write_text('- code: "print(ascii(\'x \\udcff\'))"\n- text: "done"\n', encoding="utf-8")
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted", script=script))
    try:
        session = await host.new_session()
        await session.submit("go")
        stored = [s.event for s in host.store.events(session.id)]
        block = next(e for e in stored if isinstance(e, BlockFinished))
        assert block.error is None
        assert block.stdout == "'x \\udcff'\n"
        ended = [e for e in stored if isinstance(e, TurnEnded)]
        assert [e.status for e in ended] == [TurnStatus.COMPLETED]
    finally:
        await host.close()
