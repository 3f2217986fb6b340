"""Cancelling a tool that waits on ``vis.tools`` (a call into another extension) cancels that
call too: its Activity ends cancelled and its extension answers the next call at once. Before,
the nested call ran on with no one waiting for it, and every later call of its extension
waited behind it."""

from __future__ import annotations

import asyncio
from pathlib import Path

from vis_core.events import ActivityEnded, FormRequested
from vis_core.interaction import FormRequest

from .harness import code_turn, install_extension, open_host, run_turn, write_script

SLEEPER = '''
import asyncio

import vis_core.extension as vis


async def forever() -> None:
    """Sleeps until cancelled."""
    await asyncio.sleep(3600)


def echo(value: int) -> int:
    """Gives its argument back."""
    return value


vis.register_extension(vis.Extension(
    name="sleeper", alias="sleeper", description="Sleeps.",
    symbols=[vis.Symbol(forever), vis.Symbol(echo)],
))
'''

CALLER = '''
import vis_core.extension as vis


def wait_on_sleeper() -> None:
    """Waits on the sleeper through vis.tools."""
    return vis.tools.sleeper.forever()


vis.register_extension(vis.Extension(
    name="caller", alias="caller", description="Calls the sleeper.",
    symbols=[vis.Symbol(wait_on_sleeper)],
))
'''

CODE = """
import asyncio
await sleeper.echo(0)  # the extensions' worker runs before the call given 0.5 s
try:
    await asyncio.wait_for(caller.wait_on_sleeper(), 0.5)
except TimeoutError:
    print("gave up")
try:
    print(await asyncio.wait_for(sleeper.echo(7), 5))
except TimeoutError:
    print("the sleeper did not answer")
"""


async def test_a_cancelled_tool_cancels_the_tool_it_waits_on(
    vis_home: Path, workspace: Path, script_path: Path
) -> None:
    install_extension(vis_home, "sleeper", SLEEPER)
    install_extension(vis_home, "caller", CALLER)
    write_script(script_path, code_turn(CODE))
    host = await open_host(workspace, script_path)
    try:
        outcome = await run_turn(host)
        (block,) = outcome.blocks
        assert block.error is None, block.error
        assert block.stdout.split() == ["gave", "up", "7"], block.stdout
        ended = {
            e.activity.tool: e.activity.error
            for e in outcome.events
            if isinstance(e, ActivityEnded)
        }
        assert ended["wait_on_sleeper"] == "cancelled", ended
        assert ended.get("forever") == "cancelled", ended
    finally:
        await host.close()


ASKER = '''
import vis_core.extension as vis
from vis_core.extension import forms as F


def confirm() -> bool:
    """Asks the person, who never answers."""
    return bool(vis.ask("Go?", [F.plaintext("why")], timeout_ms=0))


def echo(value: int) -> int:
    """Gives its argument back."""
    return value


vis.register_extension(vis.Extension(
    name="asker", alias="asker", description="Asks.",
    symbols=[vis.Symbol(confirm), vis.Symbol(echo)],
))
'''

ASK_CODE = """
import asyncio
await asker.echo(0)  # the extension's worker runs before the call given 0.5 s
try:
    await asyncio.wait_for(asker.confirm(), 0.5)
except TimeoutError:
    print("gave up")
try:
    print(await asyncio.wait_for(asker.echo(7), 5))
except TimeoutError:
    print("the asker did not answer")
"""


class _Unanswered:
    """A front end that shows each form and never answers it."""

    def __init__(self) -> None:
        self.shown = 0
        self.taken_down = 0

    async def present(self, request: FormRequest) -> None:
        self.shown += 1
        try:
            await asyncio.Event().wait()
        finally:
            self.taken_down += 1


async def test_a_cancelled_tool_takes_down_the_form_it_waits_on(
    vis_home: Path, workspace: Path, script_path: Path
) -> None:
    """The host serves the worker's vis.ask as a task on its loop: the tool's cancel reaches
    the worker, whose cancel of the ask cancels that task, and the form goes away."""
    install_extension(vis_home, "asker", ASKER)
    write_script(script_path, code_turn(ASK_CODE))
    host = await open_host(workspace, script_path)
    front = _Unanswered()
    host.interaction.add_presenter(front)
    try:
        outcome = await run_turn(host)
        (block,) = outcome.blocks
        assert block.error is None, block.error
        assert block.stdout.split() == ["gave", "up", "7"], block.stdout
        ended = {
            e.activity.tool: e.activity.error
            for e in outcome.events
            if isinstance(e, ActivityEnded)
        }
        assert ended["confirm"] == "cancelled", ended
        assert [e.title for e in outcome.events if isinstance(e, FormRequested)] == ["Go?"]
        assert front.shown == front.taken_down == 1  # the form is down, the tool ended
    finally:
        await host.close()
