"""An answer's Markdown as lines: one renderer for streamed and stored answers.

The text is cut into top-level Markdown blocks. Every block but the last is settled (nothing
later can change it) and is drawn once per width and style; only the last, live block is
drawn again as text streams in, so a long answer costs what its newest block costs."""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass

from rich.style import Style as RichStyle
from textual.color import Color
from textual.strip import Strip
from textual.style import Style
from textual.widget import Widget


@dataclass(frozen=True)
class Block:
    """One top-level Markdown block: its source and the type of its first token."""

    source: str
    kind: str


# A line that goes on a paragraph whatever is written after its first letter: it starts
# (after up to three spaces) with no character that can begin a block, a setext underline or
# a table's delimiter row, or it is text indented four spaces or more (a lazy continuation).
_GOES_ON = re.compile(r"(?: {0,3}[^ #`~>*\-_+=<|:\[0-9\t]| {4,}[^ \t])")
# Line ends other than \n that str.splitlines cuts at, and what markdown-it reads apart
_OTHER_BREAKS = re.compile("[\r\t\x0b\x0c\x1c-\x1e\x85\u2028\u2029]")


def goes_on_paragraph(paragraph: str, added: str) -> bool:
    """Whether ``paragraph`` (a live paragraph block: the text's last block) followed by
    ``added`` is still one paragraph: every line ``added`` makes or extends goes on it, and
    none is blank. Then the text needs no new parse (a parse of a long paragraph costs
    ~65 ms for 200 KB of short lines, on each re-render)."""
    if not added or not _GOES_ON.match(paragraph) or _OTHER_BREAKS.search(added):
        return False
    head, newline, last = paragraph.rpartition("\n")
    if newline and not head[head.rfind("\n") + 1 :].strip(" \t"):
        return False  # a blank line ended the paragraph: what follows is a new block
    lines = (last + added).split("\n")
    if lines[-1] == "":  # the text ends a line: the next one is checked when it comes
        lines.pop()
    return all(_GOES_ON.match(line) for line in lines)


def fill_style(style: Style) -> RichStyle:
    """The answer's background, for blank lines and the cells after a block's text."""
    background = style.background or Color(0, 0, 0, 0)
    return RichStyle(bgcolor=background.rich_color)


def estimated_height(block: Block, width: int) -> int:
    """Lines ``block`` will likely take at ``width`` before it is drawn (a paragraph wraps;
    other blocks keep their lines, a fence gains its padding)."""
    lines = block.source.strip("\n").splitlines() or [""]
    kind = block.kind
    if kind == "paragraph_open":
        return max(1, -(-sum(len(line) + 1 for line in lines) // max(1, width)))
    return len(lines) + (2 if kind in ("fence", "code_block") else 0)


class AnswerLines:
    """The blocks of an answer's text (:meth:`show`) and their lines: a blank line between
    two blocks (a block that draws nothing, such as an HTML comment, takes none). A block is
    drawn when one of its lines is read or :meth:`draw_some` gets to it; until then its
    height is an estimate, so blocks far above the view cost nothing."""

    def __init__(self) -> None:
        self.shown = ""  # the text the blocks hold
        self._settled: list[Block] = []  # blocks nothing later can change
        self._settled_chars = 0  # the part of ``shown`` the settled blocks cover
        self._live: list[Block] = []  # the blocks after them: at most one
        self._key: tuple[int, Style, str] | None = None  # width, style, theme of ``_drawn``
        self._drawn: dict[int, list[Strip]] = {}  # lines of drawn blocks, by block index
        self._offsets: list[int] | None = None  # first line of each block
        self._total = 0

    def show(self, text: str) -> None:
        """Hold ``text``: the blocks after the settled ones are parsed again (unless the text
        only adds lines that go on its live paragraph); a text that does not go on from the
        settled part starts over."""
        live = self._live[0] if self._live else None
        if (
            live is not None
            and live.kind == "paragraph_open"
            and text.startswith(self.shown)
            and not _OTHER_BREAKS.search(text)  # lines cut as markdown-it cuts them
            and goes_on_paragraph(live.source, text[len(self.shown) :])
        ):
            self._live = [Block(live.source + text[len(self.shown) :], live.kind)]
            self._drawn.pop(len(self._settled), None)
            self.shown, self._offsets = text, None
            return
        if not text.startswith(self.shown[: self._settled_chars]):
            self._settled, self._settled_chars, self._drawn = [], 0, {}
        tail = text[self._settled_chars :]
        lines = tail.splitlines(keepends=True)
        from vis_tui.widgets.answer_markdown import top_blocks  # markdown-it: with the first answer

        blocks = top_blocks(tail)
        ends = [start for start, _ in blocks[1:]] + [len(lines)] if blocks else []
        found = [
            Block("".join(lines[start:end]), kind)
            for (start, kind), end in zip(blocks, ends, strict=True)
        ]
        self._drawn.pop(len(self._settled), None)  # the live block changed
        if len(found) > 1:  # a block that has a next one is settled
            self._settled.extend(found[:-1])
            self._settled_chars += sum(len(line) for line in lines[: blocks[-1][0]])
        self._live = found[-1:]
        self.shown = text
        self._offsets = None

    @property
    def blocks(self) -> list[Block]:
        return [*self._settled, *self._live]

    # -- lines ---------------------------------------------------------------------------
    def _use(self, width: int, painter: Widget, style: Style) -> None:
        key = (width, style, painter.app.theme)
        if key != self._key:
            self._key, self._drawn, self._offsets = key, {}, None

    def _layout(self, width: int) -> list[int]:
        if self._offsets is None:
            offsets, line, gap = [], 0, 0
            for index, block in enumerate(self.blocks):
                drawn = self._drawn.get(index)
                height = len(drawn) if drawn is not None else estimated_height(block, width)
                if height:  # one blank line between two blocks that show something
                    line += gap
                    gap = 1
                offsets.append(line)
                line += height
            self._offsets, self._total = offsets, line
        return self._offsets

    def _draw(self, index: int, width: int, painter: Widget, style: Style) -> list[Strip]:
        drawn = self._drawn.get(index)
        if drawn is None:
            settled = self._settled
            block = settled[index] if index < len(settled) else self._live[index - len(settled)]
            from vis_tui.widgets.answer_markdown import draw_block

            drawn = self._drawn[index] = draw_block(block, width, painter, style)
            self._offsets = None
        return drawn

    def height(self, width: int, painter: Widget, style: Style, *, exact_rows: int = 0) -> int:
        """Lines of the answer at ``width``; the last blocks covering ``exact_rows`` lines
        (what a view pinned to the bottom shows) are drawn, the others may be estimates."""
        self._use(width, painter, style)
        rows, index = 0, len(self.blocks) - 1
        while index >= 0 and rows < exact_rows:
            rows += len(self._draw(index, width, painter, style)) + 1
            index -= 1
        self._layout(width)
        return self._total

    def line(self, y: int, width: int, painter: Widget, style: Style) -> tuple[Strip, bool]:
        """Line ``y`` and whether drawing its block changed the answer's height."""
        self._use(width, painter, style)
        offsets = self._layout(width)
        index = bisect_right(offsets, y) - 1
        blank = Strip.blank(width, fill_style(style))
        if index < 0 or y >= self._total:
            return blank, False
        total = self._total
        strips = self._draw(index, width, painter, style)
        row = y - self._layout(width)[index]
        return (strips[row] if 0 <= row < len(strips) else blank), self._total != total

    def draw_some(self, count: int, width: int, painter: Widget, style: Style) -> bool:
        """Draw up to ``count`` blocks not drawn yet, newest first; True if any was."""
        self._use(width, painter, style)
        waiting = [i for i in range(len(self.blocks) - 1, -1, -1) if i not in self._drawn]
        for index in waiting[:count]:
            self._draw(index, width, painter, style)
        return bool(waiting)

    @property
    def complete(self) -> bool:
        """Every block is drawn at the last width used."""
        return len(self._drawn) >= len(self.blocks)

    def strips(self, width: int, painter: Widget, style: Style) -> list[Strip]:
        """Every line of the answer at ``width`` (all blocks drawn)."""
        self._use(width, painter, style)
        blank = Strip.blank(width, fill_style(style))
        lines: list[Strip] = []
        for index in range(len(self.blocks)):
            drawn = self._draw(index, width, painter, style)
            if drawn and lines:
                lines.append(blank)
            lines.extend(drawn)
        return lines
