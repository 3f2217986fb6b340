"""SVG snapshots: a long paste folded in its turn, a secret's editor opened on the last
line of Settings at 45 rows (scrolled fully into view), and the help screen's commands, each
described in its own column."""

from __future__ import annotations

import asyncio
from typing import Any

from cursors import steady_cursors
from sample_turns import turn_events
from test_settings_snapshots import SettingsSnapshotApp, _settled
from test_snapshots import _answers_rendered, _app, _ready
from textual.pilot import Pilot

from vis_tui.app import VisApp
from vis_tui.screens.help import HelpScreen
from vis_tui.screens.settings import SettingsScreen
from vis_tui.widgets.settings_editors import InlineTextEditor
from vis_tui.widgets.settings_rows import SettingRow

PASTED = "explain this log:\n" + "\n".join(
    f"2026-12-01 12:00:{n % 60:02d} worker {n} ok" for n in range(500)
)


async def _pasted(pilot: Pilot[Any]) -> None:
    await _ready(pilot)
    app = pilot.app
    assert isinstance(app, VisApp) and app.session is not None
    events = turn_events(app.session.id, "t1", PASTED, "Every worker reported ok.", [])
    app.main.feed_events(events[:-1])
    app.main.feed_events([events[-1]])  # TurnEnded
    await _answers_rendered(pilot)


def test_a_500_line_paste_is_one_folded_entry(snap_compare: Any) -> None:
    assert snap_compare(_app(), terminal_size=(100, 20), run_before=_pasted)


async def _secret_editor_on_the_last_line(pilot: Pilot[Any]) -> None:
    await _settled(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, SettingsScreen)
    row = screen.row("reports_server_token")
    for _ in range(len(list(screen.query(SettingRow))) + 10):
        if screen.focused is row:
            break
        await pilot.press("down")
    await pilot.press("enter")
    for _ in range(200):
        if screen.query(InlineTextEditor):
            break
        await asyncio.sleep(0.01)
    await pilot.pause()
    steady_cursors(screen)
    await pilot.press(*"typed-not-blind")
    await pilot.pause()


def test_a_secret_editor_opens_in_view_at_45_rows(snap_compare: Any) -> None:
    assert snap_compare(
        SettingsSnapshotApp(), terminal_size=(90, 45), run_before=_secret_editor_on_the_last_line
    )


async def _help_at_its_commands(pilot: Pilot[Any]) -> None:
    await _ready(pilot)
    await pilot.press("f1")
    assert isinstance(pilot.app.screen, HelpScreen)
    await pilot.pause()
    await pilot.press("end")
    await pilot.pause()


def test_help_describes_each_command_beside_it(snap_compare: Any) -> None:
    assert snap_compare(_app(), terminal_size=(100, 40), run_before=_help_at_its_commands)
