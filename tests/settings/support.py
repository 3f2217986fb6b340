"""Helpers for settings tests: extension folders from fixtures, a Host, and a Settings app."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from textual.app import App

from vis_core.extension.settings_decl import SettingScope
from vis_core.frontend.panels import SettingsPanel
from vis_core.host import Host, HostOptions
from vis_core.paths import VisPaths
from vis_tui.screens.settings import Reloader, SettingsScreen

FIXTURES = Path(__file__).parent / "fixtures"
BROKEN = '''"""Fails on line 4."""
import vis_core.extension as vis

raise RuntimeError("broken on purpose")
'''


def install(folder: Path, *names: str) -> Path:
    """Copy fixture entry files into ``folder`` (``broken`` writes a failing one)."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        if name == "broken":
            (folder / "broken.py").write_text(BROKEN, encoding="utf-8")
        else:
            shutil.copy(FIXTURES / f"{name}.py", folder / f"{name}.py")
    return folder


def user_extensions(*names: str) -> Path:
    return install(VisPaths.from_env().extensions_dir, *names)


async def open_host(workspace: Path, script: Path | None = None, **options: Any) -> Host:
    return await Host.open(
        HostOptions(
            workspace=workspace,
            provider="scripted" if script else None,
            script=script,
            **options,
        )
    )


class SettingsApp(App[None]):
    """Only the Settings screen, over a real Host's settings service."""

    def __init__(
        self,
        host: Host,
        session_id: str | None = None,
        scope: SettingScope | None = None,
        reload: Reloader | None = None,
    ) -> None:
        super().__init__()
        self.host = host
        self.session_id = session_id
        self.scope = scope or SettingScope.GLOBAL
        self.reload = reload or host.reload

    async def on_mount(self) -> None:
        await self.push_screen(
            SettingsScreen(
                SettingsPanel(self.host.settings),
                session_id=self.session_id,
                reload=self.reload,
                scope=self.scope,
            )
        )

    async def loaded(self) -> SettingsScreen:
        """The Settings screen once every row is mounted."""
        screen = self.settings_screen
        await screen.loaded.wait()
        return screen

    @property
    def settings_screen(self) -> SettingsScreen:
        screen = self.screen
        assert isinstance(screen, SettingsScreen)
        return screen


async def click_reload(pilot: Any, screen: SettingsScreen) -> None:
    """Click Reload, below Vis's rows, as a person does: scrolled to once the screen is laid
    out (scrolled before, it stops a row short and the click lands on the key hints)."""
    await pilot.pause()
    screen.query_one("#settings-reload").scroll_visible(animate=False)
    await pilot.pause()
    await pilot.click("#settings-reload")
