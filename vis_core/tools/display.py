"""How tool targets appear in Activity headlines: workspace-relative, home as ``~/…``."""

from __future__ import annotations

import os
import re
from pathlib import Path


def shorten_path(path: str | os.PathLike[str], workspace: str | os.PathLike[str]) -> str:
    """``path`` relative to ``workspace`` when inside it, ``~/…`` when under home, else absolute."""
    text = os.fspath(path)
    if not text:
        return "."
    target = Path(text)
    root = Path(workspace)
    if not target.is_absolute():
        return target.as_posix()
    try:
        relative = target.relative_to(root)
    except ValueError:
        relative = None
    if relative is not None:
        return relative.as_posix() or "."
    home = Path.home()
    try:
        under_home = target.relative_to(home).as_posix()
    except ValueError:
        return target.as_posix()
    return "~" if under_home == "." else "~/" + under_home


def plural(count: int, word: str, words: str | None = None) -> str:
    """``1 match`` / ``3 matches`` with thousands separators."""
    return f"{count:,} {word if count == 1 else (words or word + 's')}"


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
