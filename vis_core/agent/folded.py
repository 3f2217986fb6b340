"""Apply folds to the conversation: folded steps leave the request, each gist takes their place."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from vis_core.events import ANSWER_SLOT as ANSWER
from vis_core.events import REQUEST_SLOT as REQUEST
from vis_core.events import FoldCreated
from vis_core.providers.base import Message

Tag = tuple[int, int]  # (turn position, iteration index | REQUEST | ANSWER)


@dataclass(frozen=True)
class FoldOwners:
    """Which fold owns each folded step: a later fold wins over an earlier one."""

    steps: dict[Tag, int]
    turns: dict[int, int]
    active: tuple[int, ...]

    def owner(self, tag: Tag) -> int | None:
        position, slot = tag
        whole = self.turns.get(position)
        if slot in (REQUEST, ANSWER):
            return whole
        step = self.steps.get(tag)
        if step is None:
            return whole
        return step if whole is None else max(step, whole)


def _coverage(fold: FoldCreated) -> tuple[set[int], set[Tag]]:
    turns: set[int] = set()
    steps: set[Tag] = set()
    for position, first, last in fold.spans:
        if first == 0:
            turns.add(position)
        else:
            steps.update((position, index) for index in range(first, last + 1))
    return turns, steps


def covers(later: FoldCreated, earlier: FoldCreated) -> bool:
    """``later`` covers every step ``earlier`` folded (so its gist replaces the earlier one)."""
    turns, steps = _coverage(later)
    old_turns, old_steps = _coverage(earlier)
    return old_turns <= turns and all(p in turns or (p, i) in steps for p, i in old_steps)


def fold_owners(folds: Sequence[FoldCreated]) -> FoldOwners:
    steps: dict[Tag, int] = {}
    turns: dict[int, int] = {}
    for number, fold in enumerate(folds):
        for position, first, last in fold.spans:
            if first == 0:
                turns[position] = number
            else:
                for index in range(first, last + 1):
                    steps[(position, index)] = number
    active = tuple(
        n for n, fold in enumerate(folds) if not any(covers(f, fold) for f in folds[n + 1 :])
    )
    return FoldOwners(steps, turns, active)


def gist_message(fold: FoldCreated) -> Message:
    """How a gist reads in the model's context."""
    return Message("user", f"[folded {fold.key}] {fold.gist}")


def apply_folds(
    messages: Sequence[Message],
    tags: Sequence[Tag],
    call_tags: dict[str, Tag],
    folds: Sequence[FoldCreated],
) -> list[Message]:
    """``messages`` without the folded steps; each active fold's gist stands where its first
    folded step stood (a fold without a gist leaves nothing)."""
    if not folds:
        return list(messages)
    owners = fold_owners(folds)
    active = set(owners.active)
    placed: set[int] = set()
    out: list[Message] = []

    def place(number: int | None) -> None:
        if number is None or number in placed:
            return
        placed.add(number)
        fold = folds[number]
        if number in active and fold.gist:
            out.append(gist_message(fold))

    for message, tag in zip(messages, tags, strict=True):
        if message.role == "assistant" and message.tool_calls:
            kept = []
            for call in message.tool_calls:
                number = owners.owner(call_tags.get(call.id, tag))
                if number is None:
                    kept.append(call)
                else:
                    place(number)
            if len(kept) == len(message.tool_calls):
                out.append(message)
            elif kept:
                out.append(replace(message, tool_calls=tuple(kept)))
            continue
        if message.role == "tool":
            tag = call_tags.get(message.tool_call_id or "", tag)
        number = owners.owner(tag)
        if number is None:
            out.append(message)
        else:
            place(number)
    return out
