"""What tests/closed_apps.py assumes about the installed Textual: fails when it changes."""

from __future__ import annotations

import asyncio
import gc
import weakref
from pathlib import Path

import closed_apps

from .conftest import Harness


async def _run_and_close(workspace: Path) -> list[weakref.ref[object]]:
    app = Harness(workspace)
    async with app.run_test() as pilot:
        await pilot.pause()
        return [weakref.ref(widget._styles_cache) for widget in app.main.walk_children()]


def test_a_closed_apps_widgets_are_freed_once_released(workspace: Path) -> None:
    """Its own event loop, ended before the checks: the test's loop keeps nothing alive."""
    caches = asyncio.run(_run_and_close(workspace))
    gc.collect()
    assert any(ref() is not None for ref in caches)  # Textual's lru_cache on a method
    closed_apps.release()
    gc.collect()
    assert all(ref() is None for ref in caches)
