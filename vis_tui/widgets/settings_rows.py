"""Rows of the Settings screen: section and extension headers, and one row per setting."""

from __future__ import annotations

from typing import Any

from rich.cells import cell_len
from textual.binding import Binding
from textual.content import Content
from textual.message import Message
from textual.widget import Widget

from vis_core.frontend import NOT_SET, SAVED, ExtensionGroup, RowState, SettingType, Source
from vis_core.model.extensions import GuideKind
from vis_tui.widgets.hanging import HangingLine, StackedLines

_SOURCE_TEXT = {
    Source.DEFAULT: "default",
    Source.GLOBAL: "global",
    Source.PROJECT: "project",
    Source.GROUP: "group",
    Source.SESSION: "session",
    Source.COMMAND_LINE: "command line",
}


class TreeLine(Widget):
    """A focusable line in the tree; Up/Down move between visible lines."""

    can_focus = True
    BINDINGS = [
        Binding("down", "move(1)", "Next", show=False),
        Binding("up", "move(-1)", "Previous", show=False),
    ]

    def __init__(self, section: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.section = section

    @property
    def key(self) -> str:
        """What the line stands for, the same in the tree drawn again after a reload."""
        raise NotImplementedError

    def action_move(self, step: int) -> None:
        if step > 0:
            self.screen.focus_next(TreeLine)
        else:
            self.screen.focus_previous(TreeLine)


class SectionHeader(TreeLine):
    """``Vis`` or ``Extensions``: Enter folds and unfolds the section."""

    BINDINGS = [Binding("enter,space", "fold", "Fold", show=False)]

    class Folded(Message):
        def __init__(self, header: SectionHeader) -> None:
            super().__init__()
            self.header = header

    def __init__(self, title: str, section: str, **kwargs: Any) -> None:
        super().__init__(section, **kwargs)
        self.title = title
        self.folded = False

    @property
    def key(self) -> str:
        return f"section:{self.section}"

    def render(self) -> Content:
        arrow = "▸" if self.folded else "▾"
        return Content.styled(f"{arrow} {self.title}", "bold $accent")

    def action_fold(self) -> None:
        self.post_message(self.Folded(self))


class ExtensionHeader(TreeLine):
    """One extension: name, ``project``/``global`` tag, enable switch, load error, and the
    guides and skills it ships."""

    BINDINGS = [
        Binding("space", "switch", "On/off", show=False),
        Binding("enter", "fold", "Fold", show=False),
    ]

    class Switched(Message):
        def __init__(self, header: ExtensionHeader) -> None:
            super().__init__()
            self.header = header

    class Folded(Message):
        def __init__(self, header: ExtensionHeader) -> None:
            super().__init__()
            self.header = header

    def __init__(self, group: ExtensionGroup, **kwargs: Any) -> None:
        super().__init__("extensions", **kwargs)
        self.group = group
        self.folded = False
        self.switching_to: bool | None = None  # saved, shown until the reload draws it
        if group.failed:
            self.add_class("-failed")

    @property
    def key(self) -> str:
        return f"ext:{self.group.name}"

    @property
    def shown_enabled(self) -> bool:
        """On as the line shows it: the switch just made, else the loaded state."""
        return self.group.enabled if self.switching_to is None else self.switching_to

    def switch_to(self, enabled: bool) -> None:
        """Show ``enabled`` at once; the reload that makes it so redraws the tree."""
        self.switching_to = enabled
        self.refresh()

    def render(self) -> StackedLines:
        group = self.group
        arrow = "▸" if self.folded else "▾"
        if group.failed and self.switching_to is None:
            switch = ("failed to load", "bold $error")
        elif self.shown_enabled:
            switch = ("[x] enabled", "$success")
        else:
            switch = ("[ ] disabled", "$text-muted")
        parts: list[Any] = [
            (f"{arrow} ", ""),
            (group.name, "bold"),
            (f"  {group.tag}", "italic $text-muted"),
            ("  ", ""),
            switch,
        ]
        if self.switching_to is not None:
            parts.append(("  (at the next reload)", "italic $text-muted"))
        details: list[tuple[str, str]] = []
        if group.description:
            details.append((group.description, "$text-muted"))
        shipped = [
            f"{title}: {', '.join(names)}"
            for title, kind in (("Guides", GuideKind.GUIDE), ("Skills", GuideKind.SKILL))
            if (names := group.guide_names(kind))
        ]
        if shipped:
            details.append(("  ".join(shipped), "italic $text-muted"))
        if group.error:
            details += ((line, "$error") for line in group.error.splitlines())
        indent = Content("  ")  # a detail's wrapped lines stay under its text
        return StackedLines(
            Content.assemble(*parts),
            *(HangingLine(indent, Content.styled(text, style)) for text, style in details),
        )

    def action_switch(self) -> None:
        if not self.group.failed:
            self.post_message(self.Switched(self))

    def action_fold(self) -> None:
        self.post_message(self.Folded(self))


class SettingRow(TreeLine):
    """One setting as seen at the screen's scope; Space/Enter edits, Delete resets."""

    BINDINGS = [
        Binding("enter,space", "activate", "Change", show=False),
        Binding("delete,backspace,r", "reset", "Reset", show=False),
    ]

    class Activated(Message):
        def __init__(self, row: SettingRow) -> None:
            super().__init__()
            self.row = row

    class ResetRequested(Message):
        def __init__(self, row: SettingRow) -> None:
            super().__init__()
            self.row = row

    def __init__(self, state: RowState, section: str, *, base: int = 4, **kwargs: Any) -> None:
        super().__init__(section, **kwargs)
        self.state = state
        self.styles.padding = (0, 1, 0, base + 4 * state.node.depth)
        description = state.node.setting.description  # the extension's words: text, not markup
        self.tooltip = Content(description) if description else None
        self._sync_classes()

    @property
    def setting_id(self) -> str:
        return self.state.node.setting.id

    @property
    def key(self) -> str:
        return f"setting:{self.setting_id}"

    def update_state(self, state: RowState) -> None:
        self.state = state
        self._sync_classes()
        self.refresh(layout=True)

    def _sync_classes(self) -> None:
        self._sync_height()
        self.set_class(not self.state.editable, "-locked")
        self.set_class(self.state.overridden_here, "-override")

    def _sync_height(self) -> None:
        # A fixed height spares Textual measuring hundreds of auto-height rows: one line for
        # the setting, then its notes wrapped at the row's width (one line each until the
        # row knows its width).
        width = self.content_size.width
        notes = len(self._note_lines(width)) if width else len(self._notes())
        if self.styles.height is None or self.styles.height.value != 1 + notes:
            self.styles.height = 1 + notes

    def on_resize(self) -> None:
        self._sync_height()

    def _notes(self) -> list[tuple[str, str]]:
        """The description, why the row is locked, and values that were ignored."""
        state = self.state
        notes: list[tuple[str, str]] = []
        if state.node.setting.description:
            notes.append((state.node.setting.description, "$text-muted"))
        if state.reason:
            notes.append((f"Cannot change here: {state.reason}", "italic $text-muted"))
        for why in state.resolution.ignored:  # e.g. a project value of an untrusted project
            notes.append((f"{why[:1].upper()}{why[1:]}", "italic $warning"))
        return notes

    def _note_lines(self, width: int) -> list[Content]:
        """The notes wrapped whole at ``width``: never cut mid-sentence."""
        return [
            line
            for text, style in self._notes()
            for line in Content.styled(text, style).wrap(max(1, width))
        ]

    def _value(self) -> tuple[str, str]:
        state = self.state
        setting = state.node.setting
        if setting.is_secret:
            saved = state.display == SAVED
            return (SAVED if saved else NOT_SET), ("bold $success" if saved else "$text-muted")
        if setting.type is SettingType.BOOLEAN:
            return ("[x] on", "$success") if state.value else ("[ ] off", "$text-muted")
        if setting.type is SettingType.ENUM:
            return f"{state.display} ▾", "$text"
        return state.display, "$text"

    def render(self) -> Content:
        state = self.state
        setting = state.node.setting
        value, value_style = self._value()
        mark = "● " if state.overridden_here else "  "
        badge = f"  {_SOURCE_TEXT[state.source]:<12}"
        width = max(self.content_size.width, 40)
        right = value + badge
        gap = max(2, width - cell_len(setting.label) - cell_len(right) - cell_len(mark))
        label_style = "$text-muted" if not state.editable else "bold"
        parts: list[Any] = [
            (setting.label, label_style),
            (" " * gap, ""),
            (mark, "$warning"),
            (value, value_style),
            (badge, "italic $text-muted"),
        ]
        lines = self._note_lines(self.content_size.width or width)
        return Content.assemble(*parts, *(Content("\n") + line for line in lines))

    def action_activate(self) -> None:
        self.post_message(self.Activated(self))

    def action_reset(self) -> None:
        self.post_message(self.ResetRequested(self))
