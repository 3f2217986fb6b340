"""``session["utilization"]``: measured input, soft budget, hard limit, and the ``hint``."""

from __future__ import annotations

from typing import Any

from vis_core.context.folding import turn_steps
from vis_core.context.keys import settled_steps_key, unfolded_turns_key

HINT_FROM = 0.75  # the hint starts at 75 % of the soft budget
ASK_FROM = 0.90  # from 90 % it asks for a fold before the next answer


def percent(tokens: int, budget: int) -> int:
    """``tokens`` as a whole percentage of ``budget``, rounded down but up above it: an
    input over the budget never reads as 100 %."""
    share, rest = divmod(tokens * 100, budget)
    return share + 1 if rest and tokens > budget else share


def hint_text(
    tokens: int,
    budget: int,
    key: str | None,
    current_key: str | None,
    *,
    has_earlier: bool = False,
    all_folded: bool = False,
) -> str | None:
    """The hint for ``tokens`` of ``budget``; ``key`` folds every unfolded earlier turn.
    ``all_folded``: every settled step is folded, every turn that ended whole (nothing settled
    is left to fold)."""
    if budget <= 0 or tokens < budget * HINT_FROM:
        return None
    share = f"{percent(tokens, budget)}% of the soft budget ({tokens:,} of {budget:,} input tokens)"
    if key is not None:
        fold = f'fold_session("{key}", gist) folds every earlier turn not folded yet'
    elif current_key is not None:
        why = "every earlier turn is folded" if has_earlier else "there is no earlier turn yet"
        fold = f'{why}; fold_session("{current_key}", gist) folds the settled steps of this turn'
    elif all_folded:
        fold = (
            "every settled turn is folded already, so what is left is the gists and the live "
            "step; /new starts a session with none of it"
        )
    else:
        fold = "nothing has settled yet; fold once a step has settled"
    if tokens > budget:
        return (
            f"Context is above the soft budget: {share}. A fold is required while the pressure "
            f"remains: {fold}."
        )
    if tokens >= budget * ASK_FROM:
        return f"Context is at {share}. Fold settled work before the next answer: {fold}."
    return f"Context is at {share}. Fold settled work when this phase is done: {fold}."


def utilization(session: Any, live_iteration: str | None = None) -> dict[str, Any]:
    """The utilization dict of ``session`` now (``hint`` only when the budget calls for it)."""
    tokens = int(session.context_tokens)
    budget = int(session.context_budget)
    data: dict[str, Any] = {
        "latest_measured_input_tokens": tokens,
        "auto_compress_above": budget,
        "model_input_limit": session.context_limit or None,
    }
    if budget <= 0 or tokens < budget * HINT_FROM:
        return data
    conversation = session.conversation
    turns = turn_steps(conversation, live_iteration)
    current = max(turns, default=0)
    whole = folded_whole_turns(conversation)
    live = bool(current) and turns[current].current
    # between turns, the newest turn is an earlier one of the next request
    key = unfolded_turns_key(turns, whole, current if live else current + 1)
    current_key = None
    if live:
        current_key = settled_steps_key(turns[current], folded_steps(conversation, current))
    ended = [position for position, steps in turns.items() if not steps.current]
    # something settled, and all of it is folded (no key names the current turn's steps)
    settled = bool(ended) or (live and bool(turns[current].settled))
    all_folded = settled and all(position in whole for position in ended)
    hint = hint_text(
        tokens, budget, key, current_key, has_earlier=len(turns) > 1, all_folded=all_folded
    )
    if hint is not None:
        data["hint"] = hint
    return data


def folded_steps(conversation: Any, position: int) -> set[int]:
    """Indices of the steps of turn ``position`` some fold removed."""
    return {
        index
        for fold in conversation.folds
        for p, first, last in fold.spans
        if p == position and first
        for index in range(first, last + 1)
    }


def folded_whole_turns(conversation: Any) -> set[int]:
    """Positions of turns some fold removed whole."""
    return {span[0] for fold in conversation.folds for span in fold.spans if span[1] == 0}
