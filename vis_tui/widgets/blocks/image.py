"""Image blocks drawn in the terminal (kitty graphics, Sixel or half blocks) when first shown."""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from functools import partial
from pathlib import Path
from typing import Any

from textual.containers import Vertical
from textual.content import Content
from textual.events import Resize
from textual.widget import Widget
from textual.widgets import Static
from textual.worker import Worker, WorkerState

from vis_core.model.activity import ActivityImage
from vis_core.model.images import DECODERS, MAX_SOURCE_PIXELS
from vis_tui.widgets.blocks.registry import BlockContext
from vis_tui.widgets.paths import PathChip

MAX_ROWS = 20
GRAPHICS_ENV = "VIS_GRAPHICS"
DEFAULT_CELL = (10, 20)  # pixels per cell when the terminal does not say (and in tests)


class GraphicsMode(StrEnum):
    """How images reach the screen."""

    TGP = "tgp"  # kitty's Terminal Graphics Protocol
    SIXEL = "sixel"
    HALFCELL = "halfcell"  # coloured ▀ cells: any colour terminal, and tests/snapshots
    OFF = "off"


_SIXEL_PROGRAMS = frozenset({"WezTerm", "iTerm.app", "mlterm"})


@dataclass(frozen=True)
class Detected:
    """The mode to use, or why images are not shown (``reason`` when ``mode`` is OFF)."""

    mode: GraphicsMode
    reason: str = ""


def detect_graphics(environ: Mapping[str, str], *, is_tty: bool, deterministic: bool) -> Detected:
    """The graphics mode for this terminal from its environment (no terminal queries).

    ``deterministic`` (tests, snapshots, headless runs) always gives half blocks; ``VIS_GRAPHICS``
    (tgp, sixel, halfcell or off) overrides what the environment suggests.
    """
    forced = environ.get(GRAPHICS_ENV, "").strip().lower()
    if forced:
        if forced not in set(GraphicsMode):
            choices = ", ".join(GraphicsMode)
            return Detected(
                GraphicsMode.OFF, f"{GRAPHICS_ENV}={forced} is not one of {choices}; fix it"
            )
        if forced == GraphicsMode.OFF:
            return Detected(GraphicsMode.OFF, f"images are turned off by {GRAPHICS_ENV}=off")
        return Detected(GraphicsMode(forced))
    if deterministic:
        return Detected(GraphicsMode.HALFCELL)
    term = environ.get("TERM", "").lower()
    if not is_tty or term in ("", "dumb"):
        return Detected(
            GraphicsMode.OFF,
            f"this terminal cannot show images (set {GRAPHICS_ENV}=halfcell to try)",
        )
    if "kitty" in term or "KITTY_WINDOW_ID" in environ:
        return Detected(GraphicsMode.TGP)
    program = environ.get("TERM_PROGRAM", "")
    if (
        program in _SIXEL_PROGRAMS
        or term.startswith(("foot", "mlterm"))
        or "sixel" in term
        or "KONSOLE_VERSION" in environ
    ):
        return Detected(GraphicsMode.SIXEL)
    return Detected(GraphicsMode.HALFCELL)


def fit_cells(
    pixels: tuple[int, int], cell: tuple[int, int], max_cols: int, max_rows: int = MAX_ROWS
) -> tuple[int, int]:
    """The image's size in cells: natural size, scaled down (keeping its shape) to fit."""
    width, height = pixels
    cell_w, cell_h = cell
    if width <= 0 or height <= 0 or max_cols <= 0 or max_rows <= 0:
        return 0, 0
    cols, rows = width / cell_w, height / cell_h
    scale = min(1.0, max_cols / cols, max_rows / rows)
    return max(1, round(cols * scale)), max(1, round(rows * scale))


def cell_pixels() -> tuple[int, int]:
    """Pixels per terminal cell from the tty's window size, else the VT340 default."""
    try:
        import fcntl
        import struct
        import termios

        stream = sys.__stdout__
        if stream is None or not stream.isatty():
            return DEFAULT_CELL
        packed = fcntl.ioctl(stream.fileno(), termios.TIOCGWINSZ, b"\0" * 8)
        rows, cols, width, height = struct.unpack("HHHH", packed)
    except (ImportError, OSError, ValueError):
        return DEFAULT_CELL
    if not (rows and cols and width and height):
        return DEFAULT_CELL
    return max(1, width // cols), max(1, height // rows)


def resolve_image(block: ActivityImage, context: BlockContext) -> Path | str:
    """The image file for ``block`` (a stored attachment, else a path), or why there is none."""
    name = block.attachment
    if context.attachments is not None:
        stored = context.attachments(name)
        if stored is not None:
            if stored.is_file():
                return stored
            return f"attachment {name} has no file at {stored}"
    path = Path(name).expanduser()
    if not path.is_absolute() and context.workspace is not None:
        path = Path(context.workspace) / path
    if path.is_file():
        return path
    return f"not found: no attachment or file named {name}"


def load_picture(path: Path, limit: tuple[int, int]) -> tuple[tuple[int, int], Any]:
    """The image's own size and a copy no larger than ``limit`` pixels (runs in a thread);
    only a PNG, JPEG, GIF or WebP file is decoded (an EPS ran Ghostscript, by name)."""
    from PIL import Image as PILImage

    with PILImage.open(path, formats=DECODERS) as opened:
        natural = opened.size
        if natural[0] * natural[1] > MAX_SOURCE_PIXELS:  # a small file can hold a huge picture
            raise ValueError(f"{natural[0]}×{natural[1]} pixels, too many to show")
        opened.draft("RGB", limit)  # JPEG decodes straight at a smaller scale
        picture = opened.convert(
            "RGBA" if "A" in opened.getbands() or "transparency" in opened.info else "RGB"
        )
    picture.thumbnail(limit)
    return natural, picture


_WIDGETS: dict[GraphicsMode, type[Widget]] = {}


def image_widget_class(mode: GraphicsMode) -> type[Widget]:
    """The textual-image widget for ``mode``, imported on first use.

    textual-image asks the terminal about its graphics when first imported; once Textual
    reads stdin those answers would arrive as key presses, so the import runs with
    ``sys.__stdout__`` hidden (it then asks nothing); Vis chooses the mode itself.
    """
    if mode in _WIDGETS:
        return _WIDGETS[mode]
    if "textual_image.widget" not in sys.modules:
        real = sys.__stdout__
        sys.__stdout__ = io.StringIO()  # type: ignore[misc]
        try:
            import textual_image.widget  # noqa: F401
        finally:
            sys.__stdout__ = real  # type: ignore[misc]
    import textual_image.widget as ti

    classes: dict[GraphicsMode, type[Widget]] = {
        GraphicsMode.TGP: ti.TGPImage,
        GraphicsMode.SIXEL: ti.SixelImage,
        GraphicsMode.HALFCELL: ti.HalfcellImage,
    }
    _WIDGETS.update(classes)
    return classes[mode]


def _deterministic(widget: Widget) -> bool:
    app = widget.app
    return bool(getattr(app, "frozen", False)) or app.is_headless


class ImageBlock(Vertical):
    """A pressable caption chip, then the image, or a line saying why it is not shown."""

    DEFAULT_CSS = """
    ImageBlock { height: auto; width: 1fr; }
    ImageBlock > .image-reason { color: $text-muted; height: auto; }
    """

    def __init__(self, block: ActivityImage, context: BlockContext) -> None:
        super().__init__(classes="media-image-block")
        self.block = block
        self.context = context
        self.reason: str | None = None
        self.image: Widget | None = None
        self.source: Path | None = None
        self._mode = GraphicsMode.OFF
        self._pixels = (0, 0)
        self._cell = DEFAULT_CELL

    def compose(self) -> Any:
        caption = f" — {self.block.caption}" if self.block.caption else ""
        chip = PathChip(self.block.attachment, f"[image] {self.block.attachment}{caption}")
        chip.add_class("media-image")
        yield chip

    def on_mount(self) -> None:
        deterministic = _deterministic(self)
        detected = detect_graphics(
            os.environ,
            is_tty=bool(sys.__stdout__ and sys.__stdout__.isatty()),
            deterministic=deterministic,
        )
        found = resolve_image(self.block, self.context)
        if isinstance(found, str):
            self._show_reason(found)
            return
        if detected.mode is GraphicsMode.OFF:
            self._show_reason(detected.reason)
            return
        self.source = found
        self._mode = detected.mode
        self._cell = DEFAULT_CELL if deterministic else cell_pixels()
        limit = (max(1, self.app.size.width) * self._cell[0], MAX_ROWS * self._cell[1])
        self.run_worker(
            partial(load_picture, found, limit),
            thread=True,
            group="image-load",
            exit_on_error=False,
        )

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        worker = event.worker
        if worker.group != "image-load" or self.source is None:
            return
        if event.state is WorkerState.ERROR:
            error = worker.error
            self._show_reason(f"{self.source.name} is not an image Vis can read ({error})")
        elif event.state is WorkerState.SUCCESS and worker.result is not None:
            natural, picture = worker.result
            self._pixels = natural
            widget_class = image_widget_class(self._mode)
            self.image = widget_class(picture, classes="image-view")  # type: ignore[call-arg]
            self._size_image(self.size.width or self.app.size.width)
            self.mount(self.image)

    def _show_reason(self, reason: str) -> None:
        self.reason = reason
        self.mount(Static(Content(f"not shown: {reason}"), classes="image-reason"))

    def _size_image(self, width: int) -> None:
        if self.image is None:
            return
        cols, rows = fit_cells(self._pixels, self._cell, max(1, width))
        self.image.styles.width = cols
        self.image.styles.height = rows

    def on_resize(self, event: Resize) -> None:
        if self.image is not None and event.size.width:
            self._size_image(event.size.width)
