"""How tool targets appear in Activity headlines: workspace-relative, home as ``~/…``."""

from __future__ import annotations

import os
from pathlib import Path

MAX_SUMMARY_CHARS = 200


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
        return "~/" + target.relative_to(home).as_posix()
    except ValueError:
        return target.as_posix()


def one_line(text: str, limit: int = MAX_SUMMARY_CHARS) -> str:
    """``text`` folded to one line of at most ``limit`` characters (``…`` marks a cut)."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    return flat[: limit - 1] + "…"


def plural(count: int, word: str, words: str | None = None) -> str:
    """``1 match`` / ``3 matches`` with thousands separators."""
    return f"{count:,} {word if count == 1 else (words or word + 's')}"
