"""Cursors that do not blink: a picture taken half a second after the last key (a loaded
machine) would otherwise catch the cursor either shown or hidden."""

from __future__ import annotations

from textual.screen import Screen
from textual.widgets import Input


def steady_cursors(screen: Screen[object]) -> None:
    """Stop the blink of every input on ``screen``; the next key shows the cursor for good."""
    for field in screen.query(Input):
        field.cursor_blink = False
