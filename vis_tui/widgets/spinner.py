"""The spinner's frames, and whether a widget's app freezes them (snapshot runs)."""

from __future__ import annotations

from textual.widget import Widget

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"


def is_frozen(widget: Widget) -> bool:
    """Snapshot runs freeze spinners and clocks (``VisApp(frozen=True)``)."""
    return bool(getattr(widget.app, "frozen", False))
