"""Make a fold: the turns a session offers, the receipt's local estimate and the event."""

from __future__ import annotations

import dataclasses
import json
import uuid
from collections.abc import Sequence
from enum import StrEnum
from typing import Any, Protocol

from vis_core.agent.folded import gist_message
from vis_core.context.keys import FoldPlan, TurnSteps
from vis_core.events import Event, FoldCreated
from vis_core.model.conversation import Message
from vis_core.providers.common import estimate_tokens


class FoldOrigin(StrEnum):
    """Who made a fold."""

    MODEL = "model"  # fold_session in python_execution
    OVERFLOW = "overflow"  # Vis, after the provider refused a too-long request
    COMPACT = "compact"  # /compact


class FoldingSession(Protocol):
    """What folding needs of an agent session."""

    id: str
    context_tokens: int

    @property
    def conversation(self) -> Any: ...

    @property
    def model_label(self) -> str: ...

    async def emit(self, event: Event) -> None: ...


def turn_steps(conversation: Any, live_iteration: str | None = None) -> dict[int, TurnSteps]:
    """Every turn of ``conversation`` as folds see it; the latest unended turn is current and
    ``live_iteration`` (an iteration id) its live step."""
    shapes = conversation.turns
    current = max(shapes, default=0)
    out: dict[int, TurnSteps] = {}
    for position, shape in shapes.items():
        is_current = position == current and not shape.ended
        live = shape.ids.get(live_iteration) if is_current and live_iteration else None
        if is_current and live is None:  # between blocks: every finished step is settled
            unsettled = [i for i in shape.ids.values() if i not in shape.settled]
            live = unsettled[0] if unsettled else None
        out[position] = TurnSteps(position, tuple(shape.ids.values()), live, is_current)
    return out


def message_chars(messages: Sequence[Message]) -> int:
    """Characters a list of messages sends (text and tool call arguments)."""
    total = 0
    for message in messages:
        total += len(message.text)
        for call in message.tool_calls:
            total += len(call.name) + len(json.dumps(call.arguments, ensure_ascii=False))
    return total


def build_fold(
    session: FoldingSession,
    plan: FoldPlan,
    gist: str,
    *,
    origin: FoldOrigin,
    turn_id: str,
    iteration_id: str | None = None,
) -> FoldCreated:
    """The event of folding ``plan`` with ``gist``, with the receipt's local estimate."""
    conversation = session.conversation
    fold = FoldCreated(
        session.id,
        fold_id=uuid.uuid4().hex,
        turn_id=turn_id,
        iteration_id=iteration_id,
        key=plan.key,
        gist=gist,
        spans=[list(span) for span in plan.spans],
        origin=origin.value,
        before_input_tokens=session.context_tokens,
        model=session.model_label,
    )
    before = message_chars(conversation.request_messages())
    conversation.folds.append(dataclasses.replace(fold, gist=""))  # what leaves, gist apart
    try:
        after = message_chars(conversation.request_messages())
    finally:
        conversation.folds.pop()
    removed = max(0, before - after)
    return dataclasses.replace(fold, removed_tokens=estimate_tokens(removed))


def gist_tokens(fold: FoldCreated) -> int:
    """The local estimate of what a fold's gist brings into the context."""
    return estimate_tokens(message_chars([gist_message(fold)])) if fold.gist else 0


def receipt(fold: FoldCreated, plan: FoldPlan) -> str:
    """What ``fold_session`` returns: what left (not what earlier folds took out already),
    the earlier folds it replaces, the local estimate, and what happens next."""
    whole = len(plan.leaving_turns)
    steps = plan.leaving_steps
    parts = []
    if whole:
        parts.append(f"{whole} turn{'s' if whole != 1 else ''} (request and answer too)")
    if steps:
        parts.append(f"{steps} step{'s' if steps != 1 else ''}")
    left = " and ".join(parts) if parts else "nothing more"
    replaced = ""
    if plan.replaces:
        keys = ", ".join(repr(key) for key in plan.replaces)
        replaced = f"; it replaces the earlier fold{'s' if len(plan.replaces) > 1 else ''} {keys}"
    came = (
        f"your gist came in (~{gist_tokens(fold):,} tokens)"
        if fold.gist
        else "no gist came in their place"
    )
    return (
        f"Folded {fold.key}: {left} left the active context "
        f"(~{fold.removed_tokens:,} tokens by local estimate){replaced}; {came}. History is "
        "still saved; there is no inline undo. The next response measures the input change of "
        'the whole request (session["request_health"]["fold_measurement"]).'
    )
