"""The Settings screen: the shared settings tree, scopes, search, inline editing, Reload."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Button, Input, OptionList, Static

from vis_core.frontend import (
    EXTENSIONS_SECTION,
    SAVED,
    VIS_SECTION,
    SettingNode,
    SettingScope,
    SettingsPanel,
    SettingsTree,
    SettingType,
)
from vis_tui.widgets.hints import Hint, HintLine
from vis_tui.widgets.settings_editors import InlineChoices, InlineTextEditor
from vis_tui.widgets.settings_rows import (
    ExtensionHeader,
    SectionHeader,
    SettingRow,
    TreeLine,
)

SCOPES = (SettingScope.GLOBAL, SettingScope.PROJECT, SettingScope.GROUP, SettingScope.SESSION)
HINTS: tuple[Hint, ...] = (
    ("↑↓ move", 2),
    ("Space/Enter change", 1),
    ("Del reset", 3),
    ("[ ] scope", 3),
    ("/ search", 2),
    ("Esc close", 0),
)
Reloader = Callable[[], Awaitable[str]]
FIRST_PAINT_ROWS = 80


class SearchField(Input):
    """The search: ↓ (and Enter) go to its first hit."""

    BINDINGS = [Binding("down,enter", "screen.first_line", "First hit", show=False)]


class SettingsScreen(Screen[None]):
    """Renders the settings tree and saves through the façade's :class:`SettingsPanel`.

    Opening it runs no extension code: rows come from declarations and saved values only.
    """

    CSS_PATH = "settings.tcss"
    BINDINGS = [
        Binding("escape", "close", "Close", show=False),
        Binding("left_square_bracket", "scope(-1)", "Previous scope", show=False),
        Binding("right_square_bracket", "scope(1)", "Next scope", show=False),
        Binding("slash", "search", "Search", show=False),
    ]

    def __init__(
        self,
        panel: SettingsPanel,
        *,
        session_id: str | None = None,
        reload: Reloader | None = None,
        scope: SettingScope = SettingScope.GLOBAL,
    ) -> None:
        super().__init__()
        self.panel = panel
        self.session_id = session_id
        self._reload = reload
        self.scope = scope
        self.query_text = ""
        self.folded: set[str] = set()
        self.settings_tree: SettingsTree = panel.tree()
        self._pending: list[Widget] = []
        self.loaded = asyncio.Event()  # set once every row is mounted
        self.caught_up = asyncio.Event()  # set once values saved elsewhere were read
        self.first_paint_at: float | None = None  # perf_counter() after the first refresh
        self._forgetting: str | None = None  # the saved secret a first Delete asked to forget

    # -- building ----------------------------------------------------------------------------

    def compose(self) -> Iterator[Widget]:
        yield Static(Content.styled("Settings", "bold"), id="settings-title")
        with Horizontal(id="settings-bar"):
            yield SearchField(placeholder="Search settings…", id="settings-search")
            for scope in SCOPES:
                button = Button(scope.value.title(), id=f"scope-{scope.value}", compact=True)
                button.set_class(scope is self.scope, "-active")
                yield button
        yield Static(self._scope_line(), id="settings-scope")
        yield self._show_notes(Static(id="settings-notes"))
        rows = list(self._rows())
        # The first screenful paints at once; the rest is mounted right after the first paint.
        self._pending = rows[FIRST_PAINT_ROWS:]
        with VerticalScroll(id="settings-tree"):
            yield from rows[:FIRST_PAINT_ROWS]
        yield HintLine(HINTS, id="settings-hints")

    def on_mount(self) -> None:
        first = next(iter(self.query(SettingRow)), None)
        if first is not None:
            first.focus()
        self.call_after_refresh(self._mount_pending)

    async def _catch_up(self) -> None:
        """Values saved since by another process (``vis settings set`` in a second terminal)
        are read and reach the sessions, and the rows show them (in the app's worker, as a
        switch: a change half told is never cut short by closing the screen)."""
        await self.panel.catch_up(self.session_id)
        if self.is_attached:
            self.refresh_rows()
        self.caught_up.set()

    async def _mount_pending(self) -> None:
        self.first_paint_at = time.perf_counter()
        pending, self._pending = self._pending, []
        await self.query_one("#settings-tree", VerticalScroll).mount_all(pending)
        self._apply_visibility()
        self.loaded.set()
        self.app.run_worker(self._catch_up(), group="settings")

    def _rows(self) -> Iterator[Widget]:
        state = self.panel.rows(self.scope, self.session_id)

        def row(node: SettingNode, section: str, base: int) -> SettingRow:
            return SettingRow(state(node), section, base=base, classes="setting-row")

        yield SectionHeader(VIS_SECTION, "vis", id="section-vis", classes="section")
        for node in self.settings_tree.vis:
            yield row(node, "vis", 2)
        yield Horizontal(
            SectionHeader(
                EXTENSIONS_SECTION, "extensions", id="section-extensions", classes="section"
            ),
            Button("Reload", id="settings-reload", compact=True),
            id="extensions-header",
        )
        if not self.settings_tree.extensions:
            yield Static(Content.styled("    No extensions are installed.", "$text-muted"))
        for ext in self.settings_tree.extensions:
            yield ExtensionHeader(ext, classes="extension")
            for node in ext.settings:
                yield row(node, f"ext:{ext.name}", 6)

    def _scope_line(self) -> Content:
        group = self.panel.group(self.session_id)
        where = {
            SettingScope.GLOBAL: self._global_place(),
            SettingScope.PROJECT: f"Project: {self.panel.project_root}",
            SettingScope.GROUP: f"Group: {group}"
            if group
            else "Group: this session is in no group (/group NAME moves it)",
            SettingScope.SESSION: "Session: only this session",
        }[self.scope]
        return Content.assemble(
            (f"Editing at {where}", "$text"), ("   ● set at this scope", "$warning")
        )

    def _global_place(self) -> str:
        """Where a save at global scope goes: config.toml; a project extension's setting in
        the project's settings file (for it, global means the whole project)."""
        where = "Global: every project on this computer (config.toml)"
        if any(node.owner.is_project for node in self.settings_tree.nodes()):
            where += f"; a project extension's: this project ({self.panel.project_settings})"
        return where

    def _show_notes(self, widget: Static) -> Static:
        """The keys the settings files hold that Vis ignores (a typo), said above the rows."""
        notes = self.panel.notes()
        widget.update(Content.styled("\n".join(notes), "$text-warning"))
        widget.display = bool(notes)
        return widget

    async def rebuild(self) -> None:
        """Re-read the tree (after Reload) and redraw every row, folded as it was and with
        the focus on the line that had it (Space switches the same extension back on)."""
        self.settings_tree = self.panel.tree()
        self._show_notes(self.query_one("#settings-notes", Static))
        self.query_one("#settings-scope", Static).update(self._scope_line())
        body = self.query_one("#settings-tree", VerticalScroll)
        focused = self.focused
        key = focused.key if isinstance(focused, TreeLine) else None
        await body.remove_children()
        await body.mount_all(list(self._rows()))
        for header in self.query(SectionHeader):
            header.folded = header.section in self.folded
        for header in self.query(ExtensionHeader):
            header.folded = header.key in self.folded
        self._apply_visibility()
        line = next((w for w in self.query(TreeLine) if w.key == key), None)
        if line is not None:
            line.focus()

    def refresh_rows(self) -> None:
        state = self.panel.rows(self.scope, self.session_id)
        for row in self.query(SettingRow):
            row.update_state(state(row.state.node))

    def row(self, setting_id: str) -> SettingRow:
        return next(r for r in self.query(SettingRow) if r.setting_id == setting_id)

    # -- visibility: folds and search -------------------------------------------------------

    def _apply_visibility(self) -> None:
        query = self.query_text
        extensions_open = "extensions" not in self.folded
        for header in self.query(ExtensionHeader):
            group = header.group
            hit = (
                not query
                or query.lower() in group.name.lower()
                or any(node.matches(query) for node in group.settings)
            )
            header.display = extensions_open and hit
        core_hit = False
        for row in self.query(SettingRow):
            section = row.section
            hit = row.state.node.matches(query)
            core_hit = core_hit or (hit and section == "vis")
            hidden = section in self.folded or (section.startswith("ext:") and not extensions_open)
            row.display = not hidden and hit
        self.query_one("#section-vis", SectionHeader).display = core_hit or not query

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "settings-search":
            self.query_text = event.value.strip()
            self._apply_visibility()

    def on_section_header_folded(self, message: SectionHeader.Folded) -> None:
        header = message.header
        header.folded = header.section not in self.folded
        (self.folded.add if header.folded else self.folded.discard)(header.section)
        header.refresh()
        self._apply_visibility()

    def on_extension_header_folded(self, message: ExtensionHeader.Folded) -> None:
        header = message.header
        header.folded = header.key not in self.folded
        (self.folded.add if header.folded else self.folded.discard)(header.key)
        header.refresh()
        self._apply_visibility()

    # -- scope ---------------------------------------------------------------------------------

    def set_scope(self, scope: SettingScope) -> None:
        self.scope = scope
        for button in self.query("#settings-bar Button").results(Button):
            button.set_class(button.id == f"scope-{scope.value}", "-active")
        self.query_one("#settings-scope", Static).update(self._scope_line())
        self.refresh_rows()

    def action_scope(self, step: int) -> None:
        index = (SCOPES.index(self.scope) + step) % len(SCOPES)
        self.set_scope(SCOPES[index])

    def action_search(self) -> None:
        self.query_one("#settings-search", Input).focus()

    def action_close(self) -> None:
        self.dismiss(None)

    def action_first_line(self) -> None:
        """To the first line shown: the first hit of a search (its rows, not the headers)."""
        kind = SettingRow if self.query_text else TreeLine
        shown = [line for line in self.query(kind) if line.display]
        if shown:
            shown[0].focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        button_id = event.button.id or ""
        if button_id.startswith("scope-"):
            self.set_scope(SettingScope(button_id.removeprefix("scope-")))
        elif button_id == "settings-reload":
            self._in_background(self.reload_extensions())

    # -- editing -------------------------------------------------------------------------------

    async def on_setting_row_activated(self, message: SettingRow.Activated) -> None:
        row = message.row
        state = row.state
        setting = state.node.setting
        if not state.editable:
            self.notify(f"{setting.label}: {state.reason}", severity="warning", markup=False)
            return
        for editor in self.query("InlineTextEditor, InlineChoices"):
            await editor.remove()
        if setting.type is SettingType.BOOLEAN:
            await self.save(setting.id, not state.value)
        elif setting.type is SettingType.ENUM:
            choices = InlineChoices(setting.id, setting.choices, state.value, classes="inline")
            await row.parent.mount(choices, after=row)  # type: ignore[union-attr]
            self._open_in_view(choices)
        else:
            value = "" if setting.is_secret else str(state.value)
            editor = InlineTextEditor(setting.id, value, secret=setting.is_secret, classes="inline")
            await row.parent.mount(editor, after=row)  # type: ignore[union-attr]
            self._open_in_view(editor)

    def _open_in_view(self, editor: Widget) -> None:
        """Focus an editor just mounted under its row and scroll it fully into view once it
        is laid out (a secret typed below the screen's edge is typed blind)."""
        editor.focus(scroll_visible=False)
        self.call_after_refresh(editor.scroll_visible, animate=False)

    async def on_input_submitted(self, event: Input.Submitted) -> None:
        editor = event.input
        if not isinstance(editor, InlineTextEditor):
            return
        event.stop()
        if await self.save(editor.setting_id, editor.value):
            await editor.remove()
            self.row(editor.setting_id).focus()

    async def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        chooser = event.option_list
        if not isinstance(chooser, InlineChoices):
            return
        event.stop()
        if await self.save(chooser.setting_id, event.option.id):
            await chooser.remove()
            self.row(chooser.setting_id).focus()

    async def on_setting_row_reset_requested(self, message: SettingRow.ResetRequested) -> None:
        row = message.row
        if not row.state.editable:
            self.notify(
                f"{row.state.node.setting.label}: {row.state.reason}",
                severity="warning",
                markup=False,
            )
            return
        setting = row.state.node.setting
        if setting.is_secret and row.state.display == SAVED and self._forgetting != setting.id:
            self._forgetting = setting.id  # a saved secret cannot be typed back from here
            self.notify(
                f"Press Delete again to forget the saved {setting.label}: "
                "it cannot be shown or recovered.",
                title="Forget the secret?",
                severity="warning",
                markup=False,
            )
            return
        await self.save(row.setting_id, None)

    async def save(self, setting_id: str, value: Any) -> bool:
        """Save (``None`` resets) at the current scope; awaits ``on_change``."""
        self._forgetting = None  # another change: a Delete of a saved secret asks again
        panel = self.panel
        try:
            if value is None:
                result = await panel.reset(setting_id, self.scope, session_id=self.session_id)
            else:
                result = await panel.set(setting_id, value, self.scope, session_id=self.session_id)
        except ValueError as exc:
            self.notify(str(exc), title="Not saved", severity="error", markup=False)
            return False
        if result.hook_error:
            self.notify(result.hook_error, title="Saved", severity="error", markup=False)
        self.refresh_rows()
        return True

    # -- extensions ------------------------------------------------------------------------------

    def on_extension_header_switched(self, message: ExtensionHeader.Switched) -> None:
        header = message.header
        enabled = not header.shown_enabled
        header.switch_to(enabled)
        self._in_background(self._switch(header.group.name, enabled))

    def _in_background(self, work: Awaitable[None]) -> None:
        """Run ``work`` (a switch, a reload: extension code runs) while the screen goes on
        answering keys; in the app's worker, so closing the screen does not cut a reload
        short (the host runs reloads one at a time)."""
        self.app.run_worker(work, group="extensions")

    async def _switch(self, name: str, enabled: bool) -> None:
        await self.panel.set_enabled(name, enabled)
        if self._reload is None:
            self.notify(f"{name}: takes effect after Reload", markup=False)
            return
        await self.reload_extensions()

    async def reload_extensions(self) -> None:
        """Re-read every extension (this runs their files), then redraw the tree (unless the
        screen was closed meanwhile)."""
        if self._reload is None:
            self.notify("Reload is not available here", severity="warning")
            return
        summary = await self._reload()
        if self.is_attached:
            await self.rebuild()
        self.notify(summary, title="Reloaded extensions", markup=False)
