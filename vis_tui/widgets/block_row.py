"""One row per ``python_execution`` block: its code, what it printed, its error and the files it
changed; folded to a few lines, Enter or a click opens all of it."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.events import Click
from textual.reactive import reactive
from textual.selection import Selection
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Static

from vis_core.frontend import plural
from vis_core.model.block import (
    FileChange,
    FileChangeKind,
    code_line_count,
    drawn_lines,
    error_line,
    format_duration,
    printed_line_count,
)
from vis_core.model.lines import on_one_line
from vis_tui.block_info import BlockInfo
from vis_tui.widgets.activity import DisclosureHeader, is_frozen
from vis_tui.widgets.blocks.code import diff_content
from vis_tui.widgets.hanging import ContinuedLines
from vis_tui.widgets.paths import PathChip

PREVIEW_LINES = 3  # code lines a folded row shows
PREVIEW_WIDTH = 160  # characters of a previewed code line
FILES_SHOWN = 8  # files a folded row lists; the rest are counted
INDENT = "    "  # under the headline, past the disclosure and the state mark
PRINTED_LINES = 3  # lines of what a running block printed its row shows
LOOK_SECONDS = 0.5  # how often a running block's row looks at what it printed

_CHANGE_MARKS = {
    FileChangeKind.CREATED: ("+", "$text-success"),
    FileChangeKind.CHANGED: ("~", "$text-warning"),
    FileChangeKind.REMOVED: ("✗", "bold $text-error"),
}


def highlighted(code: str) -> Content:
    """``code`` coloured as Python (Pygments loads with the first block)."""
    from textual.highlight import highlight

    return highlight(code, language="python")


def _glyph(info: BlockInfo) -> Content:
    if not info.ended:
        return Content.styled("⋯", "$text-accent")
    if info.cancelled:
        return Content.styled("⊘", "$text-warning")
    if info.error is not None:
        return Content.styled("✗", "$text-error")
    return Content.styled("✓", "$text-success")


def _details(info: BlockInfo, frozen: bool, running_for: float | None) -> str:
    count = code_line_count(info.code)
    words = [plural(count, "line")]
    if not info.ended:
        running = "running" if running_for is None else f"running {format_duration(running_for)}"
        return " · ".join([running, *words])
    words.insert(0, "0.1s" if frozen else format_duration(info.duration))
    printed = printed_line_count(info.stdout)
    if printed:
        words.append(f"printed {plural(printed, 'line')}")
    return " · ".join(words)


def file_line(change: FileChange) -> Content:
    """``✗ README.md  removed  −1``: the mark, path and kind in the change's colour (a line
    break or tab in the path shows as its escape: the path stays on its line)."""
    mark, style = _CHANGE_MARKS[change.kind]
    counts = []
    if change.added:
        counts.append(f"+{change.added}")
    if change.removed:
        counts.append(f"−{change.removed}")
    if change.note:
        counts.append(change.note)
    return Content.assemble(
        (f"{mark} {on_one_line(change.path)}", style),
        (f"  {change.kind.value}", style if change.kind is FileChangeKind.REMOVED else ""),
        (f"  {' '.join(counts)}" if counts else "", "$text-muted"),
    )


def _cut(line: str) -> str:
    return line if len(line) <= PREVIEW_WIDTH else line[: PREVIEW_WIDTH - 1] + "…"


def block_content(
    info: BlockInfo,
    *,
    expanded: bool = False,
    frozen: bool = False,
    printed: str = "",
    running_for: float | None = None,
) -> Content:
    """The row as it shows: one line (state, ``Python``, duration, size of the code and of
    what it printed), and when folded the first lines of the code, the last lines a running
    block printed so far (``printed``), the files the block changed and its error.
    ``frozen``: a fixed duration (snapshots); ``running_for``: seconds a running block ran."""
    head = Content.assemble(
        ("▾ " if expanded else "▸ ", "$text-muted"),
        _glyph(info),
        " ",
        ("Python", "bold"),
        "  ",
        (_details(info, frozen, running_for), "$text-muted"),
    )
    if expanded:
        return head
    lines = [head]
    code = info.code.strip("\n").splitlines()
    preview = [_cut(line) for line in code[:PREVIEW_LINES]]
    if preview:
        lines.extend(Content(INDENT) + line for line in highlighted("\n".join(preview)).split("\n"))
    if len(code) > PREVIEW_LINES:
        more = len(code) - PREVIEW_LINES
        lines.append(Content.styled(f"{INDENT}… {plural(more, 'more line')}", "$text-muted"))
    if printed and not info.ended:
        lines.extend(
            Content.styled(f"{INDENT}│ {_cut(line)}", "$text-muted") for line in printed.split("\n")
        )
    for change in info.files[:FILES_SHOWN]:
        lines.append(Content(INDENT) + file_line(change))
    if len(info.files) > FILES_SHOWN:
        lines.append(
            Content.styled(f"{INDENT}… {len(info.files) - FILES_SHOWN} more files", "$text-muted")
        )
    if info.error is not None and not info.cancelled:
        lines.append(Content.styled(INDENT + error_line(info.error), "$text-error"))
    return Content("\n").join(lines)


class CodeView(Static):
    """A block's code; a line too long for the width goes on under a ``↪`` mark."""

    def get_selection(self, selection: Selection) -> tuple[str, str] | None:
        visual = self.visual
        if isinstance(visual, ContinuedLines):  # the code as it is, without the marks
            return selection.extract(visual.plain), "\n"
        return super().get_selection(selection)


class BlockRow(Vertical, can_focus=True):
    """A block of the model's code: folded to a few lines; Enter opens the whole code,
    what it printed, each changed file's diff and the full error."""

    DEFAULT_CSS = """
    BlockRow { height: auto; }
    BlockRow > .block-header { text-wrap: nowrap; text-overflow: ellipsis; }
    BlockRow:focus > .block-header { background: $accent 20%; }
    BlockRow > .block-body { height: auto; padding: 0 0 0 4; display: none; }
    BlockRow.-expanded > .block-body { display: block; }
    BlockRow .block-code, BlockRow .block-output, BlockRow .block-diff {
        background: $surface; height: auto; margin-bottom: 1;
    }
    BlockRow .block-output { padding: 0 1; }
    BlockRow .block-title { color: $text-muted; text-style: bold; }
    BlockRow .block-error { color: $text-error; margin-bottom: 1; }
    BlockRow .block-saved { height: 1; margin-bottom: 1; }
    """

    BINDINGS = [Binding("enter", "open_close", "Open/close block", show=False)]
    expanded: reactive[bool] = reactive(False)

    def __init__(self, info: BlockInfo, printed: Callable[[int], str] | None = None) -> None:
        """``printed``: the last N lines the running block printed so far, looked at every
        ``LOOK_SECONDS`` while it runs."""
        super().__init__(classes="block-row")
        self.info = info
        self._built_for: BlockInfo | None = None
        self._ready = False
        self._printed = printed
        self._printed_now = ""  # what it showed of the running block's output
        self._started = time.monotonic()
        self._looking: Timer | None = None

    def compose(self) -> Any:
        yield DisclosureHeader(
            block_content(self.info, frozen=is_frozen(self)), classes="block-header"
        )
        yield Vertical(classes="block-body")

    def on_mount(self) -> None:
        self._ready = True
        if not self.info.ended and self._printed is not None:
            self._looking = self.set_interval(LOOK_SECONDS, self._look)
        self._refresh()

    def _look(self) -> None:
        """While the block runs: its time and the last lines it printed, as they are now."""
        if self._printed is not None and not self.info.ended:
            self._printed_now = self._printed(PRINTED_LINES)
            self._refresh()

    def update_info(self, info: BlockInfo) -> None:
        self.info = info
        if info.ended and self._looking is not None:
            self._looking.stop()
            self._looking = None
        self._refresh()

    def _refresh(self) -> None:
        if not self._ready:
            return
        header = self.query_one(".block-header", DisclosureHeader)
        frozen = is_frozen(self)  # its clock stands still (snapshots)
        running_for = None if self._looking is None or frozen else time.monotonic() - self._started
        header.update(
            block_content(
                self.info,
                expanded=self.expanded,
                frozen=frozen,
                printed=self._printed_now,
                running_for=running_for,
            )
        )
        if self.expanded and self._built_for != self.info:
            self._built_for = self.info
            body = self.query_one(".block-body", Vertical)
            body.remove_children()
            body.mount_all(self._body())

    def _body(self) -> list[Widget]:
        info = self.info
        code = CodeView(ContinuedLines(highlighted(info.code.strip("\n"))), classes="block-code")
        widgets: list[Widget] = [code]
        if info.stdout.strip():
            widgets.append(Static("Printed", classes="block-title"))
            printed = "\n".join(drawn_lines(info.stdout.rstrip("\n")))  # as a terminal draws it
            widgets.append(Static(Content(printed), classes="block-output"))
            saved = info.saved_output
            if saved is not None:
                widgets.append(PathChip(saved, "the whole output").add_class("block-saved"))
        for change in info.files:
            widgets.append(Static(file_line(change), classes="block-file"))
            if change.diff:
                widgets.append(Static(diff_content(change.diff), classes="block-diff"))
        if info.error is not None and not info.cancelled:
            widgets.append(Static(Content(info.error.rstrip("\n")), classes="block-error"))
        return widgets

    def action_open_close(self) -> None:
        self.expanded = not self.expanded

    def on_click(self, event: Click) -> None:
        if isinstance(event.widget, DisclosureHeader) and event.widget.parent is self:
            event.stop()
            self.focus()
            self.action_open_close()

    def watch_expanded(self, expanded: bool) -> None:
        self.set_class(expanded, "-expanded")
        self._refresh()
        if expanded and self._ready:
            self.call_after_refresh(self.scroll_visible, animate=False)
