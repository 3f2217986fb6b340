"""A project extension's settings: global means the whole project, so its global and project
values are one value, in the project's settings file, read once and said once."""

from __future__ import annotations

import tomllib
from pathlib import Path

from textual.content import Content
from textual.widgets import Static

from vis_core.extension.settings_decl import SettingScope
from vis_core.paths import TrustStore, VisPaths
from vis_core.settings.rows import row_state
from vis_core.settings.tree import build_tree
from vis_core.settings.values import Source

from .support import SettingsApp, open_host

REPORTS = '''
import vis_core.extension as vis

font = vis.Setting(id="report_font", label="Font", type="string", default="mono")
server = vis.Setting(
    id="report_server", label="Server", type="string", default="a", scopes=["global", "project"]
)


def report() -> str:
    """A report."""
    return f"{font.value()} {server.value()}"


vis.register_extension(vis.Extension(
    name="reports", alias="reports", description="Reports.", settings=[font, server],
    symbols=[vis.Symbol(report)],
))
'''


def _project_extension(workspace: Path) -> None:
    folder = workspace / ".vis" / "extensions"
    folder.mkdir(parents=True)
    (folder / "reports.py").write_text(REPORTS, encoding="utf-8")
    TrustStore(VisPaths.from_env()).trust(workspace)


async def test_a_project_extensions_global_value_is_not_said_ignored(workspace: Path) -> None:
    """`vis settings set report_font serif` (global-only, the default) saved to the project's
    file and applied, but `get` and `list` warned "the project value of setting 'report_font'
    is ignored: it can be set only at 'global' scope": the one value was read at both scopes.
    It is read once now, at the scope the setting takes; a Settings row shows it set at
    either scope, both of which save it there."""
    _project_extension(workspace)
    host = await open_host(workspace)
    try:
        settings = host.settings
        await settings.set("report_font", "serif", "global")
        await settings.set("report_server", "b", "global")
        saved = tomllib.loads((workspace / ".vis" / "settings.toml").read_text())
        assert saved["settings"] == {"report_font": "serif", "report_server": "b"}
        font, server = settings.resolve("report_font"), settings.resolve("report_server")
        assert (font.value, font.source, font.ignored) == ("serif", Source.GLOBAL, ())
        assert (server.value, server.source, server.ignored) == ("b", Source.PROJECT, ())
        tree = build_tree(settings.extensions)
        for setting_id in ("report_font", "report_server"):
            node = tree.find(setting_id)
            assert node is not None
            for scope in (SettingScope.GLOBAL, SettingScope.PROJECT):
                assert row_state(settings, node, scope, None).overridden_here, (setting_id, scope)
    finally:
        await host.close()


async def test_the_global_scope_line_names_the_project_file_of_project_extensions(
    workspace: Path,
) -> None:
    """The Global scope line said only config.toml, where a project extension's value is
    not saved."""
    _project_extension(workspace)
    host = await open_host(workspace)
    app = SettingsApp(host)
    async with app.run_test(size=(120, 45)) as pilot:
        screen = await app.loaded()
        await pilot.pause()
        content = screen.query_one("#settings-scope", Static).render()
        assert isinstance(content, Content)
        assert content.plain.startswith(
            "Editing at Global: every project on this computer (config.toml); a project "
            "extension's: this project (.vis/settings.toml)"
        ), content.plain
    await host.close()
