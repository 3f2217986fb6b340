"""A tool's result is encoded once, in its extension worker: the host hands the packed bytes to
the sandbox as they are, and decodes them only for a reader of its own (``vis.tools``)."""

from __future__ import annotations

import os
import sys
import textwrap
from pathlib import Path

import yaml

from vis_core.events import BlockFinished, Event
from vis_core.host import Host, HostOptions
from vis_core.ipc.values import Encoded
from vis_core.records.record import Record

EXTENSION = '''
from dataclasses import dataclass

import vis_core.extension as vis


@dataclass
class Ticket:
    key: str
    tags: tuple[str, ...]

    @property
    def loud(self) -> str:
        return self.key.upper()


def ticket(key: str) -> Ticket:
    """A ticket."""
    return Ticket(key, ("a", "b"))


vis.register_extension(vis.Extension(
    name="tickets", alias="tickets", description="Tickets.", symbols=[vis.Symbol(ticket)],
))
'''


async def test_a_records_result_crosses_packed_and_reads_the_same_everywhere(
    tmp_path: Path,
) -> None:
    folder = Path(os.environ["VIS_HOME"]) / "extensions"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "tickets.py").write_text(EXTENSION, encoding="utf-8")
    workspace = tmp_path / "work"
    workspace.mkdir()
    script = tmp_path / "script.yaml"
    block = "t = await ticket('vis-1')\nprint(type(t).__name__, t.key, t.tags, t.loud)"
    turns = [{"code": textwrap.dedent(block)}, {"text": "done"}]
    script.write_text(yaml.safe_dump(turns), encoding="utf-8")
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted", script=script))
    try:
        session = await host.new_session()
        packed = await session.invoker.call("ticket", ("vis-2",), {}, encoded=True)
        assert type(packed) is Encoded  # what the sandbox receives, untouched by the host
        read = await session.invoker.call("ticket", ("vis-3",), {})
        assert isinstance(read, Record) and read.key == "vis-3" and read.tags == ["a", "b"]
        assert packed.decode().loud == "VIS-2"
        events: list[Event] = []
        session.subscribe(events.append)
        await session.submit("go")
        (finished,) = [e for e in events if isinstance(e, BlockFinished)]
        assert finished.error is None, finished.error
        assert finished.stdout == "Ticket vis-1 ['a', 'b'] VIS-1\n"
        assert not any("tickets" in name for name in sys.modules)  # never loaded here
    finally:
        await host.close()
