"""Apply folds to the conversation: folded steps leave the request, each gist takes their place."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from vis_core.events import ANSWER_SLOT as ANSWER
from vis_core.events import REQUEST_SLOT as REQUEST
from vis_core.events import FoldCreated
from vis_core.model.conversation import Message

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


Coverage = tuple[set[int], set[Tag]]  # whole turns, and single steps


def coverage(spans: Iterable[Sequence[int]]) -> Coverage:
    """What ``spans`` fold: whole turns, and single steps."""
    turns: set[int] = set()
    steps: set[Tag] = set()
    for position, first, last in spans:
        if first == 0:
            turns.add(position)
        else:
            steps.update((position, index) for index in range(first, last + 1))
    return turns, steps


def covers(later: Coverage, earlier: Coverage) -> bool:
    """Whether ``later`` folds everything ``earlier`` folds (its gist then stands no more)."""
    turns, steps = later
    old_turns, old_steps = earlier
    return old_turns <= turns and all(p in turns or (p, i) in steps for p, i in old_steps)


def fold_owners(folds: Sequence[FoldCreated]) -> FoldOwners:
    steps: dict[Tag, int] = {}
    turns: dict[int, int] = {}
    coverages = [coverage(fold.spans) for fold in folds]
    for number, covered in enumerate(coverages):
        _claim(steps, turns, covered, number)
    active = tuple(
        n
        for n, earlier in enumerate(coverages)
        if not any(covers(later, earlier) for later in coverages[n + 1 :])
    )
    return FoldOwners(steps, turns, active)


def with_fold(owners: FoldOwners, folds: Sequence[FoldCreated]) -> FoldOwners:
    """``fold_owners(folds)`` from ``owners`` of every fold but the last (folds only grow):
    the last fold owns what it spans, and the earlier active folds it covers step back."""
    number = len(folds) - 1
    newest = folds[number]
    steps, turns = dict(owners.steps), dict(owners.turns)
    spanned = coverage(newest.spans)
    _claim(steps, turns, spanned, number)
    active = tuple(n for n in owners.active if not covers(spanned, coverage(folds[n].spans)))
    return FoldOwners(steps, turns, (*active, number))


def _claim(steps: dict[Tag, int], turns: dict[int, int], covered: Coverage, number: int) -> None:
    """Fold ``number`` owns what it ``covered``: whole turns, and steps of a turn."""
    turns.update(dict.fromkeys(covered[0], number))
    steps.update(dict.fromkeys(covered[1], number))


def fold_positions(fold: FoldCreated) -> set[int]:
    """The turn positions ``fold`` spans."""
    return {int(span[0]) for span in fold.spans}


def gist_message(fold: FoldCreated) -> Message:
    """How a gist reads in the model's context."""
    return Message("user", f"[folded {fold.key}] {fold.gist}")


PARTIAL = -1  # an assistant message some of whose tool calls are folded


def message_owner(
    message: Message, tag: Tag, call_tags: dict[str, Tag], owners: FoldOwners
) -> int | None:
    """The fold that drops ``message`` (None: it stays; PARTIAL: some of its calls go)."""
    if message.role == "assistant" and message.tool_calls:
        numbers = [owners.owner(call_tags.get(call.id, tag)) for call in message.tool_calls]
        if all(n is None for n in numbers):
            return None
        if len(numbers) == 1 or (None not in numbers and len(set(numbers)) == 1):
            return numbers[0]
        return PARTIAL
    if message.role == "tool":
        tag = call_tags.get(message.tool_call_id or "", tag)
    return owners.owner(tag)


def apply_folds(
    messages: Sequence[Message],
    tags: Sequence[Tag],
    call_tags: dict[str, Tag],
    folds: Sequence[FoldCreated],
    owners: FoldOwners | None = None,
    verdicts: Sequence[int | None] | None = None,
) -> list[Message]:
    """``messages`` without the folded steps; each active fold's gist stands where its first
    folded step stood (a fold without a gist leaves nothing). ``owners`` is
    ``fold_owners(folds)`` and ``verdicts`` each message's :func:`message_owner`, when the
    caller keeps them."""
    if not folds:
        return list(messages)
    if owners is None:
        owners = fold_owners(folds)
    if verdicts is None:
        verdicts = [
            message_owner(m, t, call_tags, owners) for m, t in zip(messages, tags, strict=True)
        ]
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

    for message, tag, verdict in zip(messages, tags, verdicts, strict=True):
        if verdict is None:
            out.append(message)
        elif verdict != PARTIAL:
            if verdict not in placed:
                place(verdict)
        else:
            kept = []
            for call in message.tool_calls:
                number = owners.owner(call_tags.get(call.id, tag))
                if number is None:
                    kept.append(call)
                else:
                    place(number)
            out.append(replace(message, tool_calls=tuple(kept)))
    return out
