"""Settings through a real Host: vis.yml after /reload, --toggles, on_change, validation."""

from __future__ import annotations

from pathlib import Path

import pytest

from vis_core.extension.context import CallContext, calling
from vis_core.extension.logs import log_file
from vis_core.paths import TrustStore, VisPaths
from vis_core.settings.values import Source

from .support import open_host, user_extensions


def _marker() -> Path:
    """Where the reports fixture's on_change hook writes (next to the entry file)."""
    return VisPaths.from_env().extensions_dir / "steering-mode.txt"


async def test_vis_yml_toggles_apply_after_reload_and_run_on_change(workspace: Path) -> None:
    user_extensions("reports")
    (workspace / "vis.yml").write_text("toggles:\n  report_details: true\n")
    TrustStore(VisPaths.from_env()).trust(workspace)  # project values wait for trust
    host = await open_host(workspace)
    try:
        assert host.settings.get("report_details", None) is True
        (workspace / "vis.yml").write_text(
            "toggles:\n  report_details: false\n  steering_mode: control\n"
        )
        TrustStore(VisPaths.from_env()).trust(workspace)  # the person reviewed the change
        assert host.settings.get("report_details", None) is True  # read after /reload
        await host.commands.run(None, "/reload")
        assert host.settings.get("report_details", None) is False
        assert host.settings.get("steering_mode", None) == "control"
        # the hook of the value /reload found changed ran once, as a save's does
        assert _marker().read_text() == "vibe->control@project\n"
    finally:
        await host.close()


async def test_reload_says_why_the_on_change_of_a_value_it_found_changed_failed(
    workspace: Path,
) -> None:
    user_extensions("reports")
    host = await open_host(workspace)
    try:
        host.paths.config_file.write_text('[extensions.settings]\nsteering_mode = "explode"\n')
        result = await host.commands.run(None, "/reload")  # after a hand edit
    finally:
        await host.close()
    assert " loaded, 0 failed.\n- on_change of setting" in result.body
    assert "on_change of setting 'steering_mode' (reports) failed" in result.body
    assert "the hook refused explode. The value stays saved." in result.body
    assert _marker().read_text() == "vibe->explode@global\n"


async def test_an_extension_switched_off_is_unloaded_by_reload_and_keeps_its_group(
    workspace: Path,
) -> None:
    from vis_core.model.extensions import ExtensionStatus
    from vis_core.settings.tree import build_tree

    user_extensions("reports")
    host = await open_host(workspace)
    try:
        assert host.catalog.loaded.get("reports") is not None
        await host.settings.set_enabled("reports", False)
        assert host.catalog.loaded.get("reports") is not None  # until the next reload
        await host.commands.run(None, "/reload")
        assert host.catalog.loaded.get("reports") is None
        (group,) = [g for g in build_tree(host.catalog.loaded).extensions if g.name == "reports"]
        assert group.status is ExtensionStatus.DISABLED and not group.enabled
        assert group.settings  # its settings still show, to switch it back on
        await host.settings.set_enabled("reports", True)
        await host.commands.run(None, "/reload")
        assert host.catalog.loaded.get("reports") is not None
    finally:
        await host.close()


async def test_a_switched_off_extensions_setting_saves_without_its_on_change(
    workspace: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Saving a setting of an extension switched off (Space on its header in Settings) said
    "Saved / on_change of setting ... failed: LookupError: extension 'reports' is not loaded;
    reload extensions" and logged an ERROR: its code does not run while it is off, so its
    hook is not asked to."""
    user_extensions("reports")
    host = await open_host(workspace)
    try:
        await host.settings.set_enabled("reports", False)
        await host.commands.run(None, "/reload")
        assert host.catalog.loaded.get("reports") is None
        result = await host.settings.set("steering_mode", "control", "global")
        assert result.changed and result.hook_error is None
        assert host.settings.get("steering_mode", None) == "control"
        assert not _marker().exists()
        assert not [r for r in caplog.records if r.levelname == "ERROR"], caplog.text
    finally:
        await host.close()


async def test_command_line_toggles_win_and_refuse_secrets(workspace: Path) -> None:
    user_extensions("reports")
    toggles = (
        "jail=true",
        "report_details=yes",
        "reports_server_token=abc",
        "nope=1",
        "max_iterations=7",
        "broken",
    )
    host = await open_host(workspace, toggles=toggles)
    try:
        session = await host.new_session()
        await host.settings.set("jail", False, "session", session_id=session.id)
        resolution = host.settings.resolve("jail", session.id)
        assert resolution.value is True and resolution.source is Source.COMMAND_LINE
        assert host.settings.get("report_details", None) is True
        assert host.settings.get("reports_server_token", None) == ""
        notes = "\n".join(host.startup_notes())
        assert "--toggles refuses secret setting 'reports_server_token'" in notes
        assert "no setting 'nope'" in notes
        assert "setting 'max_iterations' takes one of" in notes
        assert host.settings.refusal() is not None  # and no turn runs
        assert "'broken' is not ID=VALUE" in notes
    finally:
        await host.close()


async def test_on_change_runs_once_per_effective_change(workspace: Path) -> None:
    user_extensions("reports")
    TrustStore(VisPaths.from_env()).trust(workspace)  # project values wait for trust
    host = await open_host(workspace)
    marker = _marker()
    try:
        result = await host.settings.set("steering_mode", "control", "project")
        assert result.changed and result.hook_error is None
        assert marker.read_text() == "vibe->control@project\n"
        await host.settings.set("steering_mode", "control", "project")  # same: no call
        await host.settings.set("steering_mode", "vibe", "global")  # hidden: no call
        assert marker.read_text() == "vibe->control@project\n"
        await host.settings.reset("steering_mode", "project")
        assert marker.read_text().splitlines()[-1] == "control->vibe@project"
    finally:
        await host.close()


async def test_a_raising_hook_keeps_the_value_and_is_logged(workspace: Path) -> None:
    user_extensions("reports")
    host = await open_host(workspace)
    try:
        result = await host.settings.set("steering_mode", "explode", "global")
        assert result.hook_error is not None
        assert "RuntimeError: the hook refused explode" in result.hook_error
        assert "The value stays saved" in result.hook_error
        assert host.settings.get("steering_mode", None) == "explode"
        logged = log_file(host.paths).read_text(encoding="utf-8")
        assert "on_change of setting 'steering_mode' (reports) failed" in logged
        assert "the hook refused explode" in logged
    finally:
        await host.close()


async def test_strings_and_enums_are_validated_naming_the_setting(workspace: Path) -> None:
    user_extensions("reports")
    host = await open_host(workspace)
    settings = host.settings
    try:
        with pytest.raises(ValueError, match="setting 'reports_server_url' contains a control"):
            await settings.set("reports_server_url", "https://a\nb", "global")
        with pytest.raises(ValueError, match="setting 'reports_server_url' has 4097 characters"):
            await settings.set("reports_server_url", "x" * 4097, "global")
        await settings.set("reports_server_url", "  https://r.example  ", "global")
        assert host.settings.get("reports_server_url", None) == "https://r.example"
        with pytest.raises(ValueError, match=r"setting 'steering_mode' takes one of \['vibe'"):
            await settings.set("steering_mode", "chaos", "global")
        with pytest.raises(ValueError, match="setting 'report_details' takes true or false"):
            await settings.set("report_details", "yes", "global")
        with pytest.raises(KeyError, match="no setting 'missing'"):
            await settings.set("missing", True, "global")
    finally:
        await host.close()


async def test_value_reads_the_callback_session_and_project_level_without_one(
    workspace: Path,
) -> None:
    user_extensions("reports")
    host = await open_host(workspace)
    try:
        ext = host.catalog.loaded.get("reports")
        assert ext is not None
        (setting,) = [s for s in ext.settings if s.id == "report_details"]
        session = await host.new_session()
        await host.settings.set("report_details", True, "session", session_id=session.id)
        context = CallContext(
            session.id, workspace, workspace, owner="reports", runtime=host.runtime
        )
        with calling(context):
            assert setting.value() is True
        unbound = CallContext(None, workspace, workspace, owner="reports", runtime=host.runtime)
        with calling(unbound):
            assert setting.value() is False  # outside a session: project level
    finally:
        await host.close()
    assert setting.value() is False  # outside Vis: the default
