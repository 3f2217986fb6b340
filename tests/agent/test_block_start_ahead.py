"""A block's sandbox child and the extension worker of its ``session`` dict start once the
model begins writing the block (its call's start streams), not once its code has arrived.
(The bundled todo extension's ``ctx`` needs no worker while the session keeps no todos; an
extension's plain ``ctx`` does.)"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from pathlib import Path

import yaml
from processes import marked

from vis_core.events import ActivityStarted, BlockFinished, Event, IterationStarted
from vis_core.host import Host, HostOptions

WORKER = "vis_core.extension_host.worker_start:main"
WHERE = """
import vis_core.extension as vis

vis.register_extension(vis.Extension(
    name="where", description="Where the session runs.", ctx=lambda env: {"where": env["cwd"]},
))
"""


async def _until(condition: Callable[[], bool]) -> None:
    for _ in range(3000):  # up to a minute: a loaded machine starts children slowly
        if condition():
            return
        await asyncio.sleep(0.02)
    raise AssertionError("the condition never held")


def _worker_in(workspace: Path) -> bool:
    """Whether an extension worker runs in ``workspace`` (its working folder)."""
    for pid in marked(WORKER):
        try:
            if os.readlink(f"/proc/{pid}/cwd") == str(workspace):
                return True
        except OSError:
            continue
    return False


async def test_the_child_and_worker_start_while_the_code_streams(
    workspace: Path, tmp_path: Path
) -> None:
    extensions = Path(os.environ["VIS_HOME"]) / "extensions"
    extensions.mkdir(parents=True, exist_ok=True)
    (extensions / "where.py").write_text(WHERE, encoding="utf-8")
    script = tmp_path / "script.yaml"
    # the call's start streams at once; its code only after a minute (the test ends first)
    script.write_text(yaml.safe_dump([{"code": "print('hi')", "delay_ms": 60_000}]))
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted", script=script))
    try:
        session = await host.new_session()
        seen: list[Event] = []
        session.subscribe(seen.append)
        turn = asyncio.ensure_future(session.submit("run it"))

        def child_runs() -> bool:
            proc = session.sandbox.inner._proc  # type: ignore[attr-defined]
            return proc is not None and proc.returncode is None

        await _until(lambda: child_runs() and _worker_in(workspace))
        # the call has not arrived (no iteration yet): the provider still holds its code
        assert not any(isinstance(e, (IterationStarted, BlockFinished)) for e in seen)
        session.cancel()
        await turn
    finally:
        await host.close()


async def test_a_block_that_names_an_extension_starts_its_worker_before_its_first_call(
    workspace: Path, tmp_path: Path
) -> None:
    script = tmp_path / "script.yaml"
    code = "import asyncio\nawait asyncio.sleep(600)\nawait todo.add('later')"
    script.write_text(yaml.safe_dump([{"code": code}]))
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted", script=script))
    try:
        session = await host.new_session()
        seen: list[Event] = []
        session.subscribe(seen.append)
        turn = asyncio.ensure_future(session.submit("run it"))
        await _until(lambda: any(isinstance(e, IterationStarted) for e in seen))
        await _until(lambda: _worker_in(workspace))  # while the block sleeps
        assert not any(isinstance(e, (ActivityStarted, BlockFinished)) for e in seen)
        session.cancel()
        await turn
    finally:
        await host.close()
