"""markdown-it and Rich for answers: where top-level blocks start, and how one is drawn.

Loaded with the first answer (or by the app's warm-up once the session is shown), not before
the first frame: markdown-it, Rich's Markdown and Pygments are a tenth of the app's start."""

from __future__ import annotations

import re
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.token import Token
from rich.cells import cell_len
from rich.markdown import Markdown as RichMarkdown
from rich.segment import Segment
from textual.strip import Strip
from textual.style import Style
from textual.visual import Visual, visualize
from textual.widget import Widget

from vis_tui.links import disguises, opens
from vis_tui.widgets.answer_lines import Block, fill_style

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
        self.parsed = _without_unsafe_links(_PARSER.parse(block.source))
        self.code_theme = "monokai"
        self.justify = None
        self.style = "none"
        self.hyperlinks = True
        self.inline_code_lexer = None
        self.inline_code_theme = self.code_theme


def _without_unsafe_links(tokens: list[Token]) -> list[Token]:
    """``tokens`` with each link that is not a web or mail address (:mod:`vis_tui.links`)
    written as ``text (address)`` instead of a terminal hyperlink, and such an image's
    address dropped: the terminal would hand it to whatever program opens that scheme. A
    link whose text reads as another address stays a link, with its address after it."""
    for token in tokens:
        children: list[Token] = []
        links: list[tuple[str, bool, list[str]]] = []  # per open link: address, drawn, text
        for child in token.children or ():
            if child.type == "link_open":
                href = str(child.attrs.get("href", ""))
                links.append((href, opens(href), []))
                if not links[-1][1]:
                    continue
            elif child.type == "link_close" and links:
                href, drawn, text = links.pop()
                if drawn:
                    children.append(child)
                if not drawn or disguises("".join(text), href):
                    children.append(Token("text", "", 0, content=f" ({href})"))
                continue
            elif child.type == "image" and not opens(str(child.attrs.get("src", ""))):
                child.attrs["src"] = ""
            elif links and child.type in ("text", "code_inline"):
                links[-1][2].append(child.content)
            children.append(child)
        if token.children:
            token.children = children
    return tokens


class ShownLinksParser(MarkdownIt):
    """The parser of Textual's Markdown widget (a Markdown block) with the answer's link
    rules: a link it would not open, or whose text reads as another address, shows it."""

    def __init__(self) -> None:
        super().__init__("gfm-like")

    def parse(self, src: str, env: Any = None) -> list[Token]:
        return _without_unsafe_links(super().parse(src, env))


LONG_PARAGRAPH = 2_000  # characters from which a paragraph of plain words is wrapped here
_WORD = re.compile("[^ ]")
# What starts an inline rule of markdown-it's CommonMark set (escape, code, emphasis, strike,
# link, image, autolink, HTML, entity) or a hard line break (two spaces, or a tab, before it)
_MARKUP = re.compile(r"[\\`*_~\[\]!<&]|  \n|\t")


def draw_block(block: Block, width: int, painter: Widget, style: Style) -> list[Strip]:
    """One block's lines at ``width``, in ``painter``'s style, each ``width`` cells long."""
    if block.kind == "paragraph_open" and len(block.source) >= LONG_PARAGRAPH:
        lines = plain_paragraph_lines(block, width, painter, style)
        if lines is not None:
            return lines
    return rich_lines(block, width, painter, style)


def rich_lines(block: Block, width: int, painter: Widget, style: Style) -> list[Strip]:
    """``block`` drawn by Rich's Markdown."""
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


def plain_paragraph_lines(
    block: Block, width: int, painter: Widget, style: Style
) -> list[Strip] | None:
    """The lines Rich draws for a paragraph of plain words (no inline markup, no line break,
    every character one cell wide and no word longer than a line), wrapped here: Rich wraps
    word by word and measures every line again, ~0.5 s for one 200 KB paragraph. None for
    any other block, which Rich draws."""
    text = _plain_text(block.source)
    if text is None or width <= 0:
        return None
    starts = _line_starts(text, width)
    if starts is None:
        return None
    # the style of a paragraph's cells, text and padding alike, as Rich draws them
    sample = rich_lines(Block("x", block.kind), width, painter, style)
    segments = list(sample[0]) if len(sample) == 1 else []
    if len(segments) != 1 or segments[0].text != "x".ljust(width):
        return None  # the text and the padding are not drawn alike
    cells = segments[0].style
    bounds = [0, *starts, len(text)]
    return [
        Strip([Segment(text[start:end][:width].ljust(width), cells)], width)
        for start, end in zip(bounds, bounds[1:], strict=False)
    ]


def _plain_text(source: str) -> str | None:
    """What Rich's Markdown shows of a paragraph made only of text and soft line breaks (a
    soft break is a space), when every character is printable and one cell wide and it
    starts with a word; otherwise None."""
    if _MARKUP.search(source) is None:  # no inline rule of markdown-it applies: text alone
        text = _joined_lines(source)
    else:
        tokens = _PARSER.parse(source)
        if [token.type for token in tokens] != ["paragraph_open", "inline", "paragraph_close"]:
            return None
        parts: list[str] = []
        for child in tokens[1].children or ():
            if child.type == "text":
                parts.append(child.content)
            elif child.type == "softbreak":
                parts.append(" ")
            else:
                return None
        text = "".join(parts)
    if not text or text[0] == " " or not text.isprintable():  # tabs, other spaces, controls
        return None
    if not text.isascii() and any(cell_len(char) != 1 for char in set(text)):
        return None
    return text


def _joined_lines(source: str) -> str:
    """A paragraph's lines as markdown-it reads them with no inline markup: the content
    stripped, a line break a soft break (one space before it dropped, the next line's
    indent skipped)."""
    lines = source.strip().split("\n")
    last = len(lines) - 1
    return " ".join(
        (line.lstrip(" \t") if n else line).removesuffix(" " if n < last else "")
        for n, line in enumerate(lines)
    )


def _line_starts(text: str, width: int) -> list[int] | None:
    """Where each line after the first starts when Rich wraps ``text`` (words apart by spaces,
    each character one cell) at ``width`` (``rich._wrap.divide_line``: a word goes on the
    line while its last letter fits; spaces after it never push it on), or None when a word
    is longer than a line (Rich folds it)."""
    starts: list[int] = []
    start, end = 0, len(text)
    while start + width < end:
        edge = start + width  # the first cell past the line
        if text[edge] == " ":  # every word begun on the line ends by its edge
            word = _WORD.search(text, edge)
            if word is None:
                break  # only spaces follow
            following = word.start()
        else:  # the word across the edge starts the next line
            following = text.rfind(" ", start, edge) + 1
            if following <= start:
                return None
        starts.append(following)
        start = following
    return starts
