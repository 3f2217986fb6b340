"""markdown-it and Rich for answers: where top-level blocks start, and how one is drawn.

Loaded with the first answer (or by the app's warm-up once the session is shown), not before
the first frame: markdown-it, Rich's Markdown and Pygments are a tenth of the app's start."""

from __future__ import annotations

from typing import TYPE_CHECKING

from markdown_it import MarkdownIt
from rich.markdown import Markdown as RichMarkdown
from textual.strip import Strip
from textual.style import Style
from textual.visual import Visual, visualize
from textual.widget import Widget

from vis_tui.widgets.answer_lines import fill_style

if TYPE_CHECKING:
    from vis_tui.widgets.answer_lines import Block

_PARSER = MarkdownIt().enable("strikethrough").enable("table")  # as Rich's Markdown parses
# Where blocks start needs no inline parse: a block's inline text is parsed when it is drawn.
_BLOCK_PARSER = MarkdownIt().enable("strikethrough").enable("table").disable("inline")


def top_blocks(text: str) -> list[tuple[int, str]]:
    """Each top-level Markdown block of ``text``: the line it starts on, and its kind."""
    return [
        (token.map[0], token.type)
        for token in _BLOCK_PARSER.parse(text)
        if token.level == 0 and token.map is not None and token.nesting >= 0
    ]


class _ParsedMarkdown(RichMarkdown):
    """Rich's Markdown with one shared parser (Rich builds a parser for each document)."""

    def __init__(self, block: Block) -> None:
        self.markup = block.source
        self.parsed = _PARSER.parse(block.source)
        self.code_theme = "monokai"
        self.justify = None
        self.style = "none"
        self.hyperlinks = True
        self.inline_code_lexer = None
        self.inline_code_theme = self.code_theme


def draw_block(block: Block, width: int, painter: Widget, style: Style) -> list[Strip]:
    """One block's lines at ``width``, in ``painter``'s style, each ``width`` cells long."""
    visual = visualize(painter, _ParsedMarkdown(block))
    strips = Visual.to_strips(painter, visual, width, None, style, apply_selection=False)
    fill = fill_style(style)
    plain = {None, fill.bgcolor}

    def blank(strip: Strip) -> bool:  # spaces on the answer's background
        return all(
            not seg.text.strip() and (seg.style is None or seg.style.bgcolor in plain)
            for seg in strip
        )

    first = next((n for n, strip in enumerate(strips) if not blank(strip)), len(strips))
    last = next((n for n in range(len(strips) - 1, first - 1, -1) if not blank(strips[n])), first)
    # Rich pads some blocks (a heading, a table) with blank lines; blocks here are one apart
    return [strip.extend_cell_length(width, fill) for strip in strips[first : last + 1]]
