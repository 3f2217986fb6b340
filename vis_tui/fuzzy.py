"""Ranking typed text against names: those that start with it first, then fuzzy matches."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TypeVar

from textual.fuzzy import Matcher

T = TypeVar("T")
_PUNCTUATION = re.compile(r"[^0-9a-z]+")


def _bare(text: str) -> str:
    """``text`` in lower case without punctuation: ``gpt5`` matches ``openai/gpt-5``."""
    return _PUNCTUATION.sub("", text.lower())


def split_rank(query: str, items: Sequence[T], key: Callable[[T], str]) -> tuple[list[T], list[T]]:
    """``items`` for ``query`` in two lists: real matches (names starting with it, in their
    order, then names holding each of its words, punctuation aside) and loose ones (names
    holding only its letters in order, best first, as the command palette matches)."""
    typed = query.lower()
    if not typed:
        return list(items), []
    prefix = [item for item in items if key(item).lower().startswith(typed)]
    words = [word for word in map(_bare, typed.split()) if word]
    starting = set(map(id, prefix))
    holding = [
        item
        for item in items
        if words and id(item) not in starting and all(w in _bare(key(item)) for w in words)
    ]
    chosen = set(map(id, prefix + holding))
    matcher = Matcher(typed)
    scored = [(matcher.match(key(item)), n, item) for n, item in enumerate(items)]
    loose = [
        item
        for score, _, item in sorted(scored, key=lambda row: (-row[0], row[1]))
        if score > 0 and id(item) not in chosen
    ]
    return prefix + holding, loose


def rank(query: str, items: Sequence[T], key: Callable[[T], str], limit: int = 0) -> list[T]:
    """``items`` for ``query``, real matches first then loose ones (:func:`split_rank`)."""
    real, loose = split_rank(query, items, key)
    found = real + loose
    return found[:limit] if limit else found
