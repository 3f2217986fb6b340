"""A hostile repository and a scripted session to try the jail for real."""

from __future__ import annotations

import shutil
import subprocess
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cli_support import yaml_text

from vis_core.events import BlockFinished, Event, TurnEnded
from vis_core.host import Host, HostOptions
from vis_core.system.jail_check import jail_problem


def bwrap_problem() -> str | None:
    """Why bwrap cannot confine anything here, or None when it can (Vis's own check)."""
    if shutil.which("bwrap") is None:
        return "bubblewrap (bwrap) is not installed"
    return jail_problem()


BWRAP_PROBLEM = bwrap_problem()
if BWRAP_PROBLEM is not None:
    print(f"jail tests skip: {BWRAP_PROBLEM}")


def git(root: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True)
    return done.stdout


def make_repo(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.name", "Ada")
    git(root, "config", "user.email", "ada@example.com")
    (root / "notes.txt").write_text("one\n")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "first")
    return root


@dataclass
class Outcome:
    """What one scripted turn produced."""

    ended: TurnEnded
    events: list[Event] = field(default_factory=list)

    @property
    def blocks(self) -> list[BlockFinished]:
        return [e for e in self.events if isinstance(e, BlockFinished)]


def script(path: Path, *blocks: str) -> Path:
    steps: list[dict[str, Any]] = [{"code": textwrap.dedent(b)} for b in blocks]
    path.write_text(yaml_text([*steps, {"text": "Done."}]), encoding="utf-8")
    return path


async def run_blocks(workspace: Path, tmp_path: Path, *blocks: str) -> Outcome:
    """Open a host on ``workspace``, run ``blocks`` as one scripted turn, close it."""
    path = script(tmp_path / "script.yaml", *blocks)
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted", script=path))
    try:
        session = await host.new_session()
        events: list[Event] = []
        session.subscribe(events.append)
        ended = await session.submit("go")
        return Outcome(ended, events)
    finally:
        await host.close()


async def swap_attack(
    workspace: Path, tmp_path: Path, swap: str, names: list[str], text: str
) -> tuple[Path, BlockFinished]:
    """Run the block ``swap`` (a format string given ``names`` and ``outside``): its thread
    swaps a folder of the workspace for a link to ``outside``, a folder the jail hides that
    holds ``names``, each with ``text``. The hidden folder and the block, once its thread
    swapped."""
    outside = tmp_path / "outside"
    outside.mkdir()
    for name in names:
        (outside / name).write_text(text)
    code = swap.format(names=names, outside=str(outside))
    block = (await run_blocks(workspace, tmp_path, code)).blocks[0]
    assert "swapped: True" in block.stdout, (block.stdout, block.error)
    return outside, block
