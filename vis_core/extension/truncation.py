"""Truncation helpers for extension tools: 50 KB / 2,000 lines, head or tail, full text saved.

Tools must bound what they return to the model. Keep the head for reads and search results,
the tail for logs and command output, tell the model what was cut and where the full text is,
and state the limit in the tool's docstring.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from vis_core.extension.runtime import current_runtime
from vis_core.text_limits import Keep, Truncation, fit_text, printable, truncate

DEFAULT_MAX_BYTES = 50 * 1024
DEFAULT_MAX_LINES = 2000
ELLIPSIS = "…"


def truncate_head(
    text: str, *, max_lines: int = DEFAULT_MAX_LINES, max_bytes: int = DEFAULT_MAX_BYTES
) -> Truncation:
    """Keep whole lines from the start (file reads, search results) within both limits."""
    return truncate(text, Keep.HEAD, max_lines=max_lines, max_bytes=max_bytes)


def truncate_tail(
    text: str, *, max_lines: int = DEFAULT_MAX_LINES, max_bytes: int = DEFAULT_MAX_BYTES
) -> Truncation:
    """Keep whole lines from the end (logs, command output) within both limits."""
    return truncate(text, Keep.TAIL, max_lines=max_lines, max_bytes=max_bytes)


def truncate_line(line: str, max_bytes: int = 500) -> str:
    """One line cut to at most ``max_bytes`` UTF-8 bytes, ending with an ellipsis when cut."""
    data = line.encode("utf-8")
    if len(data) <= max_bytes:
        return line
    room = max(0, max_bytes - len(ELLIPSIS.encode("utf-8")))
    return data[:room].decode("utf-8", errors="ignore") + ELLIPSIS


def save_full_output(text: str, label: str = "output") -> Path:
    """Save ``text`` in the session's output folder and return the file's path."""
    return current_runtime().save_output(text, label)


def fit_output(text: str, *, keep: Literal["head", "tail"] = "head", label: str = "output") -> str:
    """``text`` within 2,000 lines / 50 KB; when cut, the full text is saved and a note says
    what was cut and names the file (after the text for ``head``, before it for ``tail``)."""
    if keep not in ("head", "tail"):
        raise ValueError(f"fit_output keep must be 'head' or 'tail', got {keep!r}")
    runtime = current_runtime()
    return fit_text(printable(text), Keep(keep), lambda full: runtime.save_output(full, label))
