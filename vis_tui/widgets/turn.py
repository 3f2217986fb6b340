"""One turn of the transcript: request, answers and Activities in order, then the step count."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.events import Click
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import Static

from vis_core.model.activity import (
    CHILD_SESSION_TOOLS,
    ActivityRecord,
    step_counts,
    step_tags,
)
from vis_core.model.providers import NO_MODEL
from vis_core.model.turn import TurnStatus
from vis_tui.block_info import BlockInfo, folds_into_activity
from vis_tui.notes import FoldInfo, said_by_its_fold
from vis_tui.widgets.activity import ActivityRow
from vis_tui.widgets.activity_tree import place
from vis_tui.widgets.answer import AnswerView
from vis_tui.widgets.block_row import BlockRow
from vis_tui.widgets.blocks import BlockContext
from vis_tui.widgets.fold_row import FoldRow
from vis_tui.widgets.prompt import PASTE_FOLD_LINES  # a longer request shows folded

_STATUS_TEXT = {
    TurnStatus.CANCELLED: ("Cancelled.", "$text-warning"),
    TurnStatus.FAILED: ("The turn failed", "$text-error"),
    TurnStatus.MAX_ITERATIONS: ("Stopped at the iteration limit.", "$text-warning"),
    TurnStatus.INCOMPLETE: ("Incomplete:", "$text-warning"),
}


def footer_content(
    records: Iterable[ActivityRecord],
    status: TurnStatus | None,
    error: str | None,
    *,
    show_steps: bool = True,
) -> Content | None:
    """``1 mutation · 6 observations`` (one step per row the agent's calls made, see
    :func:`~vis_core.model.activity.step_tags`) plus how the turn ended when it did not
    complete."""
    parts: list[Content | tuple[str, str] | str] = []
    counts = step_counts(step_tags(records)) if show_steps else ""
    if counts:
        parts.append((counts, "$text-muted"))
    if status in _STATUS_TEXT:
        text, style = _STATUS_TEXT[status]  # type: ignore[index]
        if error and error.startswith(NO_MODEL):  # the note above has the whole help
            error = "no model is configured: /login sets one up."
        if error and error.lower().startswith(text.lower().rstrip(".:")):
            text = error[0].upper() + error[1:].rstrip(".") + "."  # "Cancelled by the user."
        elif error:
            text = f"{text}: {error}" if status is TurnStatus.FAILED else f"{text} {error}"
        elif status is TurnStatus.FAILED:
            text += "."
        if parts:
            parts.append(("  ", ""))
        parts.append((text, style))
    return Content.assemble(*parts) if parts else None


def is_person_command(request: str) -> bool:
    """Whether ``request`` is a ``!command`` the person ran (the prompt sends those to the
    shell, not to the model)."""
    return request.startswith("!") and bool(request[1:].strip())


def request_folds(request: str) -> bool:
    """Whether ``request`` is long enough to show folded (a 500-line paste is not echoed)."""
    return request.count("\n") + 1 > PASTE_FOLD_LINES


def request_content(request: str, *, expanded: bool = False) -> Content:
    """The request line: a prompt marker, then the request in bold; a long one shows its
    first line, one "pasted N lines" entry that opens to the whole text, and its last line
    (what the person typed after a paste: "summarize this")."""
    marker = ("› ", "bold $text-accent")
    if not request_folds(request):
        return Content.assemble(marker, (request, "bold"))
    lines = request.split("\n")
    written = [n for n, line in enumerate(lines) if line.strip()]
    first = lines[written[0]] if written else ""
    last = ("\n  ", (lines[written[-1]], "bold")) if len(written) > 1 else ()
    disclosure = "▾" if expanded else "▸"
    count = len(request.rstrip("\n").split("\n"))  # a paste's last line end ends a line
    entry = f"{disclosure} pasted {count:,} lines"
    hint = "  Enter or click folds them" if expanded else "  Enter or click shows them"
    if expanded:
        return Content.assemble(
            marker, (entry, "$text-muted"), (hint, "dim"), "\n", (request, "bold")
        )
    return Content.assemble(
        marker, (first, "bold"), "\n  ", (entry, "$text-muted"), (hint, "dim"), *last
    )


class RequestLine(Static):
    """The request of a turn; a long one (a paste) is folded, and Enter, Space or a click
    opens it (the model always had the whole text)."""

    BINDINGS = [Binding("enter,space", "open_close", "Open/close the pasted text", show=False)]
    expanded: reactive[bool] = reactive(False)

    def __init__(self, request: str) -> None:
        super().__init__(request_content(request), classes="request")
        self.request = request
        self.can_focus = request_folds(request)

    def action_open_close(self) -> None:
        if self.can_focus:
            self.expanded = not self.expanded

    def on_click(self, event: Click) -> None:
        if self.can_focus:
            event.stop()
            self.focus(scroll_visible=False)
            self.action_open_close()

    def watch_expanded(self, expanded: bool) -> None:
        self.update(request_content(self.request, expanded=expanded))


class TurnView(Vertical):
    """Everything one request produced, in the order it happened."""

    DEFAULT_CSS = """
    TurnView { height: auto; margin-bottom: 1; }
    TurnView > .request { background: $boost; padding: 0 1; margin-bottom: 1; }
    TurnView > .request:focus { background: $accent 20%; }
    TurnView > .note { color: $text-muted; padding-left: 2; }
    TurnView > .turn-footer { padding-left: 2; color: $text-muted; }
    /* the turn's own bottom margin spaces it from the next: one blank line, not two (the
       top margin stays: a rule's margin-bottom alone would set its top to 0 too) */
    TurnView > AnswerView:last-child { margin: 1 0 0 0; }
    """

    def __init__(self, turn_id: str, position: int, request: str, context: BlockContext) -> None:
        request_line = RequestLine(request)
        super().__init__(request_line, classes="turn")
        self.turn_id = turn_id
        self.position = position
        self.request = request
        self.person_command = is_person_command(request)
        self.context = context
        self.rows: dict[str, ActivityRow] = {}
        self._row_order: list[ActivityRow] = []  # rows as shown, nested ones under their parent
        self.groups: dict[tuple[str, int, str], ActivityRow] = {}
        self.records: dict[str, ActivityRecord] = {}  # every call shown, first seen first
        self.blocks: dict[str, BlockRow] = {}  # python_execution blocks, by iteration id
        self.status: TurnStatus | None = None
        self._answer: AnswerView | None = None  # the answer streaming, until its message
        self.answers: list[AnswerView] = []
        self._early: list[Any] = []
        self._footer: Static | None = None
        self._ready = False

    def compose(self) -> Any:
        """Children added before the turn was mounted (a stored turn's answers and Activities)
        go after the request line, in the same mount as the turn: one layout pass, not two."""
        early, self._early = self._early, []
        self._ready = True
        yield from early

    def on_mount(self) -> None:
        self._ready = True
        if self._early:
            self.mount_all(self._early)
            self._early = []

    # -- answers -------------------------------------------------------------------------
    def _open_answer(self, text: str = "") -> AnswerView:
        if self._answer is None:
            self._answer = AnswerView(text, self.context.answer_pacing)
            self.answers.append(self._answer)
            self._mount_before_footer(self._answer)
        return self._answer

    def add_delta(self, text: str) -> None:
        self._open_answer().add_delta(text)

    def add_stored_answer(self, text: str) -> None:
        """A finished answer of a stored turn: drawn as a streamed one ends up."""
        if text:
            view = AnswerView(text, self.context.answer_pacing)
            self.answers.append(view)
            self._mount_before_footer(view)

    def set_message(self, text: str) -> None:
        """The whole answer whose text streamed: it completes the view the deltas went to."""
        if text:
            self._open_answer(text).set_text(text)
        self.close_answer()

    def close_answer(self) -> None:
        if self._answer is not None:
            self._answer.complete()
        self._answer = None

    @property
    def last_answer(self) -> str:
        texts = [a.text for a in self.answers if a.text.strip()]
        return texts[-1] if texts else ""

    # -- activities ----------------------------------------------------------------------
    def show_activity(self, record: ActivityRecord) -> ActivityRow:
        """Add or update the row of ``record``; calls on one handle share the first row."""
        self.records[record.id] = record
        row = self.rows.get(record.id)
        if row is None and record.group_key is not None:
            row = self.groups.get(record.group_key)
        block = None
        if row is None:
            row = self._new_row(record)
            block = self.blocks.get(record.iteration_id or "")  # its count of rows changed
        else:
            row.update_record(record)
        self.rows[record.id] = row
        if said_by_its_fold(record):
            row.display = False
        if record.group_key is not None:
            self.groups.setdefault(record.group_key, row)
        if block is not None:
            self._fold_block(block)
        return row

    # -- blocks --------------------------------------------------------------------------
    def show_block(self, info: BlockInfo) -> BlockRow:
        """Add or update the row of a ``python_execution`` block (its Activities follow it)."""
        row = self.blocks.get(info.iteration_id)
        if row is None:
            row = BlockRow(info, self.context.printed)
            self.blocks[info.iteration_id] = row
            self._mount_before_footer(row)
        else:
            row.update_info(info)
        self._fold_block(row)
        return row

    def _fold_block(self, row: BlockRow) -> None:
        """A block that only made one call shows as that call's row (nothing else to see)."""
        calls = [r for r in self.records.values() if r.iteration_id == row.info.iteration_id]
        row.display = not folds_into_activity(row.info, calls)

    def _new_row(self, record: ActivityRecord) -> ActivityRow:
        """A row placed in the Activity tree (:func:`~vis_tui.widgets.activity_tree.place`)."""
        order = self._row_order
        spot = place(
            order,
            record,
            find=self.rows.get,
            depth_of=lambda row: row.depth,
            record_of=lambda row: row.record,
        )
        # the person's own !command shows what it printed, as a terminal would
        opened = self.person_command and record.iteration_id is None
        row = ActivityRow(record, self.context, depth=spot.depth, opened=opened)
        order.insert(spot.index(order), row)
        self._fold_child_session(row)
        if spot.before is None and spot.after is None:
            self._mount_before_footer(row)
        else:
            self._mount_near(row, before=spot.before, after=spot.after)
        return row

    def _fold_child_session(self, row: ActivityRow) -> None:
        """A child session's Activities (under a ``run_session`` or ``consult`` call) stay
        folded under the call's row until the person opens it."""
        if row.record.tool in CHILD_SESSION_TOOLS and row.record.parent_id is None:
            self.watch(row, "expanded", lambda _: self._unfold(row), init=False)
            return
        call = self._child_session_call(row.record)
        if call is not None:
            row.display = call.expanded

    def _child_session_call(self, record: ActivityRecord) -> ActivityRow | None:
        """The row of the child session call ``record`` is under, if any."""
        seen: set[str] = set()
        parent = self.rows.get(record.parent_id or "")
        while parent is not None and parent.record.id not in seen:
            seen.add(parent.record.id)
            if parent.record.tool in CHILD_SESSION_TOOLS and parent.record.parent_id is None:
                return parent
            parent = self.rows.get(parent.record.parent_id or "")
        return None

    def _unfold(self, call: ActivityRow) -> None:
        for row in self._row_order:
            if row is not call and self._child_session_call(row.record) is call:
                row.display = call.expanded

    def _mount_near(self, widget: Any, *, before: Any = None, after: Any = None) -> None:
        if not self._ready:
            anchor = before if before is not None else after
            self._early.insert(self._early.index(anchor) + (before is None), widget)
        elif before is not None:
            self.mount(widget, before=before)
        else:
            self.mount(widget, after=after)

    def show_note(self, text: str, style: str = "$text-muted") -> None:
        self._mount_before_footer(Static(Content.styled(text, style), classes="note"))

    def show_widget(self, widget: Widget) -> None:
        """A note of its own kind (the files a command left running changed) in this turn."""
        self._mount_before_footer(widget)

    def show_fold(self, fold: FoldInfo) -> FoldRow:
        """A fold made in this turn: one quiet row that opens to show what was folded."""
        row = FoldRow(fold)
        self._mount_before_footer(row)
        return row

    # -- end -----------------------------------------------------------------------------
    def end(self, status: TurnStatus, error: str | None) -> None:
        self.close_answer()
        self.status = status
        content = footer_content(
            self.records.values(), status, error, show_steps=self.context.show_steps()
        )
        if self._footer is not None:
            self._footer.update(content or "")
        elif content is not None:
            self._footer = Static(content, classes="turn-footer")
            self._mount_before_footer(self._footer)

    def add_after(self, widget: Any) -> None:
        """``widget`` after everything, the footer too (what the person was told after the
        turn, on resume: where it was shown live, right after the turn)."""
        if self._ready:
            self.mount(widget)
        else:
            self._early.append(widget)

    def _mount_before_footer(self, widget: Any) -> None:
        """``widget`` last, before the footer and before an answer still streaming: what is
        shown while an answer streams goes above it, as the stored turn places it (a reply
        where its message ended), and a row's update or a note never cuts the answer in two."""
        streaming = self._answer if self._answer is not widget else None
        anchor = streaming or self._footer
        if not self._ready:
            if anchor is not None and anchor in self._early:
                self._early.insert(self._early.index(anchor), widget)
            else:
                self._early.append(widget)
        elif anchor is not None and anchor.parent is self:
            self.mount(widget, before=anchor)
        else:
            self.mount(widget)
