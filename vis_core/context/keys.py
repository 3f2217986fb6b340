"""``fold_session`` keys: parse ``t2``, ``t1-t5``, ``t2/i4-i5``, ``t2/i5-``, ``-t3``, ``-t3/i9``
and comma lists into spans of settled steps, refusing what cannot fold with the valid keys of
every turn."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from vis_core.agent.folded import Coverage, coverage, covers, fold_owners
from vis_core.events import FoldCreated
from vis_core.model.notes import runs_of

# One part of a key. ``-tN`` / ``-tN/iM``: everything through; ``tN``: a turn; ``tA-tB``: the
# turns A to B; ``tN/iA-iB``: a range; ``tN/iA-``: settled steps since iA; ``tN/iA``: one iteration.
# A number has at most 9 digits: one of 5,000 failed in int() with Python's "Exceeds the limit
# (4300 digits) for integer string conversion".
_PART = re.compile(
    r"^(?:-t(?P<through>\d{1,9})(?:/i(?P<through_iter>\d{1,9}))?"
    r"|t(?P<from_turn>\d{1,9})-t(?P<to_turn>\d{1,9})"
    r"|t(?P<turn>\d{1,9})(?:/i(?P<first>\d{1,9})(?P<dash>-(?:i(?P<last>\d{1,9}))?)?)?)$"
)
_UNDO_WORDS = frozenset({"undo", "unfold", "restore", "revert"})

Span = tuple[int, int, int]  # (turn position, first iteration, last iteration); (p, 0, 0): turn
NO_UNDO = (
    "there is no inline undo: folded steps stay saved (read_session() shows them) but do not "
    "return to the active context"
)


class FoldKeyError(ValueError):
    """A key ``fold_session`` refuses; the message names the valid keys of every turn."""


@dataclass(frozen=True)
class TurnSteps:
    """What one turn offers to fold: its iterations, and for the live turn the live step."""

    position: int
    iterations: tuple[int, ...]
    live: int | None = None  # the iteration running now (the current turn only)
    current: bool = False

    @property
    def settled(self) -> tuple[int, ...]:
        return tuple(i for i in self.iterations if self.live is None or i < self.live)


@dataclass(frozen=True)
class FoldPlan:
    """A parsed key: its spans, what of them the earlier folds in effect hold already, and
    the keys of those it covers whole (their gists give way to its own)."""

    key: str
    spans: tuple[Span, ...] = field(default_factory=tuple)
    held: Coverage = field(default_factory=lambda: (set(), set()))
    replaces: tuple[str, ...] = ()

    @property
    def leaving_turns(self) -> tuple[int, ...]:
        """The whole turns that leave the context now (request and answer too)."""
        return tuple(p for p, first, _ in self.spans if first == 0 and p not in self.held[0])

    @property
    def leaving_steps(self) -> int:
        """How many steps of its ranges leave the context now."""
        turns, steps = self.held
        return sum(
            1
            for p, first, last in self.spans
            if first and p not in turns
            for i in range(first, last + 1)
            if (p, i) not in steps
        )


def _range_text(indices: Sequence[int]) -> str:
    if not indices:
        return ""
    return f"i{indices[0]}" if len(indices) == 1 else f"i{indices[0]}-i{indices[-1]}"


def valid_keys(turns: Mapping[int, TurnSteps]) -> str:
    """The keys that fold each turn (and its steps) now, one turn per line."""
    lines = []
    for position in sorted(turns):
        turn = turns[position]
        name = f"t{position}"
        if turn.current:
            settled = turn.settled
            live = f"i{turn.live} is the live step and cannot fold" if turn.live else ""
            if settled:
                text = f"{name}/{_range_text(settled)} (settled steps of the current turn"
                lines.append(f"- {text}{'; ' + live if live else ''})")
            else:
                lines.append(f"- {name}: the current turn has no settled step yet")
            continue
        if turn.iterations:
            steps = f"{name}/{_range_text(turn.iterations)}"
            count = len(turn.iterations)
            lines.append(
                f"- {name} (the whole turn) or a range of {steps} "
                f"({count} iteration{'s' if count != 1 else ''})"
            )
        else:
            lines.append(f"- {name} (a turn without steps)")
    return "\n".join(lines) if lines else "- (no turn yet)"


def _refuse(key: str, why: str, turns: Mapping[int, TurnSteps]) -> FoldKeyError:
    return FoldKeyError(
        f"fold_session({key!r}) is refused: {why}. Iteration numbers start again in each turn; "
        f"the valid keys are:\n{valid_keys(turns)}"
    )


def _turn(position: int, key: str, turns: Mapping[int, TurnSteps]) -> TurnSteps:
    turn = turns.get(position)
    if turn is None:
        last = max(turns, default=0)
        raise _refuse(key, f"there is no turn t{position} (the turns are t1-t{last})", turns)
    return turn


def _steps(
    turn: TurnSteps, first: int, last: int | None, key: str, turns: Mapping[int, TurnSteps]
) -> Span:
    """The span of iterations ``first``..``last`` (None: the last settled one) of ``turn``; a
    range that covers a whole earlier turn is that turn (its request and answer go too)."""
    span = _step_span(turn, first, last, key, turns)
    iterations = turn.iterations
    if not turn.current and span[1:] == (iterations[0], iterations[-1]):
        return (turn.position, 0, 0)
    return span


def _step_span(
    turn: TurnSteps, first: int, last: int | None, key: str, turns: Mapping[int, TurnSteps]
) -> Span:
    name = f"t{turn.position}"
    live = turn.live
    if not turn.iterations:
        raise _refuse(key, f"turn {name} has no iterations; fold it whole with {name!r}", turns)
    if live is not None and first <= live <= (last if last is not None else first):
        raise _refuse(key, f"you cannot fold the live step ({name}/i{live})", turns)
    if first not in turn.iterations:
        raise _refuse(
            key,
            f"turn {name} has no iteration i{first} (it has {_range_text(turn.iterations)})",
            turns,
        )
    if last is None:
        settled = [i for i in turn.settled if i >= first]
        if not settled:
            raise _refuse(key, f"turn {name} has no settled step from i{first} on", turns)
        return (turn.position, first, settled[-1])
    if last not in turn.iterations:
        raise _refuse(
            key,
            f"turn {name} has no iteration i{last} (it has {_range_text(turn.iterations)})",
            turns,
        )
    if first > last:
        raise _refuse(key, f"the range {name}/i{first}-i{last} ends before it starts", turns)
    return (turn.position, first, last)


def _whole(turn: TurnSteps, key: str, turns: Mapping[int, TurnSteps]) -> list[Span]:
    """A whole earlier turn, or the settled steps of the current one."""
    if not turn.current:
        return [(turn.position, 0, 0)]
    if not turn.settled:
        raise _refuse(
            key, f"the current turn t{turn.position} has no settled step to fold yet", turns
        )
    return [(turn.position, turn.settled[0], turn.settled[-1])]


def _part(text: str, key: str, turns: Mapping[int, TurnSteps]) -> list[Span]:
    match = _PART.match(text)
    if match is None:
        if text.lower().lstrip("+!~") in _UNDO_WORDS or text[:1] in "+!~":
            raise _refuse(key, NO_UNDO, turns)
        raise _refuse(
            key,
            f"{text!r} is not a key; write t2, t1-t5, t2/i4-i5, t2/i5-, -t3 or -t3/i9, "
            "and join disjoint ranges with commas",
            turns,
        )
    if any(number.startswith("0") and number != "0" for number in re.findall(r"\d+", text)):
        fixed = re.sub(r"\d+", lambda number: str(int(number[0])), text)
        raise _refuse(key, f"write {fixed!r}, not {text!r}: numbers have no leading zeros", turns)
    if match["through"] is not None:
        position = int(match["through"])
        last_turn = _turn(position, key, turns)
        spans = [
            span
            for p in sorted(turns)
            if p < position
            for span in _whole(turns[p], key, turns)
            if not (turns[p].current and not turns[p].settled)
        ]
        if match["through_iter"] is not None:
            spans.append(_steps(last_turn, 1, int(match["through_iter"]), key, turns))
        elif not (last_turn.current and not last_turn.settled) or not spans:
            spans.extend(_whole(last_turn, key, turns))
        return spans
    if match["from_turn"] is not None:
        first, last = int(match["from_turn"]), int(match["to_turn"])
        if first > last:
            raise _refuse(key, f"the range t{first}-t{last} ends before it starts", turns)
        return [
            span
            for p in range(first, last + 1)
            for span in _whole(_turn(p, key, turns), key, turns)
        ]
    turn = _turn(int(match["turn"]), key, turns)
    if match["first"] is None:
        return _whole(turn, key, turns)
    first = int(match["first"])
    if match["dash"] is None:
        return [_steps(turn, first, first, key, turns)]
    last = match["last"]
    return [_steps(turn, first, int(last) if last is not None else None, key, turns)]


def _overlap(a: Span, b: Span) -> bool:
    if a[0] != b[0]:
        return False
    if a[1] == 0 or b[1] == 0:
        return True
    return a[1] <= b[2] and b[1] <= a[2]


def parse_key(
    key: object, turns: Mapping[int, TurnSteps], folds: Sequence[FoldCreated] = ()
) -> FoldPlan:
    """The spans ``key`` folds in a session whose turns are ``turns`` and whose earlier folds
    are ``folds``; FoldKeyError if not (see :func:`_over`)."""
    if not isinstance(key, str):
        raise FoldKeyError(
            f"fold_session: key must be text such as 't2' or '-t3/i9', not {type(key).__name__}"
        )
    text = key.strip()
    if not text:
        raise _refuse(key, "the key is empty", turns)
    spans: list[Span] = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            raise _refuse(key, "an empty part between commas", turns)
        for span in _part(part, key, turns):
            clash = next((s for s in spans if _overlap(s, span)), None)
            if clash is not None:
                raise _refuse(
                    key,
                    f"t{span[0]} is named twice; commas join disjoint ranges",
                    turns,
                )
            spans.append(span)
    spans.sort()
    return _over(FoldPlan(text, tuple(spans)), folds, key, turns)


def _clash(spans: Sequence[Span], earlier: Coverage) -> Span | None:
    """The first of ``spans`` that takes again what ``earlier`` folded: a turn it folded
    whole, or one of its steps. A whole turn over some folded steps of it is no clash: the
    turn's request, answer and other steps leave, and the earlier gist stays."""
    turns, steps = earlier
    for span in spans:
        position, first, last = span
        if position in turns or (
            first and any((position, i) in steps for i in range(first, last + 1))
        ):
            return span
    return None


def _over(
    plan: FoldPlan, folds: Sequence[FoldCreated], key: str, turns: Mapping[int, TurnSteps]
) -> FoldPlan:
    """``plan`` over the earlier folds in effect: one it covers whole gives way to it (the
    same steps with a new gist, or more); one it takes part of again (:func:`_clash`) without
    covering it refuses it, by that fold's key, since both gists would stand for what has
    left already."""
    if not folds:
        return plan
    new = coverage(plan.spans)
    held: Coverage = (set(), set())
    replaces: list[str] = []
    for number in fold_owners(folds).active:
        earlier = folds[number]
        old = coverage(earlier.spans)
        held[0].update(old[0])
        held[1].update(old[1])
        if covers(new, old):
            replaces.append(earlier.key)
            continue
        clash = _clash(plan.spans, old)
        if clash is not None:
            raise _refuse(
                key,
                f"{describe_spans([clash])} was folded already by {earlier.key!r}, which stays; "
                "fold only what no fold holds yet, or a key that covers that whole fold "
                "(its gist is then replaced)",
                turns,
            )
    return replace(plan, held=held, replaces=tuple(replaces))


def unfolded_turns_key(
    turns: Mapping[int, TurnSteps], folded_whole: set[int], current: int
) -> str | None:
    """The exact key that folds every earlier turn not folded yet (so earlier gists stay):
    ``-tN`` when none is folded, else the turns (runs as ``tA-tB``) joined by commas; None
    without one."""
    earlier = [p for p in sorted(turns) if p < current]
    open_turns = [p for p in earlier if p not in folded_whole]
    if not open_turns:
        return None
    if open_turns == earlier:
        return f"-t{earlier[-1]}"
    return ",".join(turn_runs(open_turns))


def settled_steps_key(turn: TurnSteps, folded: set[int]) -> str | None:
    """The key that folds the settled steps of the current ``turn`` that no fold holds yet
    (``folded``: iteration indices): ``t4/i1-``, or its runs such as ``t4/i1,t4/i4-``; None
    without one. It never takes part of an earlier fold, so that fold's gist stays."""
    name = f"t{turn.position}"
    parts = [
        f"{name}/i{run[0]}-" if run[-1] == turn.settled[-1] else f"{name}/{_range_text(run)}"
        for run in runs_of(index for index in turn.settled if index not in folded)
    ]
    return ",".join(parts) or None


def turn_runs(positions: Sequence[int]) -> list[str]:
    """Key parts naming whole turns: ``t4``, and ``t1-t60`` for three or more in a row."""
    parts: list[str] = []
    for run in runs_of(positions):
        if len(run) >= 3:
            parts.append(f"t{run[0]}-t{run[-1]}")
        else:
            parts.extend(f"t{p}" for p in run)
    return parts


def describe_spans(spans: Sequence[Sequence[int]]) -> str:
    """``t1-t60, t61/i3-i5``: what a fold covers, for people (and a key ``fold_session`` takes,
    without the spaces)."""
    parts: list[str] = []
    whole: list[int] = []  # whole turns in a row: one range
    for position, first, last in spans:
        if first == 0:
            whole.append(position)
            continue
        parts.extend(turn_runs(whole))
        whole = []
        parts.append(f"t{position}/i{first}" if first == last else f"t{position}/i{first}-i{last}")
    parts.extend(turn_runs(whole))
    return ", ".join(parts)
