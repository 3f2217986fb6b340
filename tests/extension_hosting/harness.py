"""Test harness: fixture extensions in ``$VIS_HOME/extensions`` driven by a scripted session."""

from __future__ import annotations

import json
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cli_support import yaml_text

from vis_core.events import ActivityEnded, BlockFinished, Event, TurnEnded
from vis_core.host import Host, HostOptions


def install_extension(vis_home: Path, name: str, source: str) -> Path:
    """Write the entry file ``name.py`` into the user extensions folder."""
    folder = vis_home / "extensions"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.py"
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    return path


def write_script(path: Path, responses: list[dict[str, Any]]) -> Path:
    path.write_text(yaml_text(responses), encoding="utf-8")
    return path


def code_turn(*blocks: str, reply: str = "Done.") -> list[dict[str, Any]]:
    """A script: one python_execution response per block, then a plain reply."""
    return [{"code": textwrap.dedent(code)} for code in blocks] + [{"text": reply}]


@dataclass
class Outcome:
    """What one scripted turn produced."""

    ended: TurnEnded
    events: list[Event] = field(default_factory=list)

    @property
    def blocks(self) -> list[BlockFinished]:
        return [e for e in self.events if isinstance(e, BlockFinished)]

    def printed(self, index: int = 0) -> Any:
        """The JSON that block ``index`` printed on its last line."""
        block = self.blocks[index]
        assert block.error is None, block.error
        return json.loads(block.stdout.strip().splitlines()[-1])

    def tools(self) -> list[str]:
        return [e.activity.tool for e in self.events if isinstance(e, ActivityEnded)]


async def open_host(workspace: Path, script: Path) -> Host:
    return await Host.open(HostOptions(workspace=workspace, provider="scripted", script=script))


async def run_blocks(workspace: Path, script: Path, *blocks: str) -> tuple[Outcome, list[Event]]:
    """One turn whose model runs ``blocks``, in a host of its own: its outcome, and the events
    the store kept of the session (read before the host closes)."""
    write_script(script, code_turn(*blocks))
    host = await open_host(workspace, script)
    try:
        outcome = await run_turn(host)
        stored = [s.event for s in host.store.events(outcome.ended.session_id)]
    finally:
        await host.close()
    return outcome, stored


async def run_turn(host: Host, request: str = "go", session_id: str | None = None) -> Outcome:
    session = await (host.open_session(session_id) if session_id else host.new_session())
    events: list[Event] = []
    session.subscribe(events.append)
    ended = await session.submit(request)
    return Outcome(ended, events)
