"""Inline Markdown for one-line summaries: links (clickable), bold and code spans."""

from __future__ import annotations

import re

from textual.content import Content

from vis_tui.links import disguises

_INLINE = re.compile(
    r"\[(?P<label>[^\]]+)\]\((?P<url>[^)\s]+)\)|\*\*(?P<bold>[^*]+)\*\*|`(?P<code>[^`]+)`"
)


def inline_markdown(text: str, base_style: str = "") -> Content:
    """``text`` as Content; ``[label](url)`` becomes a link that opens ``url`` when clicked,
    followed by ``(url)`` when its label reads as another address."""
    parts: list[Content | tuple[str, str] | str] = []
    position = 0
    for match in _INLINE.finditer(text):
        if match.start() > position:
            parts.append((text[position : match.start()], base_style))
        if match.group("label") is not None:
            url, label = match.group("url"), match.group("label")
            parts.append((label, f"underline $text-accent @click=app.open_link({url!r})"))
            if disguises(label, url):
                parts.append((f" ({url})", base_style))
        elif match.group("bold") is not None:
            parts.append((match.group("bold"), f"{base_style} bold".strip()))
        else:
            parts.append((match.group("code"), "$text-warning"))
        position = match.end()
    if position < len(text):
        parts.append((text[position:], base_style))
    return Content.assemble(*parts)
