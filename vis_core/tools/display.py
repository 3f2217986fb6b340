"""How tool targets appear in Activity headlines: workspace-relative, home as ``~/…``."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path


def shorten_path(
    path: str | os.PathLike[str],
    workspace: str | os.PathLike[str],
    home: str | os.PathLike[str] | None = None,
) -> str:
    """Workspace paths become relative, other paths under home ``~/…``; the rest stay as given."""
    path = os.fspath(path)
    workspace = os.fspath(workspace).rstrip("/") or "/"
    home = os.fspath(home if home is not None else Path.home()).rstrip("/")
    trailing = "/" if path.endswith("/") and len(path) > 1 else ""
    normal = os.path.normpath(path)
    if normal == workspace:
        return "."
    if workspace != "/" and normal.startswith(workspace + "/"):
        return normal[len(workspace) + 1 :] + trailing
    if home and home != "/" and normal == home:
        return "~"
    if home and home != "/" and normal.startswith(home + "/"):
        return "~/" + normal[len(home) + 1 :] + trailing
    return path


def plural(count: int, word: str, words: str | None = None) -> str:
    """``1 match`` / ``3 matches`` with thousands separators."""
    return f"{count:,} {word if count == 1 else (words or word + 's')}"


def age(since: float, now: float | None = None) -> str:
    """How long before ``now`` ``since`` was (both ``time.time()``), in its largest unit:
    ``45s``, ``5m``, ``2h``, ``3d``."""
    seconds = max(0, int((time.time() if now is None else now) - since))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def ago(since: float, now: float | None = None) -> str:
    """``just now`` within a minute, else ``5m ago``, ``2h ago``, ``3d ago``."""
    shown = age(since, now)
    return "just now" if shown.endswith("s") else f"{shown} ago"


_RAW_BYTE = re.compile(r"\\x([0-9a-fA-F]{2})")


def from_printable(text: str) -> str:
    """The file name :func:`printable` showed as ``\\xNN``, back as the real name."""
    if not _RAW_BYTE.search(text):
        return text

    def byte(match: re.Match[str]) -> str:
        value = int(match.group(1), 16)
        return chr(0xDC00 + value) if value >= 0x80 else match.group(0)

    raw = _RAW_BYTE.sub(byte, text)
    try:  # valid only if each \\xNN stood for a byte that is not UTF-8 text
        return os.fsdecode(raw.encode("utf-8", "surrogateescape"))
    except UnicodeError:
        return text
