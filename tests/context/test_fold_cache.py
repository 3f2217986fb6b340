"""The fold verdicts a conversation keeps between requests give the same request as judging
every message again, whatever the order of folds added, taken back and new turns."""

from __future__ import annotations

import random

from vis_core.agent.conversation import ConversationBuilder
from vis_core.agent.folded import apply_folds
from vis_core.events import (
    BlockFinished,
    FoldCreated,
    IterationStarted,
    TurnEnded,
    TurnStarted,
)

S = "s"


def add_turn(builder: ConversationBuilder, position: int, steps: int) -> None:
    turn = f"turn-{position}"
    builder.add(TurnStarted(S, turn_id=turn, position=position, request=f"request {position}"))
    for index in range(1, steps + 1):
        call = f"call-{position}-{index}"
        builder.add(IterationStarted(S, turn_id=turn, iteration_id=call, index=index, code="x"))
        if index % 3 == 0:  # the next call joins the same assistant message
            continue
        builder.add(BlockFinished(S, turn_id=turn, iteration_id=call, stdout=f"out {call}"))
    builder.add(TurnEnded(S, turn_id=turn, content=f"answer {position}"))


def random_fold(rng: random.Random, turns: int, steps: int, n: int) -> FoldCreated:
    spans = []
    for position in sorted(rng.sample(range(1, turns + 1), rng.randint(1, 3))):
        if rng.random() < 0.4:
            spans.append([position, 0, 0])
        else:
            first = rng.randint(1, steps)
            spans.append([position, first, rng.randint(first, steps)])
    gist = f"gist {n}" if rng.random() < 0.8 else ""
    return FoldCreated(S, fold_id=str(n), key=f"k{n}", gist=gist, spans=spans)


def test_kept_verdicts_match_judging_everything_again() -> None:
    rng = random.Random(20261201)
    steps = 5
    for _ in range(20):
        builder = ConversationBuilder()
        turns = 6
        for position in range(1, turns + 1):
            add_turn(builder, position, steps)
        for n in range(40):
            roll = rng.random()
            if roll < 0.5:
                builder.folds.append(random_fold(rng, turns, steps, n))
            elif roll < 0.65 and builder.folds:
                builder.folds.pop()  # a receipt's estimate takes its fold back
            elif roll < 0.8:
                turns += 1
                add_turn(builder, turns, rng.randint(0, steps))
            fresh = apply_folds(builder.messages, builder.tags, builder.call_tags, builder.folds)
            assert builder.request_messages() == fresh, n
