"""A failed extension's group shows its error and offers no row: the settings it declared
are not its own (another owner's id) or not known (its declaration was refused)."""

from __future__ import annotations

import json
from pathlib import Path

from cli_support import vis as _vis

from vis_core.paths import TrustStore, VisPaths
from vis_tui.widgets.settings_rows import ExtensionHeader, SettingRow

from .support import SettingsApp, click_reload, open_host

ACME = """import vis_core.extension as vis

vis.register_extension(vis.Extension(
    name="acme", description="Acme.",
    settings=[vis.Setting(id="acme_verbose", label="Verbose", default=False)],
))
"""
DUPLICATE = """import vis_core.extension as vis

s = vis.Setting(id="acme_verbose", label="Dup", default=False)
vis.register_extension(vis.Extension(name="dup", description="Duplicate id.", settings=[s]))
"""
SHADOWS_CAT = '''import vis_core.extension as vis

def cat(path: str) -> str:
    """Shadows the built-in."""
    return path

vis.register_extension(vis.Extension(
    name="clash", description="Clashes.", alias="clash", symbols=[vis.Symbol(cat)],
    settings=[vis.Setting(id="clash_flag", label="Clash flag", default=False)],
))
'''


def _extensions(**files: str) -> None:
    folder = VisPaths.from_env().extensions_dir
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / f"{name}.py").write_text(text, encoding="utf-8")


async def test_a_failed_group_shows_its_error_and_no_row_of_another_owners_setting(
    workspace: Path,
) -> None:
    _extensions(acme=ACME, bad_dup=DUPLICATE, clash=SHADOWS_CAT)
    host = await open_host(workspace)
    app = SettingsApp(host)
    async with app.run_test(size=(100, 60)) as pilot:
        screen = await app.loaded()
        headers = {h.group.name: h for h in screen.query(ExtensionHeader)}
        assert headers["dup"].group.failed and headers["clash"].group.failed
        assert "already declared by extension 'acme'" in (headers["dup"].group.error or "")
        assert "would shadow the built-in 'cat'" in (headers["clash"].group.error or "")
        rows = [(r.section, r.setting_id) for r in screen.query(SettingRow)]
        assert ("ext:acme", "acme_verbose") in rows
        assert not [row for row in rows if row[0] in ("ext:dup", "ext:clash")], rows
        screen.row("acme_verbose").focus()
        await pilot.press("space")
        await pilot.pause()
        assert screen.row("acme_verbose").state.value is True  # acme's own row, acme's value
    await host.close()


def test_vis_settings_lists_a_failed_extensions_error_not_its_settings(
    workspace: Path, vis_home: Path
) -> None:
    _extensions(acme=ACME, bad_dup=DUPLICATE, clash=SHADOWS_CAT)
    listing = _vis("settings", "list", cwd=workspace, env_home=vis_home)
    assert listing.returncode == 0, listing.stderr
    rows = [line for line in listing.stdout.splitlines() if not line.startswith("#")]
    assert [row for row in rows if row.startswith("acme_verbose =")] == [
        "acme_verbose = false  (default; acme)"
    ]
    assert "clash_flag" not in listing.stdout
    assert "# extension dup did not load" in listing.stdout
    listing = _vis("settings", "list", "--json", cwd=workspace, env_home=vis_home)
    rows = [json.loads(line) for line in listing.stdout.splitlines()]
    failed = {row["extension"]: row["error"] for row in rows if "extension" in row}
    assert set(failed) == {"dup", "clash"} and "already declared" in failed["dup"]
    got = _vis("settings", "get", "clash_flag", cwd=workspace, env_home=vis_home)
    assert got.returncode == 2
    assert "extension 'clash', which declares it, did not load" in got.stderr, got.stderr


async def test_reload_after_a_trusted_projects_extension_changed_keeps_its_group_saying_why(
    workspace: Path,
) -> None:
    """The file changed since `vis trust`: Reload skips it, and its group stays, its load
    error saying the trust lapsed and to run `vis trust` (it vanished without a word)."""
    entry = workspace / ".vis" / "extensions" / "acme.py"
    entry.parent.mkdir(parents=True)
    entry.write_text(ACME, encoding="utf-8")
    TrustStore(VisPaths.from_env()).trust(workspace)
    host = await open_host(workspace)
    app = SettingsApp(host)
    async with app.run_test(size=(100, 60)) as pilot:
        screen = await app.loaded()
        assert "acme_verbose" in {r.setting_id for r in screen.query(SettingRow)}
        with entry.open("a", encoding="utf-8") as file:
            file.write("# tweak\n")
        await click_reload(pilot, screen)
        await app.workers.wait_for_complete()
        await pilot.pause()
        header = next(h for h in screen.query(ExtensionHeader) if h.group.name == "acme")
        assert header.group.failed and header.group.tag == "project"
        error = header.group.error or ""
        assert "changed since you trusted it" in error and f"vis trust {workspace}" in error
        shown = str(header.render())  # the header draws the error under the name
        assert "failed to load" in shown and f"vis trust {workspace}" in shown
        assert "acme_verbose" not in {r.setting_id for r in screen.query(SettingRow)}
    await host.close()
