"""One row per Activity: state, headline, summary, verdict; Enter/click opens its content."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.events import Click
from textual.reactive import reactive
from textual.selection import Selection
from textual.widget import Widget
from textual.widgets import Static

from vis_core.model.activity import (
    ActivityPresentation,
    ActivityRecord,
    ActivitySection,
    ActivityState,
    ActivityTerminal,
    error_begun_in_header,
    error_in_header,
    receipts_of,
    shown_state,
    warned,
)
from vis_core.model.block import plain_error
from vis_core.model.lines import on_one_line
from vis_tui.widgets.blocks import BlockContext, render_block
from vis_tui.widgets.blocks.terminal import terminal_tail
from vis_tui.widgets.hanging import HangingLine
from vis_tui.widgets.inline import inline_markdown
from vis_tui.widgets.plain import record_text
from vis_tui.widgets.spinner import SPINNER, is_frozen

_GLYPHS = {
    ActivityState.SUCCEEDED: ("✓", "$text-success"),
    ActivityState.FAILED: ("✗", "$text-error"),
    ActivityState.CANCELLED: ("⊘", "$text-warning"),
}


def state_glyph(state: ActivityState, frame: int = 0, *, warning: bool = False) -> Content:
    if warning and state is ActivityState.SUCCEEDED:
        return Content.styled("⚠", "$text-warning")
    if state is ActivityState.RUNNING:
        return Content.styled(SPINNER[frame % len(SPINNER)], "$text-accent")
    glyph, style = _GLYPHS[state]
    return Content.styled(glyph, style)


def _summary(text: str, summary_format: str) -> Content:
    if summary_format == "markdown":
        return inline_markdown(text, "$text-muted")
    return Content.styled(text, "$text-muted")


def _unsaid_error(record: ActivityRecord) -> str | None:
    """The error of a failed call whose summary does not say it (a call that failed before
    its tool said anything, an MCP server's error behind the call's arguments): the row's
    one line says it after the summary; else None. A verdict (tests failed) says it already,
    and a summary that says it, or its start before a cut (the opened row shows it whole)."""
    p = record.presentation
    if record.state is not ActivityState.FAILED or p is None or p.verdict:
        return None
    if error_in_header(record) or error_begun_in_header(record):
        return None
    return record.error or None


def headline_content(
    record: ActivityRecord, *, expanded: bool, expandable: bool, frame: int = 0
) -> HangingLine:
    """The row's one line: disclosure, state, headline, summary or outcome, aside, verdict;
    a long one wraps under the headline, not under the disclosure and state. A line break,
    tab or zero-width space in a field shows as its escape (``\\u2028``)."""
    presentation = record.presentation
    marker = ("▾ " if expanded else "▸ ") if expandable else "  "
    lead = Content.assemble(
        (marker, "$text-muted"),
        state_glyph(shown_state(record), frame, warning=warned(record)),
        " ",
    )
    parts: list[Content | tuple[str, str] | str] = []
    if presentation is None:
        parts.append((on_one_line(record.tool), "bold"))
        if record.error:
            error = plain_error(record.error.splitlines()[0])
            parts.extend(["  ", (on_one_line(error), "$text-error")])
        return HangingLine(lead, Content.assemble(*parts))
    parts.append((on_one_line(presentation.headline), "bold"))
    if presentation.summary:
        summary = on_one_line(presentation.summary)
        parts.extend(["  ", _summary(summary, presentation.summary_format)])
    elif presentation.outcome:
        parts.extend(["  ", (on_one_line(presentation.outcome), "")])
    if error := _unsaid_error(record):
        parts.extend(["  ", (on_one_line(plain_error(error.splitlines()[0])), "$text-error")])
    if presentation.verdict == "passed":
        parts.extend(["  ", (" passed ", "bold $text-success on $success-muted")])
    elif presentation.verdict == "failed":
        parts.extend(["  ", (" failed ", "bold $text-error on $error-muted")])
    if presentation.aside:
        parts.extend(["  ", (on_one_line(presentation.aside), "dim italic")])
    if warned(record) and record.error:
        parts.extend(["  ", (on_one_line(record.error.splitlines()[0]), "$text-warning")])
    return HangingLine(lead, Content.assemble(*parts))


def _running_terminal(presentation: ActivityPresentation | None) -> ActivityTerminal | None:
    if presentation is None:
        return None
    blocks = [*presentation.content, *(b for s in presentation.sections for b in s.content)]
    terminals = [b for b in blocks if isinstance(b, ActivityTerminal)]
    return terminals[-1] if terminals else None


class DisclosureHeader(Static):
    """The clickable one-line header of an Activity or a section."""

    def get_selection(self, selection: Selection) -> tuple[str, str] | None:
        visual = self.visual
        if isinstance(visual, HangingLine):  # selected as the one line it is
            return selection.extract(visual.plain), "\n"
        return super().get_selection(selection)


class SectionView(Vertical, can_focus=True):
    """A titled group of blocks inside an Activity, with its own disclosure."""

    DEFAULT_CSS = """
    SectionView { height: auto; }
    SectionView:focus > .section-header { background: $accent 20%; }
    SectionView > .section-body { height: auto; padding-left: 2; display: none; }
    SectionView.-expanded > .section-body { display: block; }
    """

    BINDINGS = [Binding("enter,space", "open_close", "Open/close section", show=False)]
    expanded: reactive[bool] = reactive(False)

    def __init__(self, section: ActivitySection, context: BlockContext) -> None:
        super().__init__(classes="section")
        self.section = section
        self.context = context
        self._built = False
        self._ready = False

    def on_mount(self) -> None:
        self._ready = True

    def compose(self) -> Any:
        yield DisclosureHeader(self._header(), classes="section-header")
        yield Vertical(classes="section-body")

    def _header(self) -> Content:
        marker = "▾ " if self.expanded else "▸ "
        return Content.assemble(
            (marker, "$text-muted"),
            (self.section.headline, "bold"),
            "  ",
            _summary(self.section.summary, self.section.summary_format),
        )

    def action_open_close(self) -> None:
        self.expanded = not self.expanded

    def on_click(self, event: Click) -> None:
        if isinstance(event.widget, DisclosureHeader) and event.widget.parent is self:
            event.stop()
            self.action_open_close()

    def watch_expanded(self, expanded: bool) -> None:
        if not self._ready:
            return
        self.query_one(".section-header", DisclosureHeader).update(self._header())
        body = self.query_one(".section-body", Vertical)
        if expanded and not self._built:
            self._built = True
            body.mount_all([render_block(block, self.context) for block in self.section.content])
        self.set_class(expanded, "-expanded")


def is_expandable(record: ActivityRecord, receipts: Sequence[ActivityRecord]) -> bool:
    """Whether the row of ``record`` has anything to open: content, sections, an error, receipts."""
    p = record.presentation
    return bool(receipts or record.error or (p and (p.content or p.sections)))


NEST_INDENT = 2  # columns a nested Activity row sits in from its parent's


class ActivityRow(Vertical, can_focus=True):
    """An Activity: collapsed to one line by default; calls on one handle share a row."""

    # The rows' own parts, then the blocks their bodies show (only Activities show blocks).
    DEFAULT_CSS = """
    ActivityRow { height: auto; }
    ActivityRow:focus > .activity-header { background: $accent 20%; }
    ActivityRow.-failed > .activity-header { color: $text; }
    ActivityRow > .activity-tail { padding-left: 4; color: $text-muted; height: auto; }
    ActivityRow > .activity-body { height: auto; padding: 0 0 0 4; }
    ActivityRow .activity-error { color: $text-error; }
    ActivityRow .receipts-title { margin-top: 1; }
    ActivityRow .block { height: auto; margin-bottom: 1; }
    ActivityRow .heading-block { text-style: bold; }
    ActivityRow .markdown-block { padding: 0; margin: 0 0 1 0; }
    ActivityRow .markdown-block > MarkdownBlock:last-child { margin-bottom: 0; }
    ActivityRow .media-chip { margin-bottom: 0; }
    ActivityRow .media-chip:last-child { margin-bottom: 1; }
    ActivityRow .with-path { height: auto; }
    ActivityRow .with-path > PathChip { margin-bottom: 0; }
    ActivityRow .path-chips { height: 1; overflow-x: auto; scrollbar-size-horizontal: 0; }
    ActivityRow .chips-label { width: auto; color: $text-muted; margin-right: 1; }
    ActivityRow .terminal-block { background: $surface; padding: 0 1; }
    ActivityRow .code-block, ActivityRow .diff-block { background: $surface; }
    """

    BINDINGS = [Binding("enter,space", "open_close", "Open/close Activity", show=False)]
    expanded: reactive[bool] = reactive(False)

    def __init__(
        self,
        record: ActivityRecord,
        context: BlockContext,
        *,
        depth: int = 0,
        opened: bool = False,
    ) -> None:
        super().__init__(classes=f"activity -{record.state.value}" + (" -expanded" * opened))
        self.record = record
        self.context = context
        self.depth = depth  # calls an extension tool made show under its row, indented
        if depth:
            self.styles.margin = (0, 0, 0, NEST_INDENT * depth)
        self.earlier: list[ActivityRecord] = []  # the calls on its handle before this one
        self._built_for: tuple[Any, ...] | None = None
        self._frame = 0
        self._spinner: Any = None
        self._ready = False
        if opened:  # drawn open from the start (a !command's output)
            self.set_reactive(ActivityRow.expanded, True)
        self.can_focus = self.expandable or opened

    # -- state -------------------------------------------------------------------------
    @property
    def receipts(self) -> tuple[ActivityRecord, ...]:
        """The earlier calls listed under "Earlier on this handle" (:func:`receipts_of`)."""
        return receipts_of([*self.earlier, self.record])

    @property
    def expandable(self) -> bool:
        return is_expandable(self.record, self.receipts)

    def update_record(self, record: ActivityRecord) -> None:
        """A newer state of this Activity, or a newer call on the same handle."""
        if record.id != self.record.id:
            self.earlier.append(self.record)
        self.record = record
        self._refresh_all()

    def as_text(self) -> str:
        return "\n\n".join(record_text(r) for r in [*self.receipts, self.record])

    # -- widgets -------------------------------------------------------------------------
    def compose(self) -> Any:
        yield DisclosureHeader(self._header(), classes="activity-header")

    def _part(self, cls: type[Widget], name: str) -> Any:
        """The tail or body, mounted the first time it is needed (long transcripts stay light)."""
        found = self.query(f".{name}")
        if found:
            return found.first()
        widget = Static("", classes=name) if cls is Static else Vertical(classes=name)
        self.mount(widget)
        return widget

    def on_mount(self) -> None:
        if not self.query(".activity-header"):
            return  # removed (the app quit) before its header was mounted: nothing to draw
        self._ready = True
        # The header too: an update that came between compose and now must not be lost
        # (it left a spinner on a finished row).
        self._refresh_all()

    def _header(self) -> HangingLine:
        return headline_content(
            self.record, expanded=self.expanded, expandable=self.expandable, frame=self._frame
        )

    def _refresh_all(self, *, header: bool = True) -> None:
        self.can_focus = self.expandable or self.expanded  # Tab visits only rows that open
        if not self._ready:
            return
        shown = shown_state(self.record)
        for state in ActivityState:
            self.set_class(shown is state, f"-{state.value}")
        if header:
            self.query_one(".activity-header", DisclosureHeader).update(self._header())
        terminal = _running_terminal(self.record.presentation)
        running = self.record.state is ActivityState.RUNNING
        show_tail = running and not self.expanded and terminal is not None and bool(terminal.lines)
        if show_tail and terminal is not None:
            tail = self._part(Static, "activity-tail")
            tail.update(terminal_tail(terminal))
            tail.display = True
        elif self.query(".activity-tail"):
            self._part(Static, "activity-tail").display = False
        self._sync_spinner(running)
        if self.expanded:
            body = self._part(Vertical, "activity-body")
            body.display = True
            self._build_body(body)
        elif self.query(".activity-body"):
            self._part(Vertical, "activity-body").display = False

    def _sync_spinner(self, running: bool) -> None:
        if running and self._spinner is None and not is_frozen(self):
            self._spinner = self.set_interval(0.1, self._spin)
        elif not running and self._spinner is not None:
            self._spinner.stop()
            self._spinner = None

    def _spin(self) -> None:
        self._frame = int(time.monotonic() * 10)
        # a glyph for a glyph: the same size, so no layout (it reflowed the whole transcript
        # ten times a second while a tool ran)
        self.query_one(".activity-header", DisclosureHeader).update(self._header(), layout=False)

    def _build_body(self, body: Vertical) -> None:
        key = (self.record, len(self.earlier))
        if self._built_for == key:
            return
        self._built_for = key
        widgets: list[Widget] = []
        presentation = self.record.presentation
        unsaid = _unsaid_error(self.record)
        said = error_in_header(self.record) or (unsaid and "\n" not in unsaid.strip())
        if self.record.error and not said:
            widgets.append(
                Static(
                    Content.styled(plain_error(self.record.error), "$text-error"),
                    classes="activity-error",
                )
            )
        if presentation is not None:
            widgets.extend(render_block(block, self.context) for block in presentation.content)
            widgets.extend(SectionView(section, self.context) for section in presentation.sections)
        if receipts := self.receipts:
            widgets.append(
                Static(
                    Content.styled("Earlier on this handle", "bold $text-muted"),
                    classes="receipts-title",
                )
            )
            for earlier in reversed(receipts):
                line = headline_content(earlier, expanded=False, expandable=False)
                widgets.append(Static(line, classes="receipt"))
        body.remove_children()
        body.mount_all(widgets)

    # -- interaction ---------------------------------------------------------------------
    def action_open_close(self) -> None:
        if self.expandable or self.expanded:
            self.expanded = not self.expanded

    def on_click(self, event: Click) -> None:
        if isinstance(event.widget, DisclosureHeader) and event.widget.parent is self:
            event.stop()
            self.focus()
            self.action_open_close()

    def watch_expanded(self, expanded: bool) -> None:
        self.set_class(expanded, "-expanded")
        self._refresh_all()
        if expanded and self._ready:
            self.call_after_refresh(self.scroll_visible, animate=False)
