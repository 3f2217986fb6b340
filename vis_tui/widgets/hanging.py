"""A one-line header that wraps under its text (a hanging indent), not under its lead glyphs;
lines of such headers stacked."""

from __future__ import annotations

from rich.segment import Segment
from rich.style import Style as RichStyle
from textual.content import Content
from textual.css.styles import RulesMap
from textual.geometry import Offset
from textual.selection import Selection
from textual.strip import Strip
from textual.style import Style
from textual.visual import RenderOptions, Visual

MIN_TEXT_WIDTH = 8  # narrower than this beside the lead: wrapped as one text, like a Content


class HangingLine(Visual):
    """``lead`` (an Activity's disclosure marker and state glyph), then ``text``; when the
    text is too long for the width, its next lines start under its first character.

    Text selection reads and highlights it as the one line ``lead + text``."""

    def __init__(self, lead: Content, text: Content) -> None:
        self.lead = lead
        self.text = text

    @property
    def plain(self) -> str:
        return self.lead.plain + self.text.plain

    def __str__(self) -> str:
        return self.plain

    def __repr__(self) -> str:
        return f"HangingLine({self.plain!r})"

    @property
    def whole(self) -> Content:
        return self.lead + self.text

    def _indent(self, width: int) -> int | None:
        """Columns the wrapped lines are indented by at ``width`` (None: too narrow)."""
        indent = self.lead.cell_length
        return indent if width - indent >= MIN_TEXT_WIDTH else None

    def get_optimal_width(self, rules: RulesMap, container_width: int) -> int:
        return self.whole.get_optimal_width(rules, container_width)

    def get_minimal_width(self, rules: RulesMap) -> int:
        return self.lead.cell_length + self.text.get_minimal_width(rules)

    def get_height(self, rules: RulesMap, width: int) -> int:
        indent = self._indent(width)
        if indent is None:
            return self.whole.get_height(rules, width)
        return self.text.get_height(rules, width - indent)

    def render_strips(
        self, width: int, height: int | None, style: Style, options: RenderOptions
    ) -> list[Strip]:
        indent = self._indent(width)
        if indent is None:
            return self.whole.render_strips(width, height, style, options)
        shift = len(self.lead.plain)  # the text's characters come after the lead's
        lead = self.lead.render_strips(indent, 1, style, options)[0]
        text_options = RenderOptions(
            options.get_style,
            options.rules,
            _shifted_selection(options.selection, -shift),
            options.selection_style,
            options.post_style,
        )
        lines = self.text.render_strips(width - indent, height, style, text_options)
        blank = Strip.blank(indent, style.rich_style)
        return [
            Strip.join([lead if n == 0 else blank, _shifted_offsets(line, shift)])
            for n, line in enumerate(lines)
        ]


class StackedLines(Visual):
    """One-line visuals (a :class:`HangingLine`, a one-line ``Content``) one under the other,
    each wrapped at the whole width; selection reads them as lines of one text."""

    def __init__(self, *lines: Visual) -> None:
        self.lines = lines

    def __str__(self) -> str:
        return "\n".join(map(str, self.lines))

    def __repr__(self) -> str:
        return f"StackedLines({str(self)!r})"

    def get_optimal_width(self, rules: RulesMap, container_width: int) -> int:
        return max(
            (line.get_optimal_width(rules, container_width) for line in self.lines), default=0
        )

    def get_minimal_width(self, rules: RulesMap) -> int:
        return max((line.get_minimal_width(rules) for line in self.lines), default=1)

    def get_height(self, rules: RulesMap, width: int) -> int:
        return sum(line.get_height(rules, width) for line in self.lines)

    def render_strips(
        self, width: int, height: int | None, style: Style, options: RenderOptions
    ) -> list[Strip]:
        strips: list[Strip] = []
        for y, line in enumerate(self.lines):
            line_options = RenderOptions(
                options.get_style,
                options.rules,
                _shifted_selection(options.selection, 0, -y),
                options.selection_style,
                options.post_style,
            )
            drawn = line.render_strips(width, None, style, line_options)
            strips += (_shifted_offsets(strip, 0, y) for strip in drawn)
        return strips if height is None else strips[:height]


def _shifted_selection(selection: Selection | None, x: int, y: int = 0) -> Selection | None:
    """``selection`` of the whole, as offsets into a part that starts ``-x`` columns and
    ``-y`` lines into it."""
    if selection is None:
        return None

    def moved(offset: Offset | None) -> Offset | None:
        return None if offset is None else Offset(max(0, offset.x + x), offset.y + y)

    return Selection(moved(selection.start), moved(selection.end))


def _shifted_offsets(strip: Strip, x: int, y: int = 0) -> Strip:
    """``strip`` of a part, its characters' offsets (what a mouse selection reads) counted
    from the start of the whole: ``x`` columns and ``y`` lines on."""
    segments: list[Segment] = []
    for text, segment_style, control in strip:
        offset = segment_style.meta.get("offset") if segment_style is not None else None
        if segment_style is not None and offset is not None:
            moved = RichStyle.from_meta({"offset": (offset[0] + x, offset[1] + y)})
            segment_style = segment_style + moved
        segments.append(Segment(text, segment_style, control))
    return Strip(segments, strip.cell_length)


CONTINUED = "↪ "  # the mark a cut line of code goes on after


class ContinuedLines(Visual):
    """Lines of code: one too long for the width is cut (not wrapped at words) and goes on
    under a ``↪`` mark, so its rest never reads as a line of its own. Selection reads the
    code as it is, without the marks."""

    def __init__(self, code: Content) -> None:
        self.code = code
        self.lines = code.split("\n", allow_blank=True)

    @property
    def plain(self) -> str:
        return self.code.plain

    def __str__(self) -> str:
        return self.code.plain

    def __repr__(self) -> str:
        return f"ContinuedLines({self.code.plain!r})"

    def get_optimal_width(self, rules: RulesMap, container_width: int) -> int:
        return self.code.get_optimal_width(rules, container_width)

    def get_minimal_width(self, rules: RulesMap) -> int:
        return len(CONTINUED) + MIN_TEXT_WIDTH

    @staticmethod
    def _pieces(line: Content, width: int) -> list[Content]:
        """``line`` cut to ``width``: its first piece, then pieces that fit beside the mark."""
        if line.cell_length <= width or width < len(CONTINUED) + MIN_TEXT_WIDTH:
            return line.fold(max(width, 2)) if line.cell_length > width else [line]
        first = line.fold(width)[0]
        return [first, *line[len(first.plain) :].fold(width - len(CONTINUED))]

    def get_height(self, rules: RulesMap, width: int) -> int:
        return sum(len(self._pieces(line, width)) for line in self.lines)

    def render_strips(
        self, width: int, height: int | None, style: Style, options: RenderOptions
    ) -> list[Strip]:
        if not width:
            return []
        mark = Content.styled(CONTINUED, "$text-muted")
        marked = width >= len(CONTINUED) + MIN_TEXT_WIDTH
        lead = mark.render_strips(len(CONTINUED), 1, style, options)[0] if marked else None
        strips: list[Strip] = []
        for y, line in enumerate(self.lines):
            x = 0
            for n, piece in enumerate(self._pieces(line, width)):
                piece_options = RenderOptions(
                    options.get_style,
                    options.rules,
                    _shifted_selection(options.selection, -x, -y),
                    options.selection_style,
                    options.post_style,
                )
                room = width - len(CONTINUED) if n and lead else width
                drawn = piece.render_strips(room, 1, style, piece_options)
                strip = _shifted_offsets(drawn[0], x, y) if drawn else Strip.blank(0)
                strips.append(Strip.join([lead, strip]) if n and lead else strip)
                x += len(piece.plain)
        return strips if height is None else strips[:height]
