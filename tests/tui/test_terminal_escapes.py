"""Control sequences in model text, tool output and file names are shown, never sent raw."""

from __future__ import annotations

from pathlib import Path

import pytest
from pilot_keys import type_keys
from textual.geometry import Region

from vis_tui.app import VisApp

from .support import started, until, vis_app, write_script

OSC52 = "\x1b]52;c;cm0gLXJmIH4=\x07"
TITLE = "\x1b]0;owned\x07"
CLEAR = "\x1b[2J\x1b[H"
LINK = "\x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\"
HOSTILE = OSC52 + TITLE + CLEAR + LINK


def _painted(app: VisApp) -> str:
    """Every character the screen's widgets paint."""
    text = []
    for widget in app.screen.walk_children(with_self=True):
        if not widget.display or not widget.size.area:
            continue
        width, height = widget.size
        for strip in widget.render_lines(Region(0, 0, width, height)):
            text.extend(segment.text for segment in strip)
    return "".join(text)


async def test_model_text_tool_output_and_file_names_reach_the_screen_as_text(
    workspace: Path, tmp_path: Path
) -> None:
    (workspace / f"name{CLEAR}.txt").write_text(HOSTILE)
    script = write_script(
        tmp_path,
        [
            {"code": f"print({HOSTILE!r})\nprint(await ls('.'))"},
            {"text": f"Answer {HOSTILE} done"},
        ],
    )
    app = vis_app(workspace, script)
    async with app.run_test(size=(120, 50)) as pilot:
        await started(app, pilot)
        await type_keys(pilot, *"go", "enter")
        await until(pilot, lambda: "done" in _painted(app))
        painted = _painted(app)
        assert "\x1b" not in painted and "\x07" not in painted
        assert "␛]52;c;" in painted  # shown, as text


def test_textual_and_rich_text_show_escape_as_a_picture() -> None:
    from rich.text import Text
    from textual.content import Content

    assert Content(f"a{OSC52}b").plain == "a␛]52;c;cm0gLXJmIH4=b"
    assert Text(f"x{CLEAR}\x9b").plain == "x␛[2J␛[H\ufffd"


def test_bidi_controls_are_shown_not_applied() -> None:
    """A checkout's file ``invoice\\u202etxt.exe`` drew as ``invoiceexe.txt`` in the app (the
    right-to-left override was applied): every bidi control (embeddings, overrides,
    isolates, marks) is drawn as a visible picture of the same width, as the CLI shows it."""
    from rich.text import Text
    from textual.content import Content

    for code in (*range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x200E, 0x200F, 0x061C):
        name = f"invoice{chr(code)}txt.exe"
        for plain in (Content(name).plain, Text(name).plain):
            assert chr(code) not in plain and len(plain) == len(name), hex(code)


def test_invisible_characters_are_shown_but_emoji_keep_their_joiners() -> None:
    """Tag characters hid text in the app (``rm`` and `` -rf`` spelt in U+E0020…), and a
    zero-width space split a word no one saw: each character that draws as nothing is drawn
    as a visible picture of the same length, but the zero-width joiner and the variation
    selectors inside emoji (👩‍💻, ❤️) stay."""
    from rich.text import Text
    from textual.content import Content

    hidden = "rm" + "".join(chr(0xE0000 + ord(c)) for c in " -rf")
    for text in (hidden, "zero\u200bwidth", "soft\u00adhyphen", "word\u2060joiner", "\u3164"):
        for plain in (Content(text).plain, Text(text).plain):
            kept = [c for c in text if not c.isascii() and c in plain]
            assert not kept and len(plain) == len(text), repr(plain)
    for emoji in ("👩\u200d💻", "\u2764\ufe0f"):
        assert Content(emoji).plain == emoji and Text(emoji).plain == emoji


def test_variation_selectors_that_select_nothing_are_shown() -> None:
    """A run of variation selectors after ``rm`` (four hidden bits each) drew as nothing: one
    after an ASCII letter or another selector is drawn as a picture of the same length, as
    the CLI shows it by name; those of ❤️ and the keycap 1️⃣ stay."""
    from rich.text import Text
    from textual.content import Content

    text = "rm\ufe0f\ufe0e\ufe01 \u2764\ufe0f 1\ufe0f\u20e3 \u2764\ufe0f\ufe0e"
    shown = "rm\ufffd\ufffd\ufffd \u2764\ufe0f 1\ufe0f\u20e3 \u2764\ufe0f\ufffd"
    assert Content(text).plain == shown and Text(text).plain == shown


async def test_a_stray_selector_in_an_answer_and_a_braille_blank_in_a_name_are_shown(
    workspace: Path, tmp_path: Path
) -> None:
    """The app shows the answer and the file name as ``vis run`` does (see
    tests/test_cli_terminal.py): the selectors after ``rm`` and the name's U+2800."""
    script = write_script(
        tmp_path,
        [
            {"code": "open('a' + chr(0x2800) + '.txt', 'w').close()"},
            {"text": "Run rm\ufe0f\ufe0e now \u2764\ufe0f done"},
        ],
    )
    app = vis_app(workspace, script)
    async with app.run_test(size=(120, 50)) as pilot:
        await started(app, pilot)
        await type_keys(pilot, *"go", "enter")
        await until(pilot, lambda: "done" in _painted(app))
        painted = _painted(app)
        assert "Run rm\ufffd\ufffd now \u2764\ufe0f done" in painted
        assert "a\\u2800.txt" in painted and "\u2800" not in painted


def _links(app: VisApp) -> set[str]:
    """Every hyperlink the screen's widgets hand the terminal."""
    links = set()
    for widget in app.screen.walk_children(with_self=True):
        if not widget.display or not widget.size.area:
            continue
        width, height = widget.size
        for strip in widget.render_lines(Region(0, 0, width, height)):
            links.update(s.style.link for s in strip if s.style is not None and s.style.link)
    return links


async def test_only_web_and_mail_links_reach_the_terminal_as_links(
    workspace: Path, tmp_path: Path
) -> None:
    """A model's link to another scheme would be opened by whatever program the system has
    for it: it shows as text with its address, and the app does not open it either."""
    answer = (
        "See [the docs](https://example.com/docs) or [mail](mailto:a@example.com).\n\n"
        "Then [run it](vscode://evil.ext/install).\n\n[notes](file:///etc/passwd)\n\n"
        "![shot](ssh://host/key.png) done"
    )
    app = vis_app(workspace, write_script(tmp_path, [{"text": answer}]))
    async with app.run_test(size=(160, 40)) as pilot:
        await started(app, pilot)
        await type_keys(pilot, *"go", "enter")
        await until(pilot, lambda: "🌆 shot" in _painted(app))  # drawn, not streamed text
        assert _links(app) == {"https://example.com/docs", "mailto:a@example.com"}
        painted = _painted(app)
        assert "run it (vscode://evil.ext/install)" in painted
        assert "[notes](file:///etc/passwd)" in painted  # markdown-it refuses file: links
        opened: list[str] = []
        app.open_url = lambda url, **_: opened.append(url)  # type: ignore[method-assign]
        app.action_open_link("vscode://evil.ext/install")
        app.action_open_link("https://example.com/docs")
        assert opened == ["https://example.com/docs"]


async def test_a_link_whose_text_reads_as_another_address_shows_its_address(
    workspace: Path, tmp_path: Path
) -> None:
    """``[https://github.com/x](https://evil.example/x)`` drew as ``https://github.com/x``
    alone, in an answer, a Markdown block and an Activity's summary: the real address now
    follows such a link. A link whose text is its address, or no address, is drawn as was."""
    from textual.widgets import Markdown

    from vis_core.model.activity import ActivityMarkdown
    from vis_tui.widgets.blocks import BlockContext
    from vis_tui.widgets.blocks.text import markdown_block
    from vis_tui.widgets.inline import inline_markdown

    answer = (
        "See [https://github.com/x](https://evil.example/x), [github.com/y](https://github.com/y)"
        " and [the docs](https://example.com/docs) or [a@example.com](mailto:b@evil.example)."
    )
    app = vis_app(workspace, write_script(tmp_path, [{"text": answer}]))
    async with app.run_test(size=(160, 40)) as pilot:
        await started(app, pilot)
        await type_keys(pilot, *"go", "enter")
        await until(pilot, lambda: "the docs" in _painted(app))
        block = markdown_block(ActivityMarkdown(answer), BlockContext())
        assert isinstance(block, Markdown)
        await app.main.mount(block)
        await until(pilot, lambda: _painted(app).count("the docs") == 2)
        painted = _painted(app)
        assert painted.count("https://github.com/x (https://evil.example/x)") == 2, painted
        assert painted.count("a@example.com (mailto:b@evil.example)") == 2
        assert "github.com/y (" not in painted and "the docs (" not in painted
    summary = inline_markdown("[https://github.com/x](https://evil.example/x) [a.py](a.py)")
    assert summary.plain == "https://github.com/x (https://evil.example/x) a.py"
    among_words = inline_markdown("[see pypi.org/project/requests](https://evil.example/b)")
    assert among_words.plain == "see pypi.org/project/requests (https://evil.example/b)"


def test_an_address_among_the_words_of_a_link_shows_its_target_but_ordinary_words_do_not() -> None:
    """``[see https://github.com/python/cpython/releases](https://evil.example/a)`` drew as
    its text alone: only a text that was one address counted."""
    from vis_tui.links import disguises

    assert disguises("see https://github.com/python/cpython/releases", "https://evil.example/a")
    assert disguises("pip install from pypi.org/project/requests", "https://evil.example/b")
    assert not disguises("docs at docs.python.org", "https://docs.python.org")
    assert not disguises("e.g. version 1.2.3 of the notes", "https://example.com/notes")


async def test_a_link_in_a_markdown_block_opens_only_a_web_or_mail_address(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A child session's answer is a Markdown block (Textual's Markdown widget), whose link
    click calls the app's open_url itself, not the app's link action: a model's
    [run it](vscode://evil.ext/install) went to the system's handler for that scheme. The
    app's open_url now passes only web and mail addresses on, and says why not."""
    from textual.widgets import Markdown

    log = tmp_path / "opened"
    opener = tmp_path / "bin" / "xdg-open"  # the desktop's opener: writes what it was given
    opener.parent.mkdir()
    opener.write_text(f'#!/bin/sh\necho "$*" >> "{log}"\n', encoding="utf-8")
    opener.chmod(0o755)
    monkeypatch.setenv("PATH", f"{opener.parent}:{Path('/usr/bin')}:{Path('/bin')}")
    monkeypatch.setenv("DISPLAY", ":99")
    monkeypatch.delenv("BROWSER", raising=False)
    app = vis_app(workspace, write_script(tmp_path, [{"text": "ok"}]))
    async with app.run_test(size=(110, 40)) as pilot:
        await started(app, pilot)
        block = Markdown("[run it](vscode://evil.ext/install) [docs](https://example.com/d)")
        await app.main.mount(block)
        for href in ("vscode://evil.ext/install", "https://example.com/d"):
            block.post_message(Markdown.LinkClicked(block, href))
        await until(pilot, lambda: log.exists() and log.read_text().endswith("\n"))
        await pilot.pause()
        assert log.read_text() == "https://example.com/d\n"
        told = [n.message for n in app._notifications]
        assert "Not opened: vscode://evil.ext/install (only web and mail links open)" in told


def test_an_activity_table_s_headers_are_text_not_markup() -> None:
    """An ActivityTable's headers reach the screen as written, as its cells do: a header
    'Job [/]' (Rich read it as a closing tag) ended the app when the row was drawn."""
    from rich.console import Console
    from textual.widgets import Static

    from vis_core.model.activity import ActivityTable
    from vis_tui.widgets.blocks import BlockContext
    from vis_tui.widgets.blocks.table import table_block

    block = table_block(ActivityTable(("Job [/]", "[red]state"), (("a [/]", "b"),)), BlockContext())
    assert isinstance(block, Static)
    console = Console(record=True, width=60)
    console.print(block.content)
    shown = console.export_text()
    assert "Job [/]" in shown and "[red]state" in shown and "a [/]" in shown
