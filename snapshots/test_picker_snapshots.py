"""SVG snapshots of the pickers: /model, @ file completion and the sessions picker."""

from __future__ import annotations

import asyncio
import itertools
import time
import types
import uuid
from pathlib import Path
from typing import Any

import pytest
from pilot_keys import type_keys
from settle import drawn
from textual.pilot import Pilot

from vis_core.host import HostOptions
from vis_tui.app import VisApp
from vis_tui.screens.picker import PickerScreen
from vis_tui.screens.sessions import SessionsScreen

WORKSPACE = Path("/tmp/vis-snapshots/project")


def _app() -> VisApp:
    script = WORKSPACE / "script.json"
    script.write_text('[{"text": "unused"}]', encoding="utf-8")
    return VisApp(HostOptions(workspace=WORKSPACE, provider="scripted", script=script), frozen=True)


async def _ready(pilot: Pilot[Any]) -> None:
    app = pilot.app
    assert isinstance(app, VisApp)
    await asyncio.wait_for(app.ready.wait(), 20)
    await pilot.pause()


async def _until(pilot: Pilot[Any], condition: Any) -> None:
    for _ in range(500):
        if condition():
            return
        await pilot.pause(0.02)
    raise AssertionError("the app did not reach the expected state in time")


def test_model_picker(snap_compare: Any) -> None:
    async def run(pilot: Pilot[Any]) -> None:
        await _ready(pilot)
        await type_keys(pilot, *"/model", "enter")
        await _until(pilot, lambda: isinstance(pilot.app.screen, PickerScreen))
        await type_keys(pilot, *"claude-s")
        await drawn(pilot)

    assert snap_compare(_app(), terminal_size=(100, 30), run_before=run)


def test_model_picker_with_only_loose_candidates(snap_compare: Any) -> None:
    async def run(pilot: Pilot[Any]) -> None:
        await _ready(pilot)
        await type_keys(pilot, *"/model", "enter")
        await _until(pilot, lambda: isinstance(pilot.app.screen, PickerScreen))
        await type_keys(pilot, *"anthropic/claude-opus-5")
        await drawn(pilot)

    assert snap_compare(_app(), terminal_size=(100, 30), run_before=run)


def test_login_provider_picker_in_a_scripted_session(snap_compare: Any) -> None:
    """/login offers a local OpenAI-compatible server and says the scripted session switches."""

    async def run(pilot: Pilot[Any]) -> None:
        await _ready(pilot)
        await type_keys(pilot, *"/login", "enter")
        await _until(pilot, lambda: isinstance(pilot.app.screen, PickerScreen))
        await drawn(pilot)

    assert snap_compare(_app(), terminal_size=(110, 30), run_before=run)


def test_at_file_completion(snap_compare: Any) -> None:
    (WORKSPACE / "src").mkdir()
    for name in ("app.py", "auth.py", "settings.py"):
        (WORKSPACE / "src" / name).write_text("x = 1\n", encoding="utf-8")
    (WORKSPACE / "README.md").write_text("# project\n", encoding="utf-8")
    (WORKSPACE / "build").mkdir()
    (WORKSPACE / "build" / "app.py").write_text("generated\n", encoding="utf-8")
    (WORKSPACE / ".gitignore").write_text("build/\n", encoding="utf-8")

    async def run(pilot: Pilot[Any]) -> None:
        await _ready(pilot)
        await type_keys(pilot, *"explain @ap")
        app = pilot.app
        assert isinstance(app, VisApp)
        await _until(pilot, lambda: app.main.completion.display)
        await drawn(pilot)

    assert snap_compare(_app(), terminal_size=(100, 24), run_before=run)


def test_sessions_picker(snap_compare: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from tui.support import store_session

    from vis_core.store import Store
    from vis_core.store import sessions as stored

    numbers = itertools.count(1)
    fixed = types.SimpleNamespace(
        uuid4=lambda: uuid.UUID(f"{next(numbers) * 0x1111_1111:08x}" + "0" * 24)
    )
    monkeypatch.setattr(stored, "uuid", fixed)  # stable session ids in the picture
    ids = [
        store_session(WORKSPACE, ["fix the login test", "and the logout one"], title="Login tests"),
        store_session(WORKSPACE, ["why is CI slow?"], title="CI timing"),
        store_session(WORKSPACE, ["rename the config module"], title="Config rename"),
    ]
    now = time.time()
    with Store(Path("/tmp/vis-snapshots/home/vis.db")) as store, store._db.write("age") as conn:
        for age, session_id in zip((7200, 86400 * 2, 600), ids, strict=True):
            conn.execute("UPDATE sessions SET modified = ? WHERE id = ?", (now - age, session_id))

    async def run(pilot: Pilot[Any]) -> None:
        await _ready(pilot)
        await pilot.press("ctrl+x", "s")
        await _until(pilot, lambda: isinstance(pilot.app.screen, SessionsScreen))
        await drawn(pilot)

    assert snap_compare(_app(), terminal_size=(100, 24), run_before=run)
