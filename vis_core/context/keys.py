"""``fold_session`` keys: parse ``t2``, ``t1-t5``, ``t2/i4-i5``, ``t2/i5-``, ``-t3``, ``-t3/i9``
and comma lists into spans of settled steps, refusing what cannot fold with the valid keys of
every turn."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

# One part of a key. ``-tN`` / ``-tN/iM``: everything through; ``tN``: a turn; ``tA-tB``: the
# turns A to B; ``tN/iA-iB``: a range; ``tN/iA-``: settled steps since iA; ``tN/iA``: one iteration.
_PART = re.compile(
    r"^(?:-t(?P<through>\d+)(?:/i(?P<through_iter>\d+))?"
    r"|t(?P<from_turn>\d+)-t(?P<to_turn>\d+)"
    r"|t(?P<turn>\d+)(?:/i(?P<first>\d+)(?P<dash>-(?:i(?P<last>\d+))?)?)?)$"
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
    """A parsed key: its spans, and the whole turns it removes (request and answer too)."""

    key: str
    spans: tuple[Span, ...] = field(default_factory=tuple)

    @property
    def whole_turns(self) -> tuple[int, ...]:
        return tuple(p for p, first, _ in self.spans if first == 0)

    @property
    def step_count(self) -> int:
        return sum(last - first + 1 for _, first, last in self.spans if first)


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


def parse_key(key: object, turns: Mapping[int, TurnSteps]) -> FoldPlan:
    """The spans ``key`` folds in a session whose turns are ``turns``; FoldKeyError if not."""
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
    return FoldPlan(text, tuple(spans))


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


def turn_runs(positions: Sequence[int]) -> list[str]:
    """Key parts naming whole turns: ``t4``, and ``t1-t60`` for three or more in a row."""
    parts: list[str] = []
    run: list[int] = []
    for position in [*sorted(positions), None]:
        if run and (position is None or position != run[-1] + 1):
            if len(run) >= 3:
                parts.append(f"t{run[0]}-t{run[-1]}")
            else:
                parts.extend(f"t{p}" for p in run)
            run = []
        if position is not None:
            run.append(position)
    return parts
