"""Images the person pastes: a dropped file's path (quoted, backslash-escaped or a file://
URL, as terminals write them) and the clipboard's image through the platform's tool, found
outside the working folder (a checkout's ``./xclip`` never runs)."""

from __future__ import annotations

import os
import shlex
import stat
import subprocess
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from urllib.parse import unquote, urlsplit

from vis_core.frontend import host_program
from vis_core.model.images import (
    IMAGE_TYPES,
    MAX_SOURCE_BYTES,
    ImageRefused,
    PersonImage,
    checked_image,
    is_image_name,
)

CLIPBOARD_SECONDS = 5.0
NO_CLIPBOARD_TOOL = (
    "Ctrl+V pastes an image with wl-paste (Wayland), xclip (X11) or pngpaste/osascript "
    "(macOS), and none of them is available here, so only text is pasted. Install one, or "
    "attach the image as @path or by pasting (dropping) its file."
)


class NoClipboardTool(LookupError):
    """No program that reads an image from the clipboard is installed."""


def _one_path(token: str) -> Path | None:
    if token.startswith("file://"):
        parts = urlsplit(token)
        if parts.netloc not in ("", "localhost"):
            return None
        token = unquote(parts.path)
    path = Path(token).expanduser()
    return path if path.is_absolute() else None


def dropped_image_paths(text: str) -> list[Path] | None:
    """The image files a paste names, when it is nothing but paths of existing image files
    (one or more, as a terminal writes a drag and drop); None for any other text."""
    if not text.strip() or len(text) > 10_000:
        return None
    try:
        tokens = shlex.split(text)
    except ValueError:  # an unclosed quote: not a path
        return None
    paths: list[Path] = []
    for token in tokens:
        path = _one_path(token)
        if path is None or not is_image_name(path.name) or not path.is_file():
            return None
        paths.append(path)
    return paths or None


def read_dropped_image(path: Path) -> PersonImage:
    """An image file the person pasted or dropped: their own file, wherever they can read
    it (the workspace rule is for ``@`` paths, which a repository can suggest), checked."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)  # a pipe: never waited on
        with os.fdopen(fd, "rb") as file:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise ImageRefused(f"{path} is not a regular file")
            data = file.read(MAX_SOURCE_BYTES + 1)
    except OSError as exc:
        raise ImageRefused(f"{path} could not be read: {exc.strerror or exc}") from None
    return checked_image(path.name, data)


def _run(argv: list[str]) -> bytes:
    done = subprocess.run(argv, capture_output=True, timeout=CLIPBOARD_SECONDS, check=False)
    return done.stdout if done.returncode == 0 else b""


def _first_image_type(listed: bytes) -> str | None:
    offered = listed.decode("utf-8", "replace").split()
    return next((media for media in IMAGE_TYPES if media in offered), None)


def clipboard_tool(name: str) -> str | None:
    """The absolute path of the clipboard program ``name``, looked up only in ``PATH``'s
    absolute folders outside the working folder: an empty or ``.`` entry never picks a
    checkout's ``./xclip``."""
    return host_program(name, (Path.cwd(),))


def clipboard_image(
    environ: Mapping[str, str] = os.environ,
    which: Callable[[str], str | None] = clipboard_tool,
    platform: str = sys.platform,
) -> bytes | None:
    """The clipboard's image bytes (None: it holds no image); :class:`NoClipboardTool` when
    no tool that reads it is installed. Each tool runs by the absolute path ``which`` gives."""
    if platform == "darwin":
        if pngpaste := which("pngpaste"):
            return _run([pngpaste, "-"]) or None
        if osascript := which("osascript"):
            out = _run([osascript, "-e", "the clipboard as «class PNGf»"]).strip()
            hex_digits = out.removeprefix("«data PNGf".encode()).removesuffix("»".encode())
            try:
                return bytes.fromhex(hex_digits.decode("ascii")) or None
            except ValueError:  # no image on the clipboard: osascript said something else
                return None
        raise NoClipboardTool(NO_CLIPBOARD_TOOL)
    if environ.get("WAYLAND_DISPLAY") and (wl_paste := which("wl-paste")):
        media = _first_image_type(_run([wl_paste, "--list-types"]))
        return _run([wl_paste, "--no-newline", "--type", media]) or None if media else None
    if environ.get("DISPLAY") and (xclip := which("xclip")):
        targets = _run([xclip, "-selection", "clipboard", "-t", "TARGETS", "-o"])
        media = _first_image_type(targets)
        if media is None:
            return None
        return _run([xclip, "-selection", "clipboard", "-t", media, "-o"]) or None
    raise NoClipboardTool(NO_CLIPBOARD_TOOL)
