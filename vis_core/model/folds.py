"""A fold's spans as a person reads them: "turns 1–16", "turn 3, blocks 2–5"."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

# who made a fold, after "Folded …" (the model's own fold_session says nothing more)
FOLDED_BY = {"overflow": " by Vis (the request was too long)", "compact": " by /compact"}


def _numbers(values: Sequence[int]) -> str:
    """``1–16`` for a run, ``1, 3`` for apart, ``1–3, 5`` for both."""
    runs: list[list[int]] = []
    for value in sorted(values):
        if runs and value == runs[-1][-1] + 1:
            runs[-1].append(value)
        else:
            runs.append([value])
    return ", ".join(f"{r[0]}–{r[-1]}" if len(r) > 1 else str(r[0]) for r in runs)


def fold_scope(spans: Iterable[Sequence[int]], key: str = "") -> str:
    """What ``spans`` (``[turn position, first iteration, last iteration]``; ``[p, 0, 0]``:
    the whole turn) fold, in words: ``turns 1–16``, ``turn 3, blocks 2–5``. The fold's
    ``key`` (``t1-t16``, the model's name for it) when the spans say nothing."""
    whole: list[int] = []
    parts: list[str] = []
    for position, first, last in spans:
        if first == 0:
            whole.append(position)
        else:
            blocks = "block" if first == last else "blocks"
            parts.append(f"turn {position}, {blocks} {_numbers(range(first, last + 1))}")
    if whole:
        parts.insert(0, f"{'turn' if len(whole) == 1 else 'turns'} {_numbers(whole)}")
    return "; ".join(parts) or key
