"""What an extension's tool answers crosses to the host as data: records made in its worker,
its own exceptions by name and text, its handles by reference (their methods run there)."""

from __future__ import annotations

import sys
from pathlib import Path

from .harness import code_turn, install_extension, open_host, run_turn, write_script

CROSSING = '''
from dataclasses import dataclass

import vis_core.extension as vis
from vis_core.model.handles import HandleMethod, HostHandle


class QuotaError(Exception):
    """The extension's own error class: the host does not load it."""


@dataclass(frozen=True)
class Count:
    value: int


class Counter(HostHandle):
    """A handle that lives in the extension's worker."""

    __vis_methods__ = ("bump",)
    __vis_activities__ = {"bump": HandleMethod("mutation", "Bump counter")}

    def __init__(self) -> None:
        self.value = 0

    def bump(self) -> Count:
        self.value += 1
        return Count(self.value)


def fail() -> None:
    """Always over quota."""
    raise QuotaError("over quota")


def counter() -> Counter:
    """A fresh counter."""
    return Counter()


def peek(counter: Counter) -> int:
    """How far a counter went."""
    return counter.value if isinstance(counter, Counter) else -1


def _tally(ctx):
    return vis.ok("counted", data={"count": Count(7)})


vis.register_extension(vis.Extension(
    name="crossing", alias="crossing", description="Values of every kind cross back.",
    symbols=[vis.Symbol(fail), vis.Symbol(counter), vis.Symbol(peek)],
    slash_commands=[vis.SlashCommand("tally", _tally)],
))
'''

CROSS_CODE = """
import json
try:
    await fail()
except Exception as exc:
    error = [type(exc).__name__, str(exc)]
c = await counter()
await c.bump()
second = await c.bump()
seen = await peek(c)
print(json.dumps({"error": error, "count": second.value, "seen": seen}))
"""


async def test_errors_and_handles_of_an_extension_cross_without_its_module(
    vis_home: Path, workspace: Path, script_path: Path
) -> None:
    install_extension(vis_home, "crossing", CROSSING)
    write_script(script_path, code_turn(CROSS_CODE))
    host = await open_host(workspace, script_path)
    try:
        outcome = await run_turn(host)
        session = host.registry.live_session(outcome.ended.session_id)
        tally = await host.commands.run(session, "/tally")  # data of its own class: a record
        assert tally.ok and tally.data["count"].value == 7, tally
    finally:
        await host.close()
    printed = outcome.printed()
    assert printed["error"][1].endswith("over quota") and "QuotaError" in "".join(printed["error"])
    assert printed["count"] == 2  # both bumps ran on the one counter in the worker
    assert printed["seen"] == 2  # passed back to a tool, the handle is the counter itself
    assert outcome.tools().count("counter.bump") == 2
    # the host read all of it without the extension's module
    assert [name for name in sys.modules if name.startswith("vis_ext_user_crossing")] == []
