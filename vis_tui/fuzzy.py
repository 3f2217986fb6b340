"""Ranking typed text against names: those that start with it first, then fuzzy matches."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from textual.fuzzy import Matcher

T = TypeVar("T")


def rank(query: str, items: Sequence[T], key: Callable[[T], str], limit: int = 0) -> list[T]:
    """``items`` for ``query``: names starting with it (in their order), then names holding
    its letters in order, best first (as the command palette matches); all for an empty one."""
    typed = query.lower()
    if not typed:
        return list(items[:limit] if limit else items)
    prefix = [item for item in items if key(item).lower().startswith(typed)]
    chosen = set(map(id, prefix))
    matcher = Matcher(typed)
    scored = [(matcher.match(key(item)), n, item) for n, item in enumerate(items)]
    fuzzy = [
        item
        for score, _, item in sorted(scored, key=lambda row: (-row[0], row[1]))
        if score > 0 and id(item) not in chosen
    ]
    found = prefix + fuzzy
    return found[:limit] if limit else found
