"""What happened beside the model's answers as a person reads it, in the transcript and in an
export alike: which turns a fold took ("turns 1–16"), a command left running that ended."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

PREVIEW = 160  # characters of a gist or a command a one-line note shows

# who made a fold, after "Folded …" (the model's own fold_session says nothing more)
FOLDED_BY = {"overflow": " by Vis (the request was too long)", "compact": " by /compact"}


def runs_of(values: Iterable[int]) -> list[list[int]]:
    """``values`` in order, grouped into runs of consecutive numbers: ``[[1, 2, 3], [5]]``."""
    runs: list[list[int]] = []
    for value in sorted(values):
        if runs and value == runs[-1][-1] + 1:
            runs[-1].append(value)
        else:
            runs.append([value])
    return runs


def number_runs(values: Iterable[int]) -> str:
    """``1–16`` for a run, ``1, 3`` for apart, ``1–3, 5`` for both."""
    return ", ".join(f"{r[0]}–{r[-1]}" if len(r) > 1 else str(r[0]) for r in runs_of(values))


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
            parts.append(f"turn {position}, {blocks} {number_runs(range(first, last + 1))}")
    if whole:
        parts.insert(0, f"{'turn' if len(whole) == 1 else 'turns'} {number_runs(whole)}")
    return "; ".join(parts) or key


def background_line(data: Any) -> str:
    """A command left running has ended: ``data`` is the event or its stored row (a dict)."""

    def get(name: str) -> Any:
        return data.get(name) if isinstance(data, dict) else getattr(data, name, None)

    runtime = get("runtime")
    took = f" after {runtime:.1f}s" if isinstance(runtime, int | float) else ""
    command = " ".join(str(get("command") or "").split())
    if len(command) > PREVIEW:
        command = command[: PREVIEW - 1] + "…"
    return f"⋯ Background command {get('handle_id')} ended: {get('state')}{took} · {command}"


def background_files_line(data: Any) -> str:
    """Files changed after a turn while commands it left running ran (``data``: the event or
    its stored row): whose ``/undo`` takes them back, and the commands."""

    def get(name: str) -> Any:
        return data.get(name) if isinstance(data, dict) else getattr(data, name, None)

    commands = [" ".join(str(c).split()) for c in get("commands") or ()]
    ran = " · ".join(c if len(c) <= PREVIEW else c[: PREVIEW - 1] + "…" for c in commands)
    more = get("more") or 0
    ran += f" · and {more} more" if more else ""
    turn = get("undo_with")
    undo = f"/undo of turn {turn} takes them back" if turn else "/undo cannot take them back"
    many = "commands" if len(commands) + more > 1 else "command"
    return f"⋯ Files changed while a background {many} ran ({undo}) · {ran}"
