"""Waiting for the picture, not for a time: the screen is done changing."""

from __future__ import annotations

from typing import Any

from textual.pilot import Pilot

TRIES = 500  # 10 s at most: a picture that never settles fails instead of hanging


async def drawn(pilot: Pilot[Any]) -> None:
    """Return once every pending message is handled and the screen draws the same picture
    (text and styles) twice in a row, 20 ms apart; fails if it keeps changing."""
    last: object = None
    for _ in range(TRIES):
        await pilot.pause()
        picture = pilot.app.screen._compositor.render_strips()
        if picture == last:
            return
        last = picture
        await pilot.pause(0.02)
    raise AssertionError("the screen kept changing")
