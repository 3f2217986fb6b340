"""The person's images in the TUI: a dropped path or Ctrl+V becomes a chip above the prompt
(Backspace at its start removes it), ``@shot.png`` shows one too; the sent image is a row of
the turn, also after a resume; a model without image input refuses and gives the draft back."""

from __future__ import annotations

import html
import re
from pathlib import Path
from urllib.parse import quote

import pytest
from image_files import jpeg, png
from pilot_keys import type_keys
from textual import events

from vis_core.events import ImageAttached
from vis_tui.pasted_images import dropped_image_paths

from .support import seen_after_resume, started, until, vis_app, write_script


def test_a_dropped_path_is_read_as_terminals_write_it(tmp_path: Path) -> None:
    shot = tmp_path / "my shot.png"
    shot.write_bytes(png(2, 2))
    other = tmp_path / "b.jpg"
    other.write_bytes(jpeg(2, 2))
    assert dropped_image_paths(f"'{shot}'") == [shot]
    assert dropped_image_paths(str(shot).replace(" ", "\\ ") + " ") == [shot]
    assert dropped_image_paths(f"file://{quote(str(shot))}\n") == [shot]
    assert dropped_image_paths(f"'{shot}' {other}") == [shot, other]
    assert dropped_image_paths(f"look at {shot}") is None  # words: pasted as text
    assert dropped_image_paths(str(tmp_path / "gone.png")) is None
    assert dropped_image_paths("file://elsewhere.example/x.png") is None


def _screen(app: object) -> str:
    svg = app.export_screenshot()  # type: ignore[attr-defined]
    return html.unescape("".join(re.findall(r"<text[^>]*>(.*?)</text>", svg))).replace("\xa0", " ")


def _chips(app: object) -> str:
    return app.main.chips.text  # type: ignore[attr-defined]


async def test_a_dropped_image_is_a_chip_then_a_row_of_the_turn(
    workspace: Path, tmp_path: Path
) -> None:
    shot = tmp_path / "my shot.png"
    shot.write_bytes(png(4, 3))
    script = write_script(tmp_path, [{"text": "A black picture."}])
    app = vis_app(workspace, script)
    async with app.run_test(size=(110, 40)) as pilot:
        await started(app, pilot)
        prompt = app.main.prompt
        app.post_message(events.Paste(str(shot).replace(" ", "\\ ")))
        await until(pilot, lambda: "my shot.png · PNG · " in _chips(app))
        assert "4×3" in _chips(app) and prompt.text == ""
        await pilot.press("backspace")  # at the start of the prompt: the chip goes
        await until(pilot, lambda: _chips(app) == "")
        app.post_message(events.Paste(f"file://{quote(str(shot))}"))
        await until(pilot, lambda: "my shot.png" in _chips(app))
        await type_keys(pilot, *"what is it?", "enter")
        await until(pilot, lambda: app.main.transcript.last_answer == "A black picture.")
        assert _chips(app) == "" and prompt.images == []
        (request,) = app.session.model.provider.requests  # type: ignore[union-attr]
        assert [i.media_type for i in request.messages[0].images] == ["image/png"]
        screen = _screen(app)
        session_id = app.session.id
        stored = [r.event for r in app.core.history.events(session_id)]
    assert "▣ my shot.png · PNG · " in screen
    assert [e.name for e in stored if isinstance(e, ImageAttached)] == ["my shot.png"]
    shown = await seen_after_resume(workspace, session_id, _screen)
    assert "▣ my shot.png · PNG · " in shown and "4×3" in shown


async def test_ctrl_v_pastes_the_clipboard_image_or_says_once_why_not(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clip = tmp_path / "clip.bin"
    clip.write_bytes(jpeg(32, 16))
    tools = tmp_path / "bin"
    tools.mkdir()
    wl_paste = tools / "wl-paste"
    wl_paste.write_text(
        '#!/bin/sh\nif [ "$1" = --list-types ]; then printf "text/plain\\nimage/jpeg\\n"; '
        f'exit 0; fi\ncat "{clip}"\n',
        encoding="utf-8",
    )
    wl_paste.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tools}:{Path('/usr/bin')}:{Path('/bin')}")
    monkeypatch.setenv("WAYLAND_DISPLAY", "wayland-test")
    monkeypatch.delenv("DISPLAY", raising=False)
    app = vis_app(workspace, write_script(tmp_path, [{"text": "ok"}]))
    async with app.run_test(size=(110, 40)) as pilot:
        await started(app, pilot)
        await pilot.press("ctrl+v")
        await until(pilot, lambda: "clipboard.jpg · JPEG · " in _chips(app))
        assert "32×16" in _chips(app)

        monkeypatch.delenv("WAYLAND_DISPLAY")  # no clipboard tool reachable now
        app.copy_to_clipboard("plain words")
        await pilot.press("ctrl+v")
        await until(pilot, lambda: app.main.prompt.text == "plain words")
        await pilot.press("ctrl+v")
        await until(pilot, lambda: app.main.prompt.text == "plain wordsplain words")
        told = [n.message for n in app._notifications if "wl-paste" in n.message]
    assert len(told) == 1 and "none of them is available here" in told[0]


async def test_an_at_image_shows_a_chip_and_a_model_without_images_refuses(
    workspace: Path, tmp_path: Path, vis_home: Path
) -> None:
    (vis_home / "config.toml").write_text(
        '[models."scripted/script"]\nimages = false\n', encoding="utf-8"
    )
    (workspace / "shot.png").write_bytes(png(2, 2))
    app = vis_app(workspace, write_script(tmp_path, [{"text": "never"}]))
    async with app.run_test(size=(110, 40)) as pilot:
        await started(app, pilot)
        await type_keys(pilot, *"describe @shot.png ")
        await until(pilot, lambda: "@shot.png" in _chips(app))
        await pilot.press("escape", "enter")
        await until(pilot, lambda: "takes no image input" in _screen(app))
        assert app.main.prompt.text == "describe @shot.png "  # the draft comes back
        assert app.session.model.provider.requests == []  # type: ignore[union-attr]
        assert not app.main.transcript.turns


async def test_a_message_queued_behind_a_turn_keeps_its_image(
    workspace: Path, tmp_path: Path
) -> None:
    shot = tmp_path / "later.png"
    shot.write_bytes(png(5, 5))
    # the first turn runs until the test writes ``go``: the second message is typed meanwhile
    hold = {
        "code": "import asyncio, os\nwhile not os.path.exists('go'):\n    await asyncio.sleep(0.01)"
    }
    script = write_script(tmp_path, [hold, {"text": "Went."}, {"text": "Seen."}])
    app = vis_app(workspace, script)
    async with app.run_test(size=(110, 40)) as pilot:
        await started(app, pilot)
        await type_keys(pilot, *"first", "enter")
        await until(pilot, lambda: app.main.turn_running)
        app.post_message(events.Paste(str(shot)))
        await until(pilot, lambda: "later.png" in _chips(app))
        await type_keys(pilot, *"then this", "enter")
        assert app.main.queue == ["then this"] and _chips(app) == ""
        (workspace / "go").touch()
        await until(pilot, lambda: app.main.transcript.last_answer == "Seen.")
        requests = app.session.model.provider.requests  # type: ignore[union-attr]
    first, _, second = requests
    assert first.messages[0].images == ()
    assert second.messages[-1].text.startswith("then this")
    assert [i.media_type for i in second.messages[-1].images] == ["image/png"]


def _toasts(app: object) -> str:
    from textual.widgets._toast import Toast

    return "\n".join(str(toast.render()) for toast in app.screen.query(Toast))  # type: ignore[attr-defined]


async def test_a_dropped_file_name_in_the_refusal_stays_text(
    workspace: Path, tmp_path: Path
) -> None:
    """A dropped file's name reaches the toast that refuses it as text: Textual markup in it
    (a click action such as app.screenshot, which writes a file where it is told, a style, a
    tag it cannot parse) is neither made a link nor applied."""
    names = ['[@click=app.screenshot("x")]shot.png', "[reverse]shot.png", "[@click=(]x.png"]
    app = vis_app(workspace, write_script(tmp_path, [{"text": "ok"}]))
    async with app.run_test(size=(110, 40), notifications=True) as pilot:
        await started(app, pilot)
        for name in names:
            dropped = tmp_path / name
            dropped.write_text("not a picture", encoding="utf-8")
            app.post_message(events.Paste(f"'{dropped}'"))
            shown = f"{name} is not a PNG image"
            await until(pilot, lambda shown=shown: shown in _toasts(app))
        assert app.is_running


async def test_ctrl_v_never_runs_a_checkouts_clipboard_tool(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clip = tmp_path / "clip.bin"
    clip.write_bytes(png(5, 7))
    tools = tmp_path / "bin"
    tools.mkdir()
    (tools / "xclip").write_text(
        '#!/bin/sh\ncase "$*" in *TARGETS*) printf "TARGETS\\nimage/png\\n";; '
        f'*) cat "{clip}";; esac\n',
        encoding="utf-8",
    )
    planted = workspace / "pwned"
    (workspace / "xclip").write_text(f'#!/bin/sh\necho "$*" >> "{planted}"\n', encoding="utf-8")
    for xclip in (tools / "xclip", workspace / "xclip"):
        xclip.chmod(0o755)
    monkeypatch.chdir(workspace)
    # the empty entry first: the working folder is searched before the person's tools
    monkeypatch.setenv("PATH", f":{tools}:{Path('/usr/bin')}:{Path('/bin')}")
    monkeypatch.setenv("DISPLAY", ":99")
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    app = vis_app(workspace, write_script(tmp_path, [{"text": "ok"}]))
    async with app.run_test(size=(110, 40)) as pilot:
        await started(app, pilot)
        await pilot.press("ctrl+v")
        await until(
            pilot, lambda: "clipboard.png · PNG · " in _chips(app), seen=lambda: _chips(app)
        )
        assert "5×7" in _chips(app)
    assert not planted.exists()
