"""A key of a settings file Vis does not read (a misspelt setting, a setting outside the table
it is read from) is said where the person looks: the start notes of `vis run`, `vis settings
list`, the Settings screen; the tables Vis reads are not."""

from __future__ import annotations

import json
from pathlib import Path

from cli_support import script
from cli_support import vis as _vis
from textual.widgets import Static

from .support import SettingsApp, open_host

CONFIG = """max_iteration = "10"

[extensions]
disabled = []
setings = {}

[extensions.settings]
another_projects_setting = 1

[providers.local]
kind = "openai"
base_url = "http://127.0.0.1:9/v1"

[models."local/m1"]
input_limit = 1000
"""


def test_a_misspelt_key_of_config_toml_is_said_at_start_and_in_the_listing(
    workspace: Path, vis_home: Path, tmp_path: Path
) -> None:
    config = vis_home / "config.toml"
    config.write_text(CONFIG, encoding="utf-8")
    ok = script(tmp_path, [{"text": "ok"}])
    run = _vis("run", "--provider", "scripted", "--script", str(ok), "hi", cwd=workspace,
               env_home=vis_home)  # fmt: skip
    assert run.returncode == 0, run.stderr
    [note] = [line for line in run.stderr.splitlines() if "Vis ignores" in line]
    assert note.startswith(f"vis: {config}: Vis ignores max_iteration, extensions.setings (")
    listing = _vis("settings", "list", cwd=workspace, env_home=vis_home)
    assert f"# {config}: Vis ignores max_iteration, extensions.setings (" in listing.stdout
    rows = _vis("settings", "list", "--json", cwd=workspace, env_home=vis_home).stdout
    said = [row["ignored"] for row in map(json.loads, rows.splitlines()) if "id" not in row]
    assert said == [note.removeprefix("vis: ")]


def test_a_trusted_projects_key_outside_settings_or_misspelt_is_said(
    workspace: Path, vis_home: Path
) -> None:
    """`.vis/settings.toml` is read only under [settings]: a setting written at the top, as
    in config.toml, is said rather than silently ignored; so is a name no setting has (in
    vis.yml's toggles too). An untrusted project's values are said as skipped instead."""
    (workspace / ".vis").mkdir()
    settings_file = workspace / ".vis" / "settings.toml"
    settings_file.write_text(
        'max_iterations = "10"\n\n[settings]\nmax_iteratons = "25"\njail = true\n',
        encoding="utf-8",
    )
    (workspace / "vis.yml").write_text("toggles:\n  jial: true\n", encoding="utf-8")
    untrusted = _vis("settings", "list", cwd=workspace, env_home=vis_home).stdout
    assert "Vis ignores" not in untrusted
    assert _vis("trust", str(workspace), cwd=workspace, env_home=vis_home).returncode == 0
    listing = _vis("settings", "list", cwd=workspace, env_home=vis_home).stdout
    assert f"# {settings_file}: Vis ignores max_iterations: a project's settings" in listing
    assert f"# {settings_file}: Vis ignores max_iteratons: no setting has that name" in listing
    assert f"# {workspace / 'vis.yml'}: Vis ignores jial: no setting has that name" in listing
    assert "jail = true  (project" in listing  # the table's own values are read


async def test_the_settings_screen_says_the_keys_vis_ignores(
    workspace: Path, vis_home: Path
) -> None:
    (vis_home / "config.toml").write_text('max_iteration = "10"\n', encoding="utf-8")
    host = await open_host(workspace)
    try:
        app = SettingsApp(host)
        async with app.run_test(size=(120, 60)):
            screen = await app.loaded()
            notes = screen.query_one("#settings-notes", Static)
            assert notes.display and "Vis ignores max_iteration" in str(notes.render())
    finally:
        await host.close()
    (vis_home / "config.toml").write_text('max_iterations = "10"\n', encoding="utf-8")
    host = await open_host(workspace)
    try:
        app = SettingsApp(host)
        async with app.run_test(size=(120, 60)):
            screen = await app.loaded()
            assert not screen.query_one("#settings-notes", Static).display
    finally:
        await host.close()
