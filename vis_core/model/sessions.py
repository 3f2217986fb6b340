"""Stored sessions and turns as the store returns them and front ends read them."""

from __future__ import annotations

from dataclasses import dataclass, field

from vis_core.model.turn import TurnStatus
from vis_core.model.usage import Usage


@dataclass(frozen=True)
class SessionRow:
    """One stored session."""

    id: str
    title: str
    group: str | None
    workspace: str
    project_root: str
    created: float
    modified: float
    forked_from: str | None
    usage: Usage
    cost: float
    turn_count: int
    parent_id: str | None = None  # the session that started this one (a child session)


@dataclass(frozen=True)
class TurnRow:
    """One turn of a session."""

    id: str
    session_id: str
    position: int
    request: str
    status: TurnStatus
    content: str
    usage: Usage
    cost: float
    error: str | None
    started: float
    ended: float | None
    replies: tuple[str, ...] = ()


SNIPPET_MARK = "**"  # around each match in a search hit's snippet (Markdown bold, for the model)


def snippet_parts(snippet: str) -> list[tuple[str, bool]]:
    """A snippet as its pieces of text, each with whether it is a match (between marks):
    what a person sees is the match set apart, not the marks."""
    pieces = snippet.split(SNIPPET_MARK)
    if len(pieces) % 2 == 0:  # a mark without its pair (the text had one): nothing is a match
        return [(snippet, False)]
    return [(piece, n % 2 == 1) for n, piece in enumerate(pieces) if piece]


@dataclass(frozen=True)
class SearchHit:
    """A session matching a search; ``fields`` lists where it matched, best first."""

    session: SessionRow
    rank: int
    fields: tuple[str, ...]
    snippet: str
    snippets: dict[str, str] = field(default_factory=dict)
