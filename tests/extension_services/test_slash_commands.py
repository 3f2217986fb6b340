"""Slash commands from a fixture extension, run in the session that sent them."""

from __future__ import annotations

from pathlib import Path

from vis_core.events import Notification
from vis_core.model.command import BUILTIN_COMMANDS

GREETER = """
import vis_core.extension as vis

def greet(ctx):
    vis.state["greeted"] = vis.state.get("greeted", 0) + 1
    vis.notify(f"greeted {ctx['raw']}", "success")
    if not ctx["args"]:
        return vis.err("Nobody to greet", "Usage: `/greet NAME`")
    root = str(vis.workspace_root())
    return vis.ok(f"Hello {ctx['args'][0]}", "**Welcome** to Vis.", {"ctx": ctx, "root": root})

vis.register_extension(vis.Extension(
    name="greeter",
    description="Greets people.",
    slash_commands=[
        vis.SlashCommand("greet", greet, doc="Greet someone.", usage="/greet NAME",
                         saveable=True),
        vis.SlashCommand("plain", lambda ctx: "Just a title"),
        vis.SlashCommand("broken", lambda ctx: 1 / 0),
    ],
))
"""


async def test_extension_command_runs_in_the_sending_session(extension, scripted, workspace: Path):
    extension("greeter", GREETER)
    run = await scripted([])
    session = await run.session()
    result = await run.host.commands.run(session, '/greet Alice "Bob Smith"')
    assert result.ok and result.title == "Hello Alice"
    assert result.markdown == "**Hello Alice**\n\n**Welcome** to Vis."
    assert result.data["ctx"] == {
        "channel": "tui",
        "args": ["Alice", "Bob Smith"],
        "raw": 'Alice "Bob Smith"',
        "session_id": session.id,
        "workspace_root": str(workspace),
        "project_root": str(workspace),
    }
    assert result.data["root"] == str(workspace)
    notes = [e for e in run.events if isinstance(e, Notification)]
    assert [(n.session_id, n.text, n.kind) for n in notes] == [
        (session.id, 'greeted Alice "Bob Smith"', "success")
    ]
    assert run.state("greeter") == {"greeted": 1}

    empty = await run.host.commands.run(session, "/greet")
    assert not empty.ok and empty.title == "Nobody to greet" and "Usage" in empty.body
    plain = await run.host.commands.run(session, "/plain")
    assert plain.ok and plain.title == "Just a title" and plain.body is None
    broken = await run.host.commands.run(session, "/broken")
    assert not broken.ok and broken.title == "/broken failed"
    assert "ZeroDivisionError" in broken.body


async def test_builtins_are_registered_like_extension_commands(extension, scripted):
    extension("greeter", GREETER)
    run = await scripted([])
    infos = {info.name: info for info in run.host.commands.all()}
    for name in ("help", "new", "sessions", "settings", "model", "reload", "goal", "quit"):
        assert infos[name].owner == "vis" and infos[name].doc
    assert infos["goal"].saveable and not infos["reload"].saveable
    assert infos["greet"].owner == "greeter" and infos["greet"].saveable
    assert infos["greet"].usage == "/greet NAME" and infos["plain"].usage == "/plain"
    session = await run.session()
    listing = await run.host.commands.run(session, "/help")
    assert "`/greet NAME`: Greet someone. (greeter)" in listing.body
    # the names the loader keeps from extensions are the real ones
    assert {i.name for i in infos.values() if i.owner == "vis"} == BUILTIN_COMMANDS


READER = """
import vis_core.extension as vis

def peek(ctx):
    return vis.ok("Peeked", str(vis.tools.cat(ctx["args"][0])))

vis.register_extension(vis.Extension(
    name="reader",
    description="Reads through the session's tools.",
    slash_commands=[
        vis.SlashCommand("peek", peek),
        vis.SlashCommand("count", lambda ctx: 3),
        vis.SlashCommand("nothing", lambda ctx: None),
    ],
))
"""


async def test_a_command_uses_the_sessions_tools_and_must_return_a_result(
    extension, scripted, workspace: Path
):
    (workspace / "notes.txt").write_text("remember the milk\n")
    extension("reader", READER)
    run = await scripted([])
    session = await run.session()
    peeked = await run.host.commands.run(session, "/peek notes.txt")
    assert peeked.ok, peeked.body
    assert "1: remember the milk" in peeked.body  # the session's own cat, numbered lines
    for name, kind in (("count", "an int"), ("nothing", "None")):
        wrong = await run.host.commands.run(session, f"/{name}")
        assert not wrong.ok and wrong.title == f"/{name} returned {kind}, which Vis cannot show"
        assert f"/{name} (extension 'reader')" in wrong.body and "vis.ok" in wrong.body
