"""Fixtures: fixture extensions in ``$VIS_HOME/extensions`` and scripted sessions on a Host."""

from __future__ import annotations

import os
import textwrap
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from vis_core.events import BlockFinished, Event
from vis_core.host import Host, HostOptions


@pytest.fixture(autouse=True)
def restore_environ() -> Iterator[None]:
    """``register_extension`` writes declared names into ``os.environ``; undo it per test."""
    saved = dict(os.environ)
    yield
    os.environ.clear()
    os.environ.update(saved)


@pytest.fixture
def extension(vis_home: Path) -> Callable[[str, str], Path]:
    """``extension(name, source)`` writes ``$VIS_HOME/extensions/<name>.py``."""

    def write(name: str, source: str) -> Path:
        folder = vis_home / "extensions"
        folder.mkdir(exist_ok=True)
        path = folder / f"{name}.py"
        path.write_text(textwrap.dedent(source).lstrip(), encoding="utf-8")
        return path

    return write


class Run:
    """A host with a scripted model; ``events`` collects what the session emitted."""

    def __init__(self, host: Host) -> None:
        self.host = host
        self.events: list[Event] = []

    async def session(self) -> Any:
        session = await self.host.new_session()
        session.subscribe(self.events.append)
        return session

    def blocks(self) -> list[BlockFinished]:
        return [e for e in self.events if isinstance(e, BlockFinished)]

    def state(self, extension: str) -> dict[str, Any]:
        return self.host.store.state_items(extension)


@pytest.fixture
async def scripted(workspace: Path, tmp_path: Path) -> AsyncIterator[Callable[..., Any]]:
    """``await scripted(responses)`` opens a Host whose model replays ``responses``."""
    hosts: list[Host] = []

    async def open_run(responses: list[dict[str, Any]]) -> Run:
        script = tmp_path / f"script-{len(hosts)}.yaml"
        script.write_text(yaml.safe_dump(responses), encoding="utf-8")
        host = await Host.open(HostOptions(workspace=workspace, provider="scripted", script=script))
        hosts.append(host)
        assert not host.catalog.loaded.errors, host.catalog.loaded.errors
        return Run(host)

    yield open_run
    for host in hosts:
        await host.close()
