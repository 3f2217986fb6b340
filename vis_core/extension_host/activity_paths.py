"""Shorten filesystem paths in the text a person reads of an Activity (not code or diffs)."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from vis_core.model.activity import (
    ActivityHeading,
    ActivityPresentation,
    ActivitySection,
    ActivityTable,
    ActivityText,
)
from vis_core.tools.display import shorten_path

_ABSOLUTE = re.compile(r"(?<![\w:/.~\-])/[^\s'\"`<>()\[\]{},;:|]+")


def shorten_paths_in(text: str, workspace: Path | str, home: Path | str | None = None) -> str:
    """``text`` with its absolute paths shortened; the workspace itself keeps its name (a
    bare ``.`` in a sentence reads as a full stop: "outside the workspace .")."""

    def short(match: re.Match[str]) -> str:
        shown = shorten_path(match.group(0), workspace, home)
        return shorten_path(match.group(0), "/", home) if shown == "." else shown

    return _ABSOLUTE.sub(short, text)


def shorten_presentation(
    presentation: ActivityPresentation, workspace: Path | str, home: Path | str | None = None
) -> ActivityPresentation:
    """A copy with paths shortened in headline, summary, outcome, aside, text, headings, cells;
    ``presentation`` itself when it names no absolute path (most do not: one drawn per call)."""
    if not _names_a_path(presentation):
        return presentation

    def short(text: str) -> str:
        return shorten_paths_in(text, workspace, home)

    def block(b: object) -> object:
        if isinstance(b, ActivityText):
            return ActivityText(short(b.text))
        if isinstance(b, ActivityHeading):
            return ActivityHeading(short(b.text))
        if isinstance(b, ActivityTable):
            rows = tuple(tuple(short(cell) for cell in row) for row in b.rows)
            return dataclasses.replace(b, rows=rows)
        return b

    def section(s: ActivitySection) -> ActivitySection:
        return dataclasses.replace(
            s,
            headline=short(s.headline),
            summary=short(s.summary),
            content=tuple(block(b) for b in s.content),
        )

    return dataclasses.replace(
        presentation,
        headline=short(presentation.headline),
        summary=short(presentation.summary),
        outcome=None if presentation.outcome is None else short(presentation.outcome),
        aside=None if presentation.aside is None else short(presentation.aside),
        content=tuple(block(b) for b in presentation.content),
        sections=tuple(section(s) for s in presentation.sections),
    )


def _names_a_path(presentation: ActivityPresentation) -> bool:
    """Whether any text :func:`shorten_presentation` shortens holds a ``/`` (a path has one)."""
    texts = [presentation.headline, presentation.summary, presentation.outcome, presentation.aside]
    for section in presentation.sections:
        texts += [section.headline, section.summary, *_block_texts(section.content)]
    texts += _block_texts(presentation.content)
    return any(text is not None and "/" in text for text in texts)


def _block_texts(blocks: tuple[object, ...]) -> list[str]:
    texts: list[str] = []
    for b in blocks:
        if isinstance(b, ActivityText | ActivityHeading):
            texts.append(b.text)
        elif isinstance(b, ActivityTable):
            texts += [cell for row in b.rows for cell in row]
    return texts
