"""``vis.tools``: another extension's tool in the model's shape, unknown names, self-calls."""

from __future__ import annotations

from pathlib import Path

import pytest

import vis_core.extension as vis
from vis_core.events import ActivityEnded

from .harness import code_turn, install_extension, open_host, run_turn, write_script

ALPHA = '''
from dataclasses import dataclass

import vis_core.extension as vis


@dataclass(frozen=True)
class Doubled:
    value: int
    note: str


def double(n: int) -> Doubled:
    """Double a number."""
    return Doubled(n * 2, f"twice {n}")


def page() -> dict:
    """A page of results."""
    return {"items": [1, 2], "meta": {"total": 2}}


def explode() -> str:
    """Always fails."""
    raise ValueError("no browser available")


vis.register_extension(vis.Extension(
    name="alpha", description="Doubles numbers.", alias="alpha",
    symbols=[vis.Symbol(double), vis.Symbol(page), vis.Symbol(explode)],
))
'''

BETA = '''
import json

import vis_core.extension as vis


def use() -> str:
    """Call alpha's tools through vis.tools."""
    doubled = vis.tools.alpha.double(n=21)
    same = vis.tools["alpha.double"](4)
    page = vis.tools.alpha.page()
    try:
        doubled.missing
    except AttributeError as exc:
        missing = str(exc)
    return json.dumps({
        "value": doubled.value, "note": doubled["note"], "type": type(doubled).__name__,
        "other": same.value, "total": page.meta.total, "items": page["items"],
        "is_dict": isinstance(page, dict), "missing": missing,
    })


def failures() -> str:
    """Each refused or failed call's error."""
    out = {}
    for key, call in {
        "self": lambda: vis.tools.beta.use(),
        "unknown": lambda: vis.tools.alpha.doubel(2),
        "failed": lambda: vis.tools.alpha.explode(),
    }.items():
        try:
            call()
        except vis.VisToolError as exc:
            out[key] = [type(exc).__name__, isinstance(exc, RuntimeError), str(exc)]
    return json.dumps(out)


def loop() -> str:
    """Calls its own tool through vis.tools, which refuses, and lets the refusal go on."""
    return vis.tools.beta.use()


vis.register_extension(vis.Extension(
    name="beta", description="Uses alpha.", alias="beta",
    symbols=[vis.Symbol(use), vis.Symbol(failures), vis.Symbol(loop)],
))
'''


async def test_tools_call_another_extension_in_the_model_shape(
    vis_home: Path, workspace: Path, script_path: Path
) -> None:
    install_extension(vis_home, "alpha", ALPHA)
    install_extension(vis_home, "beta", BETA)
    write_script(script_path, code_turn("print(await beta.use())", "print(await beta.failures())"))
    host = await open_host(workspace, script_path)
    try:
        outcome = await run_turn(host)
    finally:
        await host.close()

    used = outcome.printed(0)
    assert used["value"] == 42 and used["note"] == "twice 21" and used["other"] == 8
    assert used["type"] == "Doubled"  # a frozen record copy, not alpha's class
    assert used["total"] == 2 and used["items"] == [1, 2] and used["is_dict"] is True
    assert "value" in used["missing"] and "note" in used["missing"]
    # each nested call shows its own Activity in the session, under the Activity of beta.use
    assert outcome.tools().count("double") == 2
    assert "page" in outcome.tools() and "use" in outcome.tools()
    ended = {e.activity.tool: e.activity for e in outcome.events if isinstance(e, ActivityEnded)}
    assert ended["use"].parent_id is None
    assert ended["double"].parent_id == ended["use"].id
    assert ended["page"].parent_id == ended["use"].id

    failures = outcome.printed(1)
    kind, is_runtime, text = failures["self"]
    assert (kind, is_runtime) == ("VisToolError", True)
    assert "own extension 'beta'" in text and "directly" in text
    assert "alpha.double" in failures["unknown"][2]  # similar names are listed
    assert failures["failed"][2] == "ValueError: no browser available"


LOOP = """
try:
    await beta.loop()
except Exception as exc:
    print(type(exc).__name__, "|", exc)
"""


async def test_a_refusal_reaches_the_block_named_once(
    vis_home: Path, workspace: Path, script_path: Path
) -> None:
    """A tool calling itself through vis.tools showed "VisToolError: VisToolError: vis.tools
    refused ..." in the block: the sandbox named the type before a VisToolError's own text."""
    install_extension(vis_home, "alpha", ALPHA)
    install_extension(vis_home, "beta", BETA)
    write_script(script_path, code_turn(LOOP))
    host = await open_host(workspace, script_path)
    try:
        outcome = await run_turn(host)
    finally:
        await host.close()
    (block,) = outcome.blocks
    assert block.stdout.startswith("VisToolError | vis.tools refused beta.use: "), block.stdout


def test_tools_outside_a_session_raise() -> None:
    with pytest.raises(RuntimeError, match="import and call the other package directly"):
        vis.tools.alpha.double(2)


GAMMA = '''
import vis_core.extension as vis


def ping() -> str:
    """Call delta, which tries to call back into gamma."""
    return vis.tools.delta.pong()


def other() -> str:
    """Never reached through delta."""
    return "reached"


vis.register_extension(vis.Extension(
    name="gamma", description="Pings.", alias="gamma",
    symbols=[vis.Symbol(ping), vis.Symbol(other)],
))
'''

DELTA = '''
import vis_core.extension as vis


def pong() -> str:
    """Try to call gamma, which waits on this call."""
    try:
        return vis.tools.gamma.other()
    except vis.VisToolError as exc:
        return str(exc)


vis.register_extension(vis.Extension(
    name="delta", description="Pongs.", alias="delta", symbols=[vis.Symbol(pong)],
))
'''


async def test_a_call_into_an_extension_that_waits_is_refused(
    vis_home: Path, workspace: Path, script_path: Path
) -> None:
    install_extension(vis_home, "gamma", GAMMA)
    install_extension(vis_home, "delta", DELTA)
    write_script(
        script_path,
        code_turn(
            "import json; print(json.dumps(await gamma.ping()))",
            "import json; print(json.dumps(await delta.pong()))",
        ),
    )
    host = await open_host(workspace, script_path)
    try:
        outcome = await run_turn(host)
    finally:
        await host.close()
    assert "extension 'gamma' waits on this call" in outcome.printed(0)
    assert outcome.printed(1) == "reached"  # called directly by the model, delta may call gamma
