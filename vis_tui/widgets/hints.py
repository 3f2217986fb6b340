"""Key hints that keep what a newcomer needs most when the line is narrow."""

from __future__ import annotations

from collections.abc import Sequence

from textual.content import Content
from textual.widgets import Static

# A hint and its rank: the hint of the highest rank is left out first where the line is too
# narrow; rank 0 (how to leave, where help is) is always kept.
Hint = tuple[str, int]


def fit_hints(hints: Sequence[Hint], width: int) -> str:
    """``hints`` joined with " · ", in ``width`` cells if they can be: the hint of the highest
    rank left out first (of equal ranks, the rightmost), never one of rank 0. Cut at the end,
    a line lost the hints it ended with, "Esc close" and "F1 keys" among them."""
    kept = list(hints)
    while Content(" · ".join(text for text, _ in kept)).cell_length > width:
        rank = max(rank for _, rank in kept)
        if rank == 0:
            break
        kept.pop(max(n for n, (_, r) in enumerate(kept) if r == rank))
    return " · ".join(text for text, _ in kept)


class HintLine(Static):
    """One muted line of key hints, fitted to its width (:func:`fit_hints`)."""

    def __init__(self, hints: Sequence[Hint], *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.hints = tuple(hints)

    def render(self) -> Content:
        return Content.styled(fit_hints(self.hints, self.content_size.width), "$text-muted")
