"""Text as Markdown an editor shows as that text: fenced, or escaped so no part of it (a file
name, a todo, an error) becomes a link, a heading, a list or emphasis."""

from __future__ import annotations

import re

# what opens an inline construct anywhere in a line: emphasis, code, links, autolinks and
# HTML, entities, strikethrough, tables, math, headings; a backslash escapes each (CommonMark)
_INLINE = re.compile(r"([\\`*_\[\]<>&~|$#{}^!])")
# what opens a block at the start of a line: a quote, a list item, a setext underline
# or a thematic break (the first character escaped is enough), an ordered list item
_LINE_START = re.compile(r"^(\s*)([-+=:])|^(\s*\d+)([.)])")
# what an editor's Markdown (GFM) turns into a link with no bracket: a bare URL, www.
_BARE_LINK = re.compile(r"(?<=[A-Za-z0-9])(:)(?=//)|(?<=\bwww)(\.)", re.IGNORECASE)
_INDENTED = re.compile(r"^( )(?=   |\t)|^\t")  # four columns in: a code block


def fenced(text: str, language: str = "") -> str:
    """``text`` in a Markdown code fence no line of it can close."""
    fence = "```"
    while fence in text:
        fence += "`"
    return f"{fence}{language}\n{text.rstrip()}\n{fence}"


def _line(text: str) -> str:
    escaped = _BARE_LINK.sub(r"\\\1\2", _INLINE.sub(r"\\\1", text))
    escaped = _INDENTED.sub(lambda m: "&#32;" if m[1] else "&#9;", escaped, count=1)
    return _LINE_START.sub(_escape_start, escaped, count=1)


def _escape_start(match: re.Match[str]) -> str:
    if match[2] is not None:
        return f"{match[1]}\\{match[2]}"
    return f"{match[3]}\\{match[4]}"


def literal(text: str) -> str:
    """``text`` escaped for Markdown: shown as written, each line on its own line (a hard
    break between lines; an empty line stays a paragraph break)."""
    lines = [_line(line) for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
    out = []
    for index, line in enumerate(lines):
        following = lines[index + 1] if index + 1 < len(lines) else ""
        out.append(line + "\\" if line.strip() and following.strip() else line)
    return "\n".join(out)


def literal_line(text: str) -> str:
    """``text`` escaped for Markdown on one line (a title, a plan entry): its line breaks
    become spaces."""
    return _line(" ".join(text.splitlines()))
