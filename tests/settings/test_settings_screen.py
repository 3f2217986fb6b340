"""Pilot tests of the Settings screen over a real Host and a scripted session."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from pilot_keys import type_keys

from vis_core.extension.settings_decl import SettingScope
from vis_core.frontend.panels import SettingsPanel
from vis_core.paths import TrustStore, VisPaths
from vis_tui.widgets.settings_editors import InlineTextEditor
from vis_tui.widgets.settings_rows import ExtensionHeader, SettingRow

from .support import BROKEN, SettingsApp, click_reload, open_host, user_extensions

FIXED = '''"""Fixed now."""
import vis_core.extension as vis

vis.register_extension(vis.Extension(
    name="broken", description="Loads after the fix.",
    settings=[vis.Setting(id="broken_fixed", label="Fixed flag", default=True)],
))
'''


def _script(folder: Path, turns: int) -> Path:
    script = folder / "script.json"
    responses = []
    for _ in range(turns):
        responses += [{"code": "print(await reports.report())"}, {"text": "ok"}]
    script.write_text(json.dumps(responses), encoding="utf-8")
    return script


def _outputs(host, session_id: str) -> str:  # type: ignore[no-untyped-def]
    return " ".join(e.data for e in host.store.events(session_id) if e.type == "BlockFinished")


async def test_toggle_a_nested_boolean_at_project_scope_changes_value_in_a_tool(
    workspace: Path, tmp_path: Path
) -> None:
    user_extensions("reports")
    TrustStore(VisPaths.from_env()).trust(workspace)  # project values wait for trust
    host = await open_host(workspace, script=_script(tmp_path, 2))
    try:
        session = await host.new_session()
        await session.submit("first")
        assert "Summary" in _outputs(host, session.id)
        app = SettingsApp(host, session.id, SettingScope.PROJECT)
        async with app.run_test(size=(100, 60)) as pilot:
            screen = await app.loaded()
            row = screen.row("report_details")
            assert row.state.node.depth == 0
            assert screen.row("report_sources").state.node.depth == 2
            row.focus()
            await pilot.press("space")
            await pilot.pause()
            assert row.state.value is True and row.state.overridden_here
        assert "report_details = true" in (workspace / ".vis" / "settings.toml").read_text()
        await session.submit("second")
        assert "Detailed report" in _outputs(host, session.id)
    finally:
        await host.close()


async def test_enter_a_secret_in_a_masked_field(workspace: Path) -> None:
    user_extensions("reports")
    host = await open_host(workspace)
    app = SettingsApp(host)
    async with app.run_test(size=(100, 60)) as pilot:
        screen = await app.loaded()
        row = screen.row("reports_server_token")
        assert "Not set" in str(row.render())
        row.focus()
        await pilot.press("enter")
        await pilot.pause()
        editor = screen.query_one(InlineTextEditor)
        assert editor.password and editor.value == ""
        await type_keys(pilot, *"tok-98765")
        await pilot.press("enter")
        await pilot.pause()
        assert not screen.query(InlineTextEditor)
        rendered = str(screen.row("reports_server_token").render())
        assert "Saved" in rendered and "tok-98765" not in rendered
    assert host.settings.secret_saved("reports_server_token")
    assert (
        "tok-98765" not in host.paths.config_file.read_text()
        if (host.paths.config_file.exists())
        else True
    )
    await host.close()


async def test_a_saved_secret_is_forgotten_only_on_a_second_delete(workspace: Path) -> None:
    user_extensions("reports")
    host = await open_host(workspace)
    await SettingsPanel(host.settings).set(
        "reports_server_token", "tok-12345678", SettingScope.GLOBAL
    )
    app = SettingsApp(host)
    async with app.run_test(size=(100, 60)) as pilot:
        screen = await app.loaded()
        screen.row("reports_server_token").focus()
        await pilot.press("delete")
        await pilot.pause()
        assert host.settings.secret_saved("reports_server_token")  # not yet: asked first
        assert "Saved" in str(screen.row("reports_server_token").render())
        await pilot.press("delete")
        await pilot.pause()
        assert not host.settings.secret_saved("reports_server_token")
        assert "Not set" in str(screen.row("reports_server_token").render())
    await host.close()


async def test_reload_after_fixing_a_broken_extension(workspace: Path) -> None:
    folder = user_extensions("broken")
    host = await open_host(workspace)
    app = SettingsApp(host)
    async with app.run_test(size=(100, 60)) as pilot:
        screen = await app.loaded()
        header = next(h for h in screen.query(ExtensionHeader) if h.group.name == "broken")
        assert header.group.failed and "broken on purpose" in (header.group.error or "")
        (folder / "broken.py").write_text(FIXED, encoding="utf-8")
        await click_reload(pilot, screen)
        await app.workers.wait_for_complete()
        header = next(h for h in screen.query(ExtensionHeader) if h.group.name == "broken")
        assert header.group.enabled and header.group.error is None
        assert screen.row("broken_fixed").state.value is True
    await host.close()
    assert BROKEN  # the fixture text the test started from


async def test_search_filters_and_locked_rows_explain(workspace: Path) -> None:
    user_extensions("reports")
    host = await open_host(workspace)
    app = SettingsApp(host, scope=SettingScope.PROJECT)
    async with app.run_test(size=(100, 60)) as pilot:
        screen = await app.loaded()
        theme = screen.row("theme")
        assert not theme.state.editable and "only at 'global' scope" in (theme.state.reason or "")
        theme.focus()
        await pilot.press("space")
        await pilot.pause()
        assert host.settings.resolve("theme").source.value == "default"
        await pilot.press("slash")
        await type_keys(pilot, *"detail")
        await pilot.pause()
        shown = {r.setting_id for r in screen.query(SettingRow) if r.display}
        assert shown == {"report_details", "report_detail_level"}
        vis_header = screen.query_one("#section-vis")
        assert not vis_header.display  # no core setting matches: no empty "Vis" heading
        # ↓ and Enter reach the hits from the search (the focus stayed in its field: the
        # only hit was 7 Tabs away, past the scope buttons and the headers)
        for key in ("down", "enter"):
            screen.action_search()
            await pilot.press(key)
            await pilot.pause()
            assert isinstance(app.focused, SettingRow), (key, app.focused)
            assert app.focused.setting_id == "report_details"
        await pilot.press("down")
        assert isinstance(app.focused, SettingRow)
        assert app.focused.setting_id == "report_detail_level"
        screen.action_search()
        await pilot.pause()
        await pilot.press(*["backspace"] * len("detail"))
        await pilot.pause()
        assert vis_header.display and theme.display
    await host.close()


async def test_choose_an_enum_at_session_scope_then_reset_it(workspace: Path) -> None:
    user_extensions("reports")
    host = await open_host(workspace)
    try:
        session = await host.new_session()
        result = await host.commands.run(session, "/group team")
        assert result.ok and host.settings.session_group(session.id) == "team"
        app = SettingsApp(host, session.id, SettingScope.SESSION)
        async with app.run_test(size=(100, 60)) as pilot:
            screen = await app.loaded()
            row = screen.row("report_detail_level")
            row.focus()
            await pilot.press("enter")
            await pilot.pause()
            await pilot.press("down", "enter")
            await pilot.pause()
            assert host.settings.resolve("report_detail_level", session.id).value == "full"
            assert screen.row("report_detail_level").state.overridden_here
            screen.row("report_detail_level").focus()
            await pilot.press("delete")
            await pilot.pause()
            resolution = host.settings.resolve("report_detail_level", session.id)
            assert resolution.value == "short" and resolution.source.value == "default"
    finally:
        await host.close()


async def test_switching_an_extension_off_saves_it_and_reloads(workspace: Path) -> None:
    user_extensions("reports")
    host = await open_host(workspace)
    try:
        app = SettingsApp(host)
        async with app.run_test(size=(100, 60)) as pilot:
            screen = await app.loaded()
            next(h for h in screen.query(ExtensionHeader) if h.group.name == "reports").focus()
            await pilot.press("space")
            await app.workers.wait_for_complete()
            header = next(h for h in screen.query(ExtensionHeader) if h.group.name == "reports")
            assert not header.group.enabled
        assert host.settings.global_file.disabled() == {"reports"}
        assert host.catalog.loaded.get("reports") is None
    finally:
        await host.close()


async def test_the_screen_answers_keys_while_a_reload_runs(workspace: Path) -> None:
    """Reload runs every extension's file, which can take a while: the screen goes on
    answering keys meanwhile, and redraws its rows once the reload ends."""
    user_extensions("reports")
    host = await open_host(workspace)
    began, go = asyncio.Event(), asyncio.Event()

    async def slow_reload() -> str:
        began.set()
        await go.wait()
        return await host.reload()

    try:
        app = SettingsApp(host, reload=slow_reload)
        async with app.run_test(size=(100, 60)) as pilot:
            screen = await app.loaded()
            before = screen.row("report_details")
            try:
                await click_reload(pilot, screen)
                await asyncio.wait_for(began.wait(), 20)
                await pilot.press("right_square_bracket")  # the next scope, while it waits
                answered = screen.scope
            finally:
                go.set()
            await app.workers.wait_for_complete()
            assert answered is SettingScope.PROJECT
            assert screen.row("report_details") is not before  # drawn again, at that scope
            assert screen.row("report_details").state.scope is SettingScope.PROJECT
    finally:
        await host.close()


async def test_space_switches_an_extension_off_and_on_again(workspace: Path) -> None:
    """A person folds Vis, walks down to the extension and presses Space: the line says
    'disabled' at once (the reload that follows runs extension code and takes a while), and
    after the reload the same line still has the focus, so Space switches it on again."""
    user_extensions("reports")
    host = await open_host(workspace)
    began, go = asyncio.Event(), asyncio.Event()

    async def slow_reload() -> str:
        began.set()
        await go.wait()
        began.clear()
        go.clear()
        return await host.reload()

    def reports() -> ExtensionHeader:
        return next(h for h in screen.query(ExtensionHeader) if h.group.name == "reports")

    try:
        app = SettingsApp(host, reload=slow_reload)
        async with app.run_test(size=(100, 60)) as pilot:
            screen = await app.loaded()
            await pilot.press("up", "enter")  # onto "Vis", folded
            while app.focused is not reports():
                await pilot.press("down")
            await pilot.press("space")
            await asyncio.wait_for(began.wait(), 20)
            assert "[ ] disabled" in str(reports().render())  # before the reload ends
            go.set()
            await app.workers.wait_for_complete()
            assert host.settings.global_file.disabled() == {"reports"}
            assert app.focused is reports() and not reports().group.enabled
            assert screen.query_one("#section-vis").folded  # still folded, as drawn

            await pilot.press("space")
            await asyncio.wait_for(began.wait(), 20)
            assert "[x] enabled" in str(reports().render())
            go.set()
            await app.workers.wait_for_complete()
            assert host.settings.global_file.disabled() == set()
            assert app.focused is reports() and reports().group.enabled
    finally:
        await host.close()


def test_a_setting_s_description_is_its_tooltip_as_text() -> None:
    """An extension's description shows as the row's tooltip as written: 'Use [/] with care'
    was read as markup, and hovering the row ended the app (MarkupError)."""
    from textual.widgets._tooltip import Tooltip

    from vis_core.extension.settings_decl import Setting
    from vis_core.settings.owners import SettingOwner
    from vis_core.settings.reading import Resolution
    from vis_core.settings.rows import RowState
    from vis_core.settings.tree import SettingNode
    from vis_core.settings.values import Source

    words = "Use [/] with [red]care[/red]"
    setting = Setting(id="careful", label="Careful", default=False, description=words)
    resolution = Resolution(setting, False, Source.DEFAULT, {})
    state = RowState(
        SettingNode(SettingOwner(setting), 0),
        SettingScope.GLOBAL,
        resolution,
        "off",
        False,
        True,
        None,
    )
    tooltip = Tooltip()
    tooltip.update(SettingRow(state, "extensions").tooltip)  # what the screen does on a hover
    assert str(tooltip.render()) == words


def test_an_enum_setting_s_choices_are_listed_as_text() -> None:
    """The choices of an extension's enum setting are drawn as written: a choice '[/]' was
    read as markup when the list drew it (MarkupError, the app ended)."""
    from textual.visual import visualize

    from vis_tui.widgets.settings_editors import InlineChoices

    choices = ("[/]", "[b]bold[/b]")
    listing = InlineChoices("mode", choices, "[/]")
    for index, choice in enumerate(choices):
        prompt = listing.get_option_at_index(index).prompt
        assert str(visualize(listing, prompt, markup=True)) == choice  # as the list draws it
