"""The Settings screen fits what it opens: an inline editor is scrolled fully into view, and a
long description wraps whole at any width from 80 columns."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.containers import VerticalScroll

from vis_tui.widgets.settings_editors import InlineTextEditor
from vis_tui.widgets.settings_rows import ExtensionHeader, SettingRow

from .support import SettingsApp, open_host, user_extensions


async def test_the_editor_of_a_secret_on_the_last_line_opens_in_view(workspace: Path) -> None:
    user_extensions("reports")
    host = await open_host(workspace)
    app = SettingsApp(host)
    async with app.run_test(size=(100, 45)) as pilot:
        screen = await app.loaded()
        tree = screen.query_one("#settings-tree", VerticalScroll)
        row = screen.row("reports_server_token")
        row.focus()  # scrolled to from the top, as Down would: it sits at the bottom
        await pilot.pause()
        assert screen.focused is row
        assert row.region.bottom >= tree.region.bottom - 2, (row.region, tree.region)
        await pilot.press("enter")
        await pilot.pause()
        editor = screen.query_one(InlineTextEditor)
        assert editor.has_focus
        assert editor.region.height == editor.outer_size.height > 0
        assert tree.region.contains_region(editor.region), (editor.region, tree.region)
    await host.close()


@pytest.mark.parametrize("columns", [80, 100, 133])
async def test_a_long_description_wraps_whole_at_any_width(workspace: Path, columns: int) -> None:
    """Before, a description had one line and was cut ("… Empty: anthropic/claude-sonnet-4-6
    when", then an ellipsis): now it wraps, and the row is as tall as its lines."""
    host = await open_host(workspace)
    app = SettingsApp(host)
    async with app.run_test(size=(columns, 45)) as pilot:
        screen = await app.loaded()
        await pilot.pause()
        for row in screen.query(SettingRow):
            description = row.state.node.setting.description
            if not description or not row.display:
                continue
            lines = [line.strip() for line in row.render().plain.split("\n")]
            assert len(lines) == row.styles.height.value  # type: ignore[union-attr]
            shown = " ".join(lines[1 : 1 + len(lines) - 1])
            assert " ".join(description.split()) in " ".join(shown.split()), (row.setting_id, lines)
            assert all(len(line) <= row.content_size.width for line in lines[1:])
        model = screen.row("model")
        assert len(model.state.node.setting.description) > model.content_size.width
        assert model.styles.height.value > 2  # type: ignore[union-attr]
    await host.close()


async def test_the_scope_line_is_whole_at_80_columns(workspace: Path) -> None:
    """ "Editing at Global: every project on this computer (config.toml)   ● set at this
    scope" lost its end at 80 columns (one fixed line)."""
    from textual.content import Content
    from textual.widgets import Static

    host = await open_host(workspace)
    app = SettingsApp(host)
    async with app.run_test(size=(80, 45)) as pilot:
        screen = await app.loaded()
        await pilot.pause()
        line = screen.query_one("#settings-scope", Static)
        content = line.render()
        assert isinstance(content, Content) and content.plain.endswith("set at this scope")
        needed = len(content.wrap(line.content_size.width))
        assert needed > 1 and line.content_size.height == needed
    await host.close()


async def test_a_load_error_wraps_under_its_own_text(workspace: Path) -> None:
    """A failed extension's error longer than the line went on at the row's left edge, under
    the extension's name; its wrapped lines now start where its first line does, under the name."""
    user_extensions("broken")
    host = await open_host(workspace)
    app = SettingsApp(host)
    async with app.run_test(size=(80, 45)) as pilot:
        screen = await app.loaded()
        await pilot.pause()
        header = next(h for h in screen.query(ExtensionHeader) if h.group.name == "broken")
        error = header.group.error or ""
        assert len(error) > 80, error  # the path of the file and the exception: it must wrap
        lines = [strip.text for strip in header.render_lines(header.region.reset_offset)]
        name_at = lines[0].index("broken")
        text = lines[1:]
        assert len(text) >= 2 and all(line.strip() for line in text), lines
        assert all(len(line) - len(line.lstrip()) == name_at for line in text), lines
        assert "".join(error.split()) == "".join("".join(text).split())  # all of it, in order
    await host.close()
