"""SVG snapshots of the Settings screen: nested rows, secrets, a load error, the search filter."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any

from cursors import steady_cursors
from settle import drawn
from textual.app import App
from textual.pilot import Pilot

from vis_core.frontend.panels import SettingsPanel
from vis_core.host import Host, HostOptions
from vis_core.paths import VisPaths
from vis_tui.screens.settings import SettingsScreen

WORKSPACE = Path("/tmp/vis-snapshots/project")
FIXTURES = Path(__file__).parents[1] / "tests" / "settings" / "fixtures"
BROKEN = '''"""Fails on line 4."""
import vis_core.extension as vis

raise RuntimeError("broken on purpose")
'''


class SettingsSnapshotApp(App[None]):
    """Opens a real Host over fixture extensions, then the Settings screen."""

    def __init__(self) -> None:
        super().__init__()
        self.host: Host | None = None
        self.ready = asyncio.Event()

    async def on_mount(self) -> None:
        folder = VisPaths.from_env().extensions_dir
        folder.mkdir(parents=True, exist_ok=True)
        shutil.copy(FIXTURES / "reports.py", folder / "reports.py")
        (folder / "broken.py").write_text(BROKEN, encoding="utf-8")
        self.host = await Host.open(HostOptions(workspace=WORKSPACE))
        await self.host.settings.set("reports_server_token", "snapshot-secret", "global")
        await self.host.settings.set("report_details", True, "global")
        await self.push_screen(
            SettingsScreen(SettingsPanel(self.host.settings), reload=self.host.reload)
        )
        self.ready.set()

    async def on_unmount(self) -> None:
        if self.host is not None:
            await self.host.close()


def _search(text: str) -> Any:
    async def run(pilot: Pilot[Any]) -> None:
        await _settled(pilot)
        await pilot.press("slash")
        steady_cursors(pilot.app.screen)  # shown for good by the next key, whatever the load
        await pilot.press(*text)
        await drawn(pilot)

    return run


async def _settled(pilot: Pilot[Any]) -> None:
    app = pilot.app
    assert isinstance(app, SettingsSnapshotApp)
    await asyncio.wait_for(app.ready.wait(), 20)
    screen = app.screen
    assert isinstance(screen, SettingsScreen)
    await asyncio.wait_for(screen.loaded.wait(), 20)
    await drawn(pilot)


def test_settings_tree_with_nested_rows(snap_compare: Any) -> None:
    assert snap_compare(SettingsSnapshotApp(), terminal_size=(100, 84), run_before=_settled)


def test_settings_secret_rows_saved_and_not_set(snap_compare: Any) -> None:
    assert snap_compare(SettingsSnapshotApp(), terminal_size=(100, 24), run_before=_search("token"))


def test_settings_extension_with_load_error(snap_compare: Any) -> None:
    assert snap_compare(
        SettingsSnapshotApp(), terminal_size=(100, 24), run_before=_search("broken")
    )


def test_settings_search_filter(snap_compare: Any) -> None:
    assert snap_compare(
        SettingsSnapshotApp(), terminal_size=(100, 24), run_before=_search("detail")
    )
