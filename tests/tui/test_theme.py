"""The theme setting colours the app: at start and as soon as it is saved."""

from __future__ import annotations

from pathlib import Path

from .support import started, until, vis_app


async def test_theme_setting_applies_at_start_and_on_save(workspace: Path, vis_home: Path) -> None:
    (vis_home / "config.toml").write_text('theme = "nord"\n', encoding="utf-8")
    app = vis_app(workspace)
    async with app.run_test(size=(100, 30)) as pilot:
        await started(app, pilot)
        assert app.theme == "nord"
        await app.core.settings.set("theme", "gruvbox", "global")
        await until(pilot, lambda: app.theme == "gruvbox")
        await app.core.settings.reset("theme", "global")
        await until(pilot, lambda: app.theme == "textual-dark")
