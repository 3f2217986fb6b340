"""Typing into a Textual app in a Pilot test: a run of characters is one wait, not one per key."""

from __future__ import annotations

import unicodedata
from typing import Any

from textual import events
from textual.keys import KEY_NAME_REPLACEMENTS
from textual.pilot import Pilot


async def type_keys(pilot: Pilot[Any], *keys: str) -> None:
    """``pilot.press(*keys)``, but each run of single characters is posted at once and then
    settled: ``Pilot.press`` waits at least 40 ms after every key, so typing a sentence took
    a second. Named keys (``enter``, ``escape``, ``ctrl+c``) go through ``Pilot.press``."""
    run: list[str] = []
    for key in keys:
        if len(key) == 1 and key.isprintable():
            run.append(key)
            continue
        await _type(pilot, run)
        run = []
        await pilot.press(key)
    await _type(pilot, run)


async def _type(pilot: Pilot[Any], characters: list[str]) -> None:
    """The characters as the key events a terminal sends, once what came before is handled
    (a screen just pushed focuses its input), then every message they caused handled (the
    app forwards each key to the focused widget: two rounds)."""
    if not characters:
        return
    app = pilot.app
    await pilot.pause()
    for character in characters:
        event = events.Key(_key_name(character), character)
        event.set_sender(app)
        app.post_message(event)
    await pilot.pause()
    await pilot.pause()


def _key_name(character: str) -> str:
    """Textual's name of the key that types ``character`` (``@`` is ``at``, `` `` is ``space``)."""
    if character.isalnum():
        return character
    try:
        name = unicodedata.name(character).lower().replace("-", "_").replace(" ", "_")
    except ValueError:
        return character
    return KEY_NAME_REPLACEMENTS.get(name, name)
