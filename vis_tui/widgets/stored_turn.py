"""A stored turn drawn as one widget until the person clicks or focuses it (long transcripts)."""

from __future__ import annotations

import dataclasses

from rich.style import Style as RichStyle
from textual.color import Color
from textual.content import Content
from textual.events import Click
from textual.geometry import Size
from textual.message import Message
from textual.strip import Strip
from textual.style import Style
from textual.visual import Visual, visualize
from textual.widget import Widget

from vis_core.model.activity import ActivityRecord, receipts_of
from vis_core.model.turn import TurnStatus
from vis_tui.history import PartKind, StoredTurn
from vis_tui.notes import said_by_its_fold
from vis_tui.widgets.activity import NEST_INDENT, headline_content, is_expandable, is_frozen
from vis_tui.widgets.activity_tree import place, under_child_session
from vis_tui.widgets.answer_lines import AnswerLines
from vis_tui.widgets.block_row import block_content
from vis_tui.widgets.hanging import HangingLine
from vis_tui.widgets.plain import record_text
from vis_tui.widgets.turn import footer_content, request_content

FOLD_HIT = "fold:"  # what a click on the n-th fold line of a stored turn reports: fold:n
BLOCK_HIT = "block:"  # what a click on a block's lines reports: block:<iteration id>


@dataclasses.dataclass(frozen=True)
class StoredRow:
    """One collapsed Activity row of a stored turn: the newest call and the earlier calls on
    its handle."""

    record: ActivityRecord
    earlier: tuple[ActivityRecord, ...]
    depth: int = 0  # under the row of the extension tool that made the call

    @property
    def receipts(self) -> tuple[ActivityRecord, ...]:
        """The earlier calls the row lists (:func:`receipts_of`)."""
        return receipts_of([*self.earlier, self.record])

    def header(self) -> HangingLine:
        expandable = is_expandable(self.record, self.receipts)
        return headline_content(self.record, expanded=False, expandable=expandable)

    def as_text(self) -> str:
        return "\n\n".join(record_text(r) for r in [*self.receipts, self.record])


def stored_rows(records: tuple[ActivityRecord, ...]) -> list[StoredRow]:
    """The rows ``records`` make: calls on one handle share the first call's row."""
    rows: list[list[ActivityRecord]] = []
    by_id: dict[str, list[ActivityRecord]] = {}
    groups: dict[tuple[str, int, str], list[ActivityRecord]] = {}
    for record in records:
        row = by_id.get(record.id)
        if row is None and record.group_key is not None:
            row = groups.get(record.group_key)
        if row is None:
            row = [record]
            rows.append(row)
        elif row[-1].id == record.id:
            row[-1] = record  # a newer state of the same call
        else:
            row.append(record)
        by_id[record.id] = row
        if record.group_key is not None:
            groups.setdefault(record.group_key, row)
    return _as_tree([StoredRow(row[-1], tuple(row[:-1])) for row in rows])


def _as_tree(rows: list[StoredRow]) -> list[StoredRow]:
    """``rows`` in the order and depth a live turn shows them (placed one by one)."""
    shown: list[StoredRow] = []
    by_id: dict[str, StoredRow] = {}
    for row in rows:
        first = row.earlier[0] if row.earlier else row.record
        spot = place(
            shown,
            first,
            find=by_id.get,
            depth_of=lambda r: r.depth,
            record_of=lambda r: r.earlier[0] if r.earlier else r.record,
        )
        placed = dataclasses.replace(row, depth=spot.depth)
        shown.insert(spot.index(shown), placed)
        by_id.update((r.id, placed) for r in (*row.earlier, row.record))
    return shown


@dataclasses.dataclass(frozen=True)
class Drawn:
    """A stored turn's lines at one width and style, and the Activity row on each line."""

    width: int
    style: Style
    theme: str
    strips: list[Strip]
    hits: dict[int, str]


def _muted(variables: dict[str, str], background: Color) -> Color:
    """``$text-muted`` as CSS draws it on ``background`` (the colour of ``.turn-footer``)."""
    value = variables.get("text-muted", "auto 60%").split()
    if value[0] == "auto":
        alpha = float(value[1].rstrip("%")) / 100 if len(value) > 1 else 1.0
        return background + background.get_contrast_text(alpha)
    return background + Color.parse(" ".join(value))


class StoredTurnView(Widget, can_focus=True):
    """Request, answers, collapsed Activity rows and step count of a stored turn, drawn with
    the same layout as a :class:`~vis_tui.widgets.turn.TurnView` but as one widget.

    A click or focus posts :class:`Open`; the transcript then puts a full TurnView in its
    place (the clicked Activity row opened), which behaves like any other turn."""

    DEFAULT_CSS = "StoredTurnView { height: auto; margin-bottom: 1; }"

    class Open(Message):
        """Replace ``view`` with a full turn; ``record_id`` is the Activity row clicked."""

        def __init__(
            self, view: StoredTurnView, record_id: str | None, *, at_end: bool = False
        ) -> None:
            super().__init__()
            self.view = view
            self.record_id = record_id
            self.at_end = at_end  # focus reached it going back (Shift+Tab, ↑): its last row

    def __init__(self, turn: StoredTurn, *, show_steps: bool = True) -> None:
        super().__init__(classes="turn")
        self.stored = turn
        self.show_steps = show_steps
        self.turn_id = turn.turn_id
        self.position = turn.position
        self.request = turn.request
        self.status: TurnStatus = turn.status or TurnStatus.COMPLETED
        self.parts = turn.parts()
        # The rows of each run of Activities (None for an answer or a note), in order.
        self.runs = [
            stored_rows(part.activities) if part.kind is PartKind.ROWS else None
            for part in self.parts
        ]
        self.rows = [row for run in self.runs if run for row in run]
        # a child session's calls (folded under its call, shown when the turn opens) and the
        # calls a fold's row stands for
        self._hidden = under_child_session([row.record for row in self.rows]) | {
            row.record.id for row in self.rows if said_by_its_fold(row.record)
        }
        self._cache: Drawn | None = None
        # Tab reaches a stored turn with something to open (a row that opens, a fold)
        self.can_focus = any(is_expandable(r.record, r.receipts) for r in self.rows) or any(
            part.kind is PartKind.FOLD or (part.kind is PartKind.BLOCK and part.shown)
            for part in self.parts
        )
        self.focused_going_back = False  # set by whoever moved the focus back onto it

    # -- reading -------------------------------------------------------------------------
    @property
    def last_answer(self) -> str:
        texts = [p.text for p in self.parts if p.kind is PartKind.REPLY and p.text.strip()]
        return texts[-1] if texts else ""

    def text_parts(self) -> list[str]:
        """The turn's answers and Activities as plain text, in order, for the clipboard."""
        texts: list[str] = []
        for part, run in zip(self.parts, self.runs, strict=True):
            if part.kind is PartKind.REPLY:
                texts.append(part.text)
            elif run:
                texts.extend(row.as_text() for row in run)
        return texts

    # -- drawing -------------------------------------------------------------------------
    def predraw(self, width: int, painter: Widget) -> None:
        """Draw the lines now, before mounting, in the style of the mounted ``painter`` (a
        turn like this one), so the layout that mounts this view has nothing left to draw."""
        self._cache = self._draw(width, painter)

    def height_at(self, width: int, painter: Widget) -> int:
        """Rows this view will take at ``width`` (its lines drawn now if not drawn ahead)."""
        if self._cache is None or self._cache.width != width:
            self.predraw(width, painter)
        assert self._cache is not None
        return len(self._cache.strips) + painter.styles.gutter.height

    def _draw(self, width: int, painter: Widget) -> Drawn:
        """Lines at ``width`` as the turn's widgets would draw them (collapsed margins)."""
        style = painter.visual_style
        background = style.background or Color(0, 0, 0, 0)  # a painter without one: clear
        variables = painter.app.theme_variables  # those of its CSS (making them is ~0.5 ms)

        def strips_of(visual: Visual, width: int, style: Style) -> list[Strip]:
            return Visual.to_strips(painter, visual, width, None, style)

        boosted = background + Color.parse(variables["boost"])
        boost = dataclasses.replace(style, background=boosted)
        fill = RichStyle(bgcolor=boosted.rich_color)  # padding: background only
        pad = Strip.blank(1, fill)
        lines = [
            Strip.join([pad, strip.extend_cell_length(width - 2, fill), pad])
            for strip in strips_of(
                visualize(painter, request_content(self.request)), max(1, width - 2), boost
            )
        ]
        hits: dict[int, str] = {}

        def blank_of(cells: int) -> Strip:
            return Strip.blank(cells, RichStyle(bgcolor=background.rich_color))

        muted = dataclasses.replace(style, foreground=_muted(variables, background))
        indent = Strip.blank(2, RichStyle(bgcolor=background.rich_color))
        parts: list[tuple[list[Strip], int, int, list[str] | None]] = []  # margins, row ids
        folds = 0
        for part, run in zip(self.parts, self.runs, strict=True):
            if part.kind is PartKind.REPLY:
                answer = AnswerLines()  # as a live answer draws it
                answer.show(part.text)
                strips = answer.strips(width, painter, style)
                parts.append((strips, 1, 1, None))
            elif part.kind is PartKind.BLOCK:
                if part.block is None or not part.shown:
                    continue
                content = block_content(part.block, frozen=is_frozen(painter))
                cut = [line.truncate(width, ellipsis=True) for line in content.split("\n")]
                strips = strips_of(Content("\n").join(cut), width, style)  # as BlockRow
                ids = [f"{BLOCK_HIT}{part.block.iteration_id}"] * len(strips)
                parts.append((strips, 0, 0, ids))
            elif part.kind in (PartKind.NOTE, PartKind.FOLD):
                note = Content.styled(part.text, part.style)
                strips = strips_of(visualize(painter, note), max(1, width - 2), muted)
                # a click on a fold's line opens the full turn with that fold opened
                ids = [f"{FOLD_HIT}{folds}"] * len(strips) if part.kind is PartKind.FOLD else None
                folds += part.kind is PartKind.FOLD
                parts.append(([Strip.join([indent, strip]) for strip in strips], 0, 0, ids))
            elif run:
                row_strips: list[Strip] = []
                row_ids: list[str] = []
                for row in run:
                    if row.record.id in self._hidden:
                        continue
                    gap = NEST_INDENT * row.depth
                    for strip in strips_of(row.header(), max(1, width - gap), style):
                        row_strips.append(Strip.join([blank_of(gap), strip]) if gap else strip)
                        row_ids.append(row.record.id)
                parts.append((row_strips, 0, 0, row_ids))
        footer = footer_content(
            [r for row in self.rows for r in (*row.earlier, row.record)],
            self.status,
            self.stored.error,
            show_steps=self.show_steps,
        )
        if footer is not None:
            strips = strips_of(footer, max(1, width - 2), muted)
            parts.append(([Strip.join([indent, strip]) for strip in strips], 0, 0, None))
        space = RichStyle(bgcolor=background.rich_color)
        blank = Strip.blank(width, space)
        margin = 1  # the request's bottom margin; sibling margins collapse to the larger
        for strips, top, bottom, ids in parts:
            lines.extend([blank] * max(margin, top))
            if ids is not None:
                hits.update((len(lines) + n, record_id) for n, record_id in enumerate(ids))
            lines.extend(strips)
            margin = bottom
        if not parts:  # only the request: its bottom margin (a last answer's is dropped)
            lines.extend([blank] * margin)
        strips = [line.extend_cell_length(width, space) for line in lines]
        return Drawn(width, style, painter.app.theme, strips, hits)

    def _lines(self, width: int) -> tuple[list[Strip], dict[int, str]]:
        drawn = self._cache
        if (
            drawn is None
            or drawn.width != width
            or drawn.style != self.visual_style
            or drawn.theme != self.app.theme
        ):
            drawn = self._cache = self._draw(width, self)
        return drawn.strips, drawn.hits

    def _size_updated(
        self, size: Size, virtual_size: Size, container_size: Size, layout: bool = True
    ) -> bool:
        """Not a second layout when first placed: the layout that sized this line-drawn leaf
        already placed it (its virtual size is its region)."""
        return super()._size_updated(size, virtual_size, container_size, layout=False)

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(self._lines(width)[0])

    def render_line(self, y: int) -> Strip:
        strips, _ = self._lines(self.content_size.width)
        return strips[y] if 0 <= y < len(strips) else Strip.blank(self.content_size.width)

    # -- interaction ---------------------------------------------------------------------
    def on_click(self, event: Click) -> None:
        event.stop()
        _, hits = self._lines(self.content_size.width)
        self.post_message(self.Open(self, hits.get(event.y)))

    def on_focus(self) -> None:
        # A mouse press focuses before its click arrives: the click opens the row it is on.
        if getattr(self.screen, "_mouse_down_offset", None) is None:
            self.post_message(self.Open(self, None, at_end=self.focused_going_back))
        self.focused_going_back = False
