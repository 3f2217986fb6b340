"""What text may reach the model: 50 KB / 2,000 lines, head or tail, printable file names, and
the note that names where the full text was saved. Pure: imports nothing of Vis."""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

MAX_BYTES = 50 * 1024
MAX_LINES = 2000
MAX_SUMMARY_CHARS = 200  # an Activity's one-line summary


class Keep(StrEnum):
    """Which end of a long output matters: reads and searches keep the head, commands the tail."""

    HEAD = "head"
    TAIL = "tail"


@dataclass(frozen=True)
class Truncation:
    """The kept text and how much of the whole it is."""

    text: str
    truncated: bool
    total_lines: int
    total_bytes: int
    shown_lines: int
    shown_bytes: int


_ESCAPED = re.compile("[\udc80-\udcff]")  # a byte that was not UTF-8, as a surrogate escape


def printable(text: str) -> str:
    """``text`` as the model and the screen get it: bytes of a file name that are not UTF-8
    (surrogate escapes) become ``\\xNN`` text instead of breaking the encoder."""
    if _ESCAPED.search(text) is None:  # a Python loop over the characters: 30 ms a MB
        return text
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def one_line(text: str, limit: int = MAX_SUMMARY_CHARS) -> str:
    """``text`` folded to one line of at most ``limit`` characters and twice as many UTF-8
    bytes (a line of wide characters is cut shorter: an Activity's lines hold 512 bytes);
    ``…`` marks a cut."""
    flat = " ".join(text.split())
    if len(flat) > limit:
        flat = flat[: limit - 1] + "…"
    if len(flat.encode("utf-8")) <= 2 * limit:
        return flat
    return flat.encode("utf-8")[: 2 * limit - 3].decode("utf-8", "ignore").rstrip("…") + "…"


def format_size(size: int) -> str:
    """``812 B``, ``50.0 KB``, ``1.5 MB``, ``4.0 GB``."""
    if size < 1024:
        return f"{size} B"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KB"
    if size < 1024**3:
        return f"{size / 1024**2:.1f} MB"
    if size < 1024**4:
        return f"{size / 1024**3:.1f} GB"
    return f"{size / 1024**4:.1f} TB"


def _lines(text: str) -> list[str]:
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
        return [line + "\n" for line in lines]
    return [line + "\n" for line in lines[:-1]] + lines[-1:]


def truncate(
    text: str, keep: Keep = Keep.HEAD, *, max_lines: int = MAX_LINES, max_bytes: int = MAX_BYTES
) -> Truncation:
    """Keep whole lines from one end until ``max_lines`` or ``max_bytes`` is reached."""
    total_bytes = len(text.encode("utf-8"))
    lines = _lines(text)
    if len(lines) <= max_lines and total_bytes <= max_bytes:
        return Truncation(text, False, len(lines), total_bytes, len(lines), total_bytes)
    ordered = lines if keep is Keep.HEAD else list(reversed(lines))
    kept: list[str] = []
    used = 0
    for line in ordered:
        size = len(line.encode("utf-8"))
        if len(kept) >= max_lines or used + size > max_bytes:
            if not kept:  # one giant line: keep a cut of it rather than nothing
                raw = line.encode("utf-8")
                cut = raw[:max_bytes] if keep is Keep.HEAD else raw[-max_bytes:]
                piece = cut.decode("utf-8", errors="ignore")
                kept.append(piece)
                used = len(piece.encode("utf-8"))
            break
        kept.append(line)
        used += size
    if keep is Keep.TAIL:
        kept.reverse()
    return Truncation("".join(kept), True, len(lines), total_bytes, len(kept), used)


def output_path(output_dir: Path, label: str) -> Path:
    """A new file name in ``output_dir`` for a full output labelled ``label``."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    safe = "".join(ch if ch.isalnum() or ch in "-_" else "-" for ch in label)[:40] or "output"
    return output_dir / f"{safe}-{stamp}-{uuid.uuid4().hex[:8]}.txt"


def truncation_note(
    cut: Truncation,
    keep: Keep,
    after: str = "",
    *,
    total_lines: int | None = None,
    total_bytes: int | None = None,
) -> str:
    """The note that says what of an output ``cut`` shows (its first or last lines, by
    ``keep``), then ``after`` (where the full output went); ``total_lines`` and
    ``total_bytes``: the whole output's, when more than ``cut`` saw."""
    which = "first" if keep is Keep.HEAD else "last"
    lines = cut.total_lines if total_lines is None else total_lines
    size = cut.total_bytes if total_bytes is None else total_bytes
    return (
        f"[Output truncated: showing the {which} {cut.shown_lines:,} of {lines:,} lines"
        f" ({format_size(cut.shown_bytes)} of {format_size(size)}).{after}]"
    )


def fit_text(text: str, keep: Keep, save: Callable[[str], Path]) -> str:
    """``text`` bounded for the model; when cut, ``save`` keeps the full text and the note
    names its file (after the text for the head, before it for the tail)."""
    cut = truncate(text, keep)
    if not cut.truncated:
        return text
    note = truncation_note(cut, keep, f" Full output saved to: {save(text)}")
    body = cut.text if cut.text.endswith("\n") or not cut.text else cut.text + "\n"
    return f"{body}\n{note}" if keep is Keep.HEAD else f"{note}\n\n{body}"
