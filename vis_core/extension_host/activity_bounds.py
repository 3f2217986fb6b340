"""What one Activity keeps of long text: ``MAX_ACTIVITY_BYTES`` of its blocks, then notes."""

from __future__ import annotations

import dataclasses

from vis_core.model.activity import (
    ActivityCode,
    ActivityDiff,
    ActivityMarkdown,
    ActivityPresentation,
    ActivityText,
)
from vis_core.text_limits import Keep, format_size, printable, truncate

MAX_ACTIVITY_BYTES = 256 * 1024  # of one Activity's text, Markdown, code and diff blocks
_FIELD = {
    ActivityText: "text",
    ActivityMarkdown: "markdown",
    ActivityCode: "code",
    ActivityDiff: "diff",
}


def bounded_presentation(presentation: ActivityPresentation) -> ActivityPresentation:
    """A copy whose text, Markdown, code and diff blocks hold ``MAX_ACTIVITY_BYTES`` together
    at most, in order (whole lines from the top of the block that reaches it), each cut
    block followed by a note saying how much of it is kept; ``presentation`` itself when
    they are that short (most are). Every Activity is stored with its session and drawn: a
    render showing a tool's whole input or output (the diff of a file of megabytes) would
    grow both without bound."""
    blocks = [*presentation.content, *(b for s in presentation.sections for b in s.content)]
    if sum(_size(b) for b in blocks) <= MAX_ACTIVITY_BYTES:
        return presentation
    room = [MAX_ACTIVITY_BYTES]
    return dataclasses.replace(
        presentation,
        content=_bounded(presentation.content, room),
        sections=tuple(
            dataclasses.replace(s, content=_bounded(s.content, room)) for s in presentation.sections
        ),
    )


def _text(block: object) -> str | None:
    field = _FIELD.get(type(block))
    return None if field is None else getattr(block, field)


def _size(block: object) -> int:
    text = _text(block)
    return 0 if text is None else len(text.encode("utf-8", "surrogatepass"))


def _bounded(content: tuple[object, ...], room: list[int]) -> tuple[object, ...]:
    """``content`` with its text blocks within ``room[0]`` bytes, which they use up."""
    kept: list[object] = []
    for block in content:
        text, size = _text(block), _size(block)
        if text is None or size <= room[0]:
            room[0] -= size
            kept.append(block)
            continue
        cut = truncate(printable(text), Keep.HEAD, max_lines=len(text), max_bytes=room[0])
        room[0] = 0
        if cut.text:
            kept.append(dataclasses.replace(block, **{_FIELD[type(block)]: cut.text}))  # type: ignore[arg-type]
        shown = len(cut.text.splitlines())
        kept.append(
            ActivityText(
                f"[Cut: this Activity keeps {shown:,} of these {cut.total_lines:,} lines "
                f"({format_size(len(cut.text.encode()))} of {format_size(cut.total_bytes)}).]"
            )
        )
    return tuple(kept)
