"""A command of a project extension or command file Vis skipped, in the app: the error names
the skipped extensions (or the file), says why (never trusted, or changed since) and what
loads them."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest
from markdown_it import MarkdownIt
from pilot_keys import type_keys

from vis_core.paths import TrustStore, VisPaths
from vis_core.settings.trust_notice import skipped_command
from vis_tui.widgets.system_message import SystemMessage

from .support import started, until, vis_app, write_script

HELLO = """
import vis_core.extension as vis

vis.register_extension(vis.Extension(
    name="hello", description="Says hello.",
    slash_commands=[vis.SlashCommand("hello", lambda ctx: "hello there", doc="Say hello.")],
))
"""
TRAP = "[see](https:__evil.example)**b**.py"  # a checkout's name, shown as it is


@pytest.mark.parametrize("trusted_once", [True, False])
async def test_a_skipped_extensions_command_says_why_it_is_missing(
    workspace: Path, tmp_path: Path, trusted_once: bool
) -> None:
    """ "/hello" of a skipped extension said only "Unknown command /hello"; the person had to
    find the start note to learn why."""
    folder = workspace / ".vis" / "extensions"
    folder.mkdir(parents=True)
    (folder / "hello.py").write_text(HELLO, encoding="utf-8")
    (folder / TRAP).write_text("", encoding="utf-8")
    if trusted_once:
        TrustStore(VisPaths.from_env()).trust(workspace)
        with (folder / "hello.py").open("a", encoding="utf-8") as file:
            file.write("# an edit\n")
    app = vis_app(workspace, write_script(tmp_path, [{"text": "done"}]))
    async with app.run_test(size=(110, 40)) as pilot:
        await started(app, pilot)
        await type_keys(pilot, *"/hello", "enter")
        await until(pilot, lambda: bool(app.main.transcript.query(".error")))
        (error,) = app.main.transcript.query(SystemMessage).filter(".error")
    out = MarkdownIt("commonmark").render(error.source)
    assert "<a " not in out and "<strong>b</strong>" not in out  # the names as text
    shown = html.unescape(re.sub(r"<[^>]+>", "", out)).replace("\n", " ")
    said = skipped_command("hello", workspace, [TRAP, "hello.py"], lapsed=trusted_once)
    assert said in shown, shown


@pytest.mark.parametrize("trusted_once", [True, False])
async def test_a_skipped_command_file_is_named(
    workspace: Path, tmp_path: Path, trusted_once: bool
) -> None:
    """ "/review" of a project's command file Vis skipped said only "Unknown command
    /review"; now the error names the file (in a folder named like a link: as text)."""
    command = workspace / ".claude" / "commands" / "[see](https:__evil.example)" / "review.md"
    command.parent.mkdir(parents=True)
    command.write_text("Review the change.\n", encoding="utf-8")
    if trusted_once:
        TrustStore(VisPaths.from_env()).trust(workspace)
        command.write_text("Review the change, twice.\n", encoding="utf-8")
    app = vis_app(workspace, write_script(tmp_path, [{"text": "done"}]))
    async with app.run_test(size=(110, 40)) as pilot:
        await started(app, pilot)
        await type_keys(pilot, *"/review", "enter")
        await until(pilot, lambda: bool(app.main.transcript.query(".error")))
        (error,) = app.main.transcript.query(SystemMessage).filter(".error")
    out = MarkdownIt("commonmark").render(error.source)
    assert "<a " not in out  # the name as text
    shown = html.unescape(re.sub(r"<[^>]+>", "", out)).replace("\n", " ")
    relative = command.relative_to(workspace).as_posix()
    said = skipped_command("review", workspace, [], lapsed=trusted_once, files=[relative])
    assert said in shown, shown
