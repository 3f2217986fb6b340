"""Benchmark of building the next request of a 500-turn session, without and with folds.

The session is restored from events (as opening a stored session does); each build is what
the loop does before every model request: system prompt, tools and the transcript with
every fold applied, and the first build after a new fold (when every message is judged
again). Target: at most 20 ms per build at 500 turns.
"""

from __future__ import annotations

import argparse
import statistics
import time
import uuid
from typing import Any

from vis_core.agent.deps import PlainHooks, SessionDeps, SessionModel
from vis_core.agent.event_bus import EventBus
from vis_core.agent.session import AgentSession
from vis_core.events import (
    BlockFinished,
    Event,
    FoldCreated,
    IterationStarted,
    TurnEnded,
    TurnStarted,
)

SESSION = "bench"
SYSTEM = "You are Vis. " * 300  # about the size of the real system prompt


class NullStore:
    def append(self, event: Event) -> int:
        return 0

    def set_title(self, session_id: str, title: str) -> None:
        return None


def history(turns: int, steps: int) -> list[Event]:
    """``turns`` settled turns of ``steps`` python_execution blocks each."""
    events: list[Event] = []
    for position in range(1, turns + 1):
        turn_id = uuid.uuid4().hex
        events.append(TurnStarted(SESSION, turn_id=turn_id, position=position, request="x" * 200))
        for index in range(1, steps + 1):
            iteration_id = f"call_{uuid.uuid4().hex[:24]}"
            code = f"print(await cat('src/module_{position}_{index}.py'))\n" * 4
            events.append(
                IterationStarted(
                    SESSION, turn_id=turn_id, iteration_id=iteration_id, index=index, code=code
                )
            )
            events.append(
                BlockFinished(
                    SESSION, turn_id=turn_id, iteration_id=iteration_id, stdout="line\n" * 300
                )
            )
        events.append(TurnEnded(SESSION, turn_id=turn_id, content="Done: " + "y" * 300))
    return events


def folds(turns: int, steps: int) -> list[Event]:
    """A realistic fold history: each 10 turns the model folds their steps, then a big fold."""
    out: list[Event] = []
    for start in range(1, turns - 50, 10):
        spans = [[p, 1, steps] for p in range(start, start + 10)]
        out.append(
            FoldCreated(
                SESSION, fold_id=uuid.uuid4().hex, key=f"t{start}..", gist="g" * 400, spans=spans
            )
        )
    out.append(
        FoldCreated(
            SESSION,
            fold_id=uuid.uuid4().hex,
            key=f"-t{turns // 2}",
            gist="G" * 2000,
            spans=[[p, 0, 0] for p in range(1, turns // 2 + 1)],
        )
    )
    return out


def session(events: list[Event]) -> AgentSession:
    store = NullStore()
    deps = SessionDeps(
        store=store,
        events=EventBus(store),  # type: ignore[arg-type]  # nothing is emitted here
        model=SessionModel(None, "claude-sonnet-4-6", "anthropic/claude-sonnet-4-6"),
        sandbox=Any,  # type: ignore[arg-type]  # not used to build a request
        invoker=None,  # type: ignore[arg-type]
        hooks=PlainHooks(SYSTEM),
    )
    return AgentSession(deps, session_id=SESSION, title="bench", history=events)


def timed(agent: AgentSession, rounds: int) -> tuple[float, int]:
    samples = []
    count = 0
    for _ in range(rounds):
        started = time.perf_counter()
        request = agent.build_request()
        samples.append((time.perf_counter() - started) * 1000)
        count = len(request.messages)
    return statistics.median(samples), count


def timed_after_a_fold(agent: AgentSession, rounds: int, turns: int) -> tuple[float, int]:
    """The first build after each new fold, as a session makes them: the receipt measures the
    request with the fold and without it, then the fold is recorded (folds only grow)."""
    samples = []
    count = 0
    folds = agent.conversation.folds
    for n in range(rounds):
        position = turns - rounds + n + 1
        fold = FoldCreated(
            SESSION, fold_id=uuid.uuid4().hex, key=f"t{position}", spans=[[position, 1, 2]]
        )
        started = time.perf_counter()
        folds.append(fold)  # the receipt's estimate: with the fold, then without it
        agent.build_request()
        folds.pop()
        agent.build_request()
        folds.append(fold)  # recorded: the next request carries it
        request = agent.build_request()
        samples.append((time.perf_counter() - started) * 1000 / 3)
        count = len(request.messages)
    return statistics.median(samples), count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--turns", type=int, default=500)
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=50)
    args = parser.parse_args()
    base = history(args.turns, args.steps)
    plain = session(base)
    folded = session(base + folds(args.turns, args.steps))
    for name, agent in (("without folds", plain), ("with folds", folded)):
        median, messages = timed(agent, args.rounds)
        print(
            f"{args.turns} turns × {args.steps} steps, {name}: next request built in "
            f"{median:.2f} ms (median of {args.rounds}), {messages} messages"
        )
    median, messages = timed_after_a_fold(folded, args.rounds, args.turns)
    print(
        f"{args.turns} turns × {args.steps} steps, builds around a new fold (receipt and next "
        f"request): {median:.2f} ms each (median of {args.rounds}), {messages} messages"
    )


if __name__ == "__main__":
    main()
