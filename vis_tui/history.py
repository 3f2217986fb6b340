"""Stored turns as the transcript shows them, read a page at a time from the store."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from vis_core.model.activity import ActivityRecord
from vis_core.model.turn import TurnStatus


@dataclass(frozen=True)
class StoredTurn:
    """One finished (or interrupted) turn with its answers and Activities."""

    turn_id: str
    position: int
    request: str
    replies: tuple[str, ...]
    activities: tuple[ActivityRecord, ...]
    status: TurnStatus | None
    error: str | None


@dataclass(frozen=True)
class TurnPage:
    """Turns oldest first; ``has_older`` says whether an older page exists."""

    turns: tuple[StoredTurn, ...]
    has_older: bool


PageLoader = Callable[[int | None], TurnPage]
PAGE_SIZE = 20


def _rows(value: Any, attribute: str) -> list[Any]:
    """The list inside a store page object (or the value itself when it is a list)."""
    if isinstance(value, list | tuple):
        return list(value)
    return list(getattr(value, attribute))


def store_page_loader(store: Any, session_id: str, limit: int = PAGE_SIZE) -> PageLoader:
    """A loader reading ``store.turns_page`` and ``store.activities`` for one session."""

    def load(before_position: int | None) -> TurnPage:
        rows = _rows(
            store.turns_page(session_id, before_position=before_position, limit=limit + 1),
            "turns",
        )
        rows.sort(key=lambda row: row.position)
        has_older = len(rows) > limit
        rows = rows[-limit:]
        turns = []
        for row in rows:
            activities = tuple(_rows(store.activities(row.id), "activities"))
            turns.append(
                StoredTurn(
                    turn_id=row.id,
                    position=row.position,
                    request=row.request,
                    replies=tuple(
                        getattr(row, "replies", ()) or ((row.content,) if row.content else ())
                    ),
                    activities=activities,
                    status=row.status,
                    error=row.error,
                )
            )
        return TurnPage(tuple(turns), has_older)

    return load
