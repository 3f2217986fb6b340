"""Session models from the ``model`` setting, untrusted projects' ignored values, shipped guides."""

from __future__ import annotations

from pathlib import Path

import pytest

from vis_core.extension.settings_decl import SettingScope
from vis_core.paths import TrustStore, VisPaths
from vis_core.settings.values import Source
from vis_tui.widgets.settings_rows import ExtensionHeader, SettingRow

from .support import SettingsApp, open_host

CONFIG = """\
model = "local/global-model"
jail = true

[providers.local]
kind = "openai"
base_url = "http://127.0.0.1:9/v1"
api_key_env = ""
"""


def _config() -> None:
    VisPaths.from_env().ensure().config_file.write_text(CONFIG, encoding="utf-8")


def _project(workspace: Path, *, trusted: bool) -> None:
    (workspace / "vis.yml").write_text(
        "toggles:\n  jail: false\n  model: local/project-model\n", encoding="utf-8"
    )
    if trusted:
        TrustStore(VisPaths.from_env()).trust(workspace)


async def test_project_group_and_session_models_choose_the_session_model(workspace: Path) -> None:
    _config()
    _project(workspace, trusted=True)
    host = await open_host(workspace)
    try:
        assert host.models.label == "local/project-model"
        first = await host.new_session()
        assert first.model.label == "local/project-model" and first.model.provider is not None
        await host.settings.set("model", "local/session-model", "session", session_id=first.id)
        assert first.model.label == "local/session-model"  # switched at once
        second = await host.new_session()
        assert second.model.label == "local/project-model"  # other sessions keep theirs
        await host.settings.move_to_group(second.id, "team")
        await host.settings.set("model", "local/group-model", "group", session_id=second.id)
        await first.close()
        reopened = await host.open_session(first.id)
        assert reopened.model.label == "local/session-model"
        assert (await host.open_session(second.id)).model.label == "local/group-model"
        (workspace / "vis.yml").write_text("toggles:\n  jail: false\n", encoding="utf-8")
        await host.settings.reread()  # what /reload does
        assert host.models.model_for(None) is not None
        assert host.models.model_for(None).model == "global-model"  # type: ignore[union-attr]
        await host.settings.reset("model", "global")  # config.toml read at startup no longer counts
        assert host.models.model_for(None) is None
    finally:
        await host.close()


async def test_model_flag_and_vis_model_win_over_every_setting_level(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _config()
    _project(workspace, trusted=True)
    host = await open_host(workspace, toggles=("model=local/toggle-model",))
    try:
        session = await host.new_session()
        await host.settings.set("model", "local/session-model", "session", session_id=session.id)
        assert host.models.model_of_session(session.id).label == "local/toggle-model"
        monkeypatch.setenv("VIS_MODEL", "local/env-model")
        assert host.models.model_of_session(session.id).label == "local/env-model"
    finally:
        await host.close()
    host = await open_host(workspace, model="local/flag-model")
    try:
        assert host.models.label == "local/flag-model"
    finally:
        await host.close()


async def test_a_bad_model_value_names_its_scope(workspace: Path) -> None:
    _config()
    host = await open_host(workspace)
    try:
        session = await host.new_session()
        with pytest.raises(ValueError, match="setting 'model' takes provider/model"):
            await host.settings.set("model", "no-slash", "session", session_id=session.id)
        host.store.set_override("session", session.id, "model", "no-slash")  # saved before
        await host.close_session(session)  # opened again: it reads the value
        session = await host.open_session(session.id)
        assert session.model.provider is None
        assert "the session value of setting 'model' ('no-slash')" in (session.model.problem or "")
    finally:
        await host.close()


async def test_an_untrusted_project_cannot_turn_the_jail_off_or_change_the_model(
    workspace: Path,
) -> None:
    _config()
    _project(workspace, trusted=False)
    host = await open_host(workspace)
    try:
        assert host.settings.get("jail", None) is True
        assert host.models.label == "local/global-model"
        session = await host.new_session()
        assert session.model.label == "local/global-model"
        resolution = host.settings.resolve("jail", session.id)
        assert resolution.source is Source.GLOBAL
        assert any("not trusted; run `vis trust" in why for why in resolution.ignored)
        notes = "\n".join(host.startup_notes())
        root = host.space.project_root
        assert f"project {root} is not trusted, so Vis skipped its " in notes
        assert "vis.yml (sets jail, model);" in notes
        with pytest.raises(ValueError, match="setting 'jail' is ignored at project scope until"):
            await host.settings.set("jail", False, "project")
        with pytest.raises(ValueError, match="'max_iterations' is ignored at project scope"):
            await host.settings.set("max_iterations", "10", "project")  # no project value counts
        assert not (workspace / ".vis" / "settings.toml").exists()
        # Global scope, session values and the command line are the person's own: they count.
        await host.settings.set("jail", False, "session", session_id=session.id)
        assert host.settings.get("jail", None, session.id) is False
    finally:
        await host.close()
    TrustStore(VisPaths.from_env()).trust(workspace)
    host = await open_host(workspace)
    try:
        assert host.settings.get("jail", None) is False
        assert host.models.label == "local/project-model"
        assert not any("not trusted" in note for note in host.startup_notes())
    finally:
        await host.close()


async def test_the_settings_row_explains_an_ignored_project_value(workspace: Path) -> None:
    _config()
    _project(workspace, trusted=False)
    host = await open_host(workspace)
    app = SettingsApp(host, scope=SettingScope.PROJECT)
    async with app.run_test(size=(100, 60)) as pilot:
        screen = await app.loaded()
        jail = screen.row("jail")
        assert not jail.state.editable
        assert "until you trust this project" in (jail.state.reason or "")
        text = str(jail.render())
        assert "Cannot change here: setting 'jail' is ignored at project scope" in text
        assert "The project value of setting 'jail' is ignored: the project is not" in text
        jail.focus()
        await pilot.press("space")
        await pilot.pause()
        assert host.settings.get("jail", None) is True
        assert isinstance(screen.row("max_iterations"), SettingRow)
        assert not screen.row("max_iterations").state.editable  # no project value counts
    await host.close()


async def test_an_extension_group_shows_its_packaged_guides_and_skills(workspace: Path) -> None:
    folder = VisPaths.from_env().extensions_dir / "helper"
    (folder / "guides").mkdir(parents=True)
    (folder / "skills" / "release").mkdir(parents=True)
    (folder / "__init__.py").write_text(
        "import vis_core.extension as vis\n"
        'vis.register_extension(vis.Extension(name="helper", description="Helps."))\n',
        encoding="utf-8",
    )
    (folder / "guides" / "setup.md").write_text("# Set it up\n\nSteps.\n", encoding="utf-8")
    (folder / "skills" / "release" / "SKILL.md").write_text("# Release\n", encoding="utf-8")
    host = await open_host(workspace)
    app = SettingsApp(host)
    async with app.run_test(size=(100, 60)):
        screen = await app.loaded()
        header = next(h for h in screen.query(ExtensionHeader) if h.group.name == "helper")
        assert header.group.guide_names("guide") == ("helper.setup",)
        assert header.group.guide_names("skill") == ("helper.release",)
        assert "Guides: helper.setup  Skills: helper.release" in str(header.render())
        todo = next(h for h in screen.query(ExtensionHeader) if h.group.name == "todo")
        assert todo.group.guides == () and "Guides" not in str(todo.render())
    await host.close()
