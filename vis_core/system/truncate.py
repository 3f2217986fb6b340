"""Bounding what reaches the model: 50 KB / 2,000 lines, head or tail, full text saved."""

from __future__ import annotations

from pathlib import Path

from vis_core.paths import write_private
from vis_core.system.redaction import redact_text
from vis_core.text_limits import Keep, fit_text, output_path, printable


def save_full_output(text: str, output_dir: Path, label: str) -> Path:
    """Write ``text`` (saved secrets redacted) to a new file in ``output_dir``; its path."""
    path = output_path(output_dir, label)
    return write_private(path, redact_text(text).encode("utf-8", "surrogateescape"))


def fit_output(text: str, output_dir: Path, *, keep: Keep, label: str) -> str:
    """``text`` bounded for the model; when cut, the full text is saved and the note names it."""
    return fit_text(printable(text), keep, lambda full: save_full_output(full, output_dir, label))
