"""Image blocks: drawn from a real PNG when expanded, or a placeholder that says why not."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from PIL import Image as PILImage
from sample_turns import record, turn_events
from textual.widgets import Static

from vis_core.model.activity import ActivityImage, ActivityPresentation, ActivityVideo
from vis_tui.widgets.blocks.image import (
    GraphicsMode,
    ImageBlock,
    detect_graphics,
    fit_cells,
)
from vis_tui.widgets.paths import PathChip

from .support import started, vis_app


def _png(path: Path, size: tuple[int, int]) -> Path:
    picture = PILImage.new("RGB", size, (200, 30, 30))
    picture.paste((30, 30, 200), (0, size[1] // 2, size[0], size[1]))
    picture.save(path, format="PNG")
    return path


def _events(session_id: str, *blocks: object) -> list:
    presentation = ActivityPresentation("Plotted", "1 image", content=tuple(blocks))
    return turn_events(
        session_id, "t1", "plot", "", [record("i1", presentation, session_id=session_id)]
    )


async def _expanded_image(app, pilot, events: list) -> ImageBlock:
    app.feed(events)
    await pilot.pause()
    row = app.main.transcript.turns["t1"].rows["i1"]
    assert not row.query(ImageBlock)  # nothing is loaded while collapsed
    row.focus()
    await pilot.press("enter")
    await _loaded(app, pilot)
    return row.query_one(ImageBlock)


async def _loaded(app, pilot) -> None:
    """Wait for the picture loads; one that fails is expected (its block shows why)."""
    await pilot.pause()
    await asyncio.gather(*(worker.wait() for worker in app.workers), return_exceptions=True)
    await pilot.pause()


async def test_expanded_activity_draws_the_png(harness, workspace: Path) -> None:
    _png(workspace / "plot.png", (200, 100))
    app = harness
    async with app.run_test(size=(100, 40)) as pilot:
        block = await _expanded_image(app, pilot, _events("s", ActivityImage("plot.png", "A plot")))
        assert block.reason is None and block.image is not None
        assert type(block.image).__name__ == "HalfcellImage"  # tests force the stable path
        assert (block.image.size.width, block.image.size.height) == (20, 5)
        chip = block.query_one(PathChip)
        assert str(chip.render()) == "[image] plot.png — A plot"
        screen = app.export_screenshot()
        assert screen.count("▀") >= 20 * 5 - 5  # the half-block cells of the picture


async def test_a_large_image_is_bounded_by_width_and_rows(harness, workspace: Path) -> None:
    big = _png(workspace / "wide.png", (4000, 1000))
    _png(workspace / "tall.png", (300, 3000))
    app = harness
    async with app.run_test(size=(80, 60)) as pilot:
        events = _events("s", ActivityImage(str(big)), ActivityImage("tall.png"))
        await _expanded_image(app, pilot, events)
        wide_block, tall_block = app.main.query(ImageBlock).results(ImageBlock)
        assert wide_block.image is not None and tall_block.image is not None
        wide, high = wide_block.image.size
        assert wide <= wide_block.size.width <= 80 and high == round(wide * 10 / 4000 * 1000 / 20)
        assert tall_block.image.size.height == 20


async def test_missing_attachment_shows_placeholder_with_reason(harness, workspace: Path) -> None:
    (workspace / "notes.png").write_text("not a picture", encoding="utf-8")
    app = harness
    async with app.run_test(size=(100, 40)) as pilot:
        events = _events(
            "s",
            ActivityImage("missing.png", "Build times"),
            ActivityImage("notes.png"),
            ActivityVideo("demo.mp4"),
        )
        await _expanded_image(app, pilot, events)
        missing, unreadable = app.main.query(ImageBlock).results(ImageBlock)
        assert missing.image is None
        assert missing.reason == "not found: no attachment or file named missing.png"
        shown = str(missing.query_one(".image-reason", Static).render())
        assert shown == "not shown: not found: no attachment or file named missing.png"
        assert str(missing.query_one(PathChip).render()) == "[image] missing.png — Build times"
        assert unreadable.reason is not None
        assert unreadable.reason.startswith("notes.png is not an image Vis can read")
        video = app.main.query_one(".media-video", PathChip)
        assert str(video.render()) == "[video] demo.mp4"


async def test_an_eps_named_png_is_not_decoded_by_a_checkouts_ghostscript(
    harness, workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pillow, left to guess a file's format, read an EPS (``attach('shot.png')`` of one, a
    checkout's file an image block names) by running ``gs`` by name off PATH: a checkout's
    ``./gs`` with an empty entry first, else Ghostscript on the model's PostScript, on the
    host. Only PNG, JPEG, GIF and WebP are decoded."""
    planted = tmp_path / "pwned"
    (workspace / "gs").write_text(f'#!/bin/sh\necho "$*" >> "{planted}"\n', encoding="utf-8")
    (workspace / "gs").chmod(0o755)
    (workspace / "shot.png").write_text(
        "%!PS-Adobe-3.0 EPSF-3.0\n%%BoundingBox: 0 0 10 10\nshowpage\n", encoding="utf-8"
    )
    monkeypatch.chdir(workspace)
    monkeypatch.setenv("PATH", f":{Path('/usr/bin')}:{Path('/bin')}")
    app = harness
    async with app.run_test(size=(100, 40)) as pilot:
        block = await _expanded_image(app, pilot, _events("s", ActivityImage("shot.png")))
        assert block.image is None and block.reason is not None
        assert block.reason.startswith("shot.png is not an image Vis can read"), block.reason
    assert not planted.exists(), planted.read_text(encoding="utf-8")


async def test_stored_attachment_resolves_by_filename(workspace: Path) -> None:
    app = vis_app(workspace)
    async with app.run_test(size=(100, 40)) as pilot:
        await started(app, pilot)
        session_id = app.session.id
        stored = _png(workspace.parent / "stored-chart.png", (100, 40))
        app.core._host.store.add_attachment(session_id, "chart.png", "image/png", stored, size=1)
        app.main.feed_events(_events(session_id, ActivityImage("chart.png")))
        await pilot.pause()
        row = app.main.transcript.turns["t1"].rows["i1"]
        row.expanded = True
        await _loaded(app, pilot)
        block = row.query_one(ImageBlock)
        assert block.reason is None and block.image is not None
        assert block.source == stored
        assert (block.image.size.width, block.image.size.height) == (10, 2)


def test_fit_cells_keeps_shape_and_bounds() -> None:
    assert fit_cells((200, 100), (10, 20), 80) == (20, 5)
    assert fit_cells((4000, 1000), (10, 20), 50) == (50, 6)
    assert fit_cells((300, 3000), (10, 20), 80) == (4, 20)
    assert fit_cells((0, 10), (10, 20), 80) == (0, 0)


@pytest.mark.parametrize(
    ("environ", "tty", "mode"),
    [
        ({"TERM": "xterm-kitty"}, True, GraphicsMode.TGP),
        ({"TERM": "xterm-256color", "TERM_PROGRAM": "WezTerm"}, True, GraphicsMode.SIXEL),
        ({"TERM": "foot"}, True, GraphicsMode.SIXEL),
        ({"TERM": "xterm-256color"}, True, GraphicsMode.HALFCELL),
        ({"TERM": "xterm-256color", "VIS_GRAPHICS": "sixel"}, True, GraphicsMode.SIXEL),
        ({"TERM": "dumb"}, True, GraphicsMode.OFF),
        ({"TERM": "xterm-kitty"}, False, GraphicsMode.OFF),
    ],
)
def test_detect_graphics_from_the_environment(
    environ: dict[str, str], tty: bool, mode: GraphicsMode
) -> None:
    assert detect_graphics(environ, is_tty=tty, deterministic=False).mode is mode


def test_detect_graphics_reasons_and_deterministic_path() -> None:
    kitty = {"TERM": "xterm-kitty"}
    assert detect_graphics(kitty, is_tty=True, deterministic=True).mode is GraphicsMode.HALFCELL
    off = detect_graphics({"VIS_GRAPHICS": "off"}, is_tty=True, deterministic=True)
    assert off.mode is GraphicsMode.OFF
    assert off.reason == "images are turned off by VIS_GRAPHICS=off"
    bad = detect_graphics({"VIS_GRAPHICS": "ascii"}, is_tty=True, deterministic=False)
    assert bad.reason == ("VIS_GRAPHICS=ascii is not one of tgp, sixel, halfcell, off; fix it")
    plain = detect_graphics({"TERM": "dumb"}, is_tty=True, deterministic=False)
    assert plain.reason == "this terminal cannot show images (set VIS_GRAPHICS=halfcell to try)"


async def test_turned_off_images_say_so(
    harness, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _png(workspace / "plot.png", (20, 20))
    monkeypatch.setenv("VIS_GRAPHICS", "off")
    app = harness
    async with app.run_test(size=(100, 40)) as pilot:
        block = await _expanded_image(app, pilot, _events("s", ActivityImage("plot.png")))
        assert block.image is None
        assert block.reason == "images are turned off by VIS_GRAPHICS=off"


@pytest.mark.filterwarnings("ignore::PIL.Image.DecompressionBombWarning")
def test_an_image_of_too_many_pixels_is_not_decoded(tmp_path: Path) -> None:
    """A small file can hold a huge picture (a PNG of 12000x12000 zeros is ~150 kB, an image
    ``attach()`` shows): it is refused by its size before a pixel is decoded."""
    import struct
    import zlib

    from vis_tui.widgets.blocks.image import load_picture

    def chunk(kind: bytes, body: bytes) -> bytes:
        crc = zlib.crc32(kind + body) & 0xFFFFFFFF
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", crc)

    header = struct.pack(">IIBBBBB", 12000, 12000, 8, 0, 0, 0, 0)
    data = chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"\x00" * 12001))
    path = tmp_path / "bomb.png"  # one row of data: a decode fails (cut), after allocating
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + data + chunk(b"IEND", b""))
    with pytest.raises(ValueError, match="12000×12000 pixels, too many to show"):
        load_picture(path, (800, 600))
