"""``fold_session(key, gist)``: the tool the model calls in ``python_execution`` to fold."""

from __future__ import annotations

from typing import Any

from vis_core.context.folding import FoldOrigin, build_fold, receipt, turn_steps
from vis_core.context.keys import parse_key
from vis_core.extension.context import current_call
from vis_core.model.activity import Activity, ActivityPresentation, RenderPhase, SymbolTag
from vis_core.text_limits import one_line
from vis_core.tools.registry import HostTool

GIST_SUMMARY_CHARS = 100


async def fold_session(key: str, gist: str | None = None) -> str:
    """Replace settled steps with your summary (a fold); `session["utilization"]` says when.

    `session["utilization"]` has the latest measured input, the soft budget
    (`auto_compress_above`), the model's input limit and, from 75 % of the budget, a `hint`
    with the exact key that folds every earlier turn not folded yet; from 90 % Vis also adds
    that hint to your next request.
    `key` selects them: a turn `"t2"`, the turns `"t2-t5"`, a range `"t2/i4-i5"`, settled
    steps since an iteration `"t2/i5-"`, every turn through a turn `"-t3"`, everything through
    an iteration `"-t3/i9"`; commas join disjoint ranges. Iteration numbers start again in
    each turn. A turn key (or a range covering a whole earlier turn) also removes that turn's
    request and answer. `gist` (conclusions, open questions, relevant files, test state)
    stands in their place; without it the steps simply leave. A fold that covers an earlier
    fold replaces its gist; one that takes again steps an earlier fold holds, without covering
    it, is refused. You cannot fold the live step, and there is no inline undo; the history
    stays saved (`read_session()` shows it). Returns the receipt with a local estimate of
    what left.
    """
    from vis_core.agent.session import AgentSession

    call = current_call()
    session = call.session if call is not None else None
    if call is None or not isinstance(session, AgentSession):
        raise RuntimeError("fold_session works only in a python_execution block of a session")
    if gist is not None and not isinstance(gist, str):
        raise TypeError(f"fold_session: gist must be text or None, not {type(gist).__name__}")
    iteration_id = call.iteration_id
    turns = turn_steps(session.conversation, iteration_id)
    plan = parse_key(key, turns, session.conversation.folds)
    turn_id = call.turn_id or ""
    fold = build_fold(
        session,
        plan,
        (gist or "").strip(),
        origin=FoldOrigin.MODEL,
        turn_id=turn_id,
        iteration_id=iteration_id,
    )
    await session.emit(fold)
    return receipt(fold, plan)


def _render(
    *, phase: str, args: Any = (), kwargs: Any = None, result: Any = None, error: Any = None
) -> ActivityPresentation:
    given = dict(zip(("key", "gist"), args or (), strict=False)) | dict(kwargs or {})
    key = str(given.get("key", ""))
    gist = one_line(str(given.get("gist") or ""), GIST_SUMMARY_CHARS)
    if phase == RenderPhase.FAILURE:
        return ActivityPresentation("Fold", f"{key}: {one_line(str(error), 200)}")
    return ActivityPresentation("Fold", f"{key} · {gist}" if gist else f"{key} · no gist")


def fold_tools() -> list[HostTool]:
    """The context tools every session has."""
    return [
        HostTool(
            name="fold_session",
            fn=fold_session,
            tag=SymbolTag.MUTATION,
            activity=Activity("Fold", render=_render),
        )
    ]
