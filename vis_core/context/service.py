"""One session's context keeper: utilization for ``session``, overflow recovery, ``/compact``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from vis_core.context.folding import FoldOrigin, build_fold, message_chars, turn_steps
from vis_core.context.gist import WrittenGist, write_gist
from vis_core.context.hints import ASK_FROM, folded_whole_turns, utilization
from vis_core.context.keys import FoldPlan, Span, describe_spans
from vis_core.events import ANSWER_SLOT as ANSWER
from vis_core.events import REQUEST_SLOT as REQUEST
from vis_core.events import ContextNote, FoldCreated, Notification, UsageReported
from vis_core.model.notify import NotifyKind
from vis_core.model.usage import UsagePurpose
from vis_core.providers.base import ContextOverflowError

SHRINK_TO = 0.5  # overflow recovery folds until the transcript is about half its size


class SessionContext:
    """The ``ContextPort`` of agent sessions: each call names the session it works on."""

    def __init__(self) -> None:
        # (above the budget, hint key, folds made) when last noted: a fold retires the note
        self._noted: tuple[bool, str, int] | None = None

    def utilization(self, session: Any) -> dict[str, Any]:
        return utilization(session)

    def notes(self, session: Any, turn_id: str) -> list[ContextNote]:
        """What the next request carries besides the transcript: from 90 % of the soft budget
        the hint with its fold key, once per level and key until a fold retires it (then again
        while the budget calls for it, but not before a new measurement after the fold, which
        the hint's numbers would predate)."""
        tokens, budget = int(session.context_tokens), int(session.context_budget)
        if budget <= 0 or tokens < budget * ASK_FROM:
            self._noted = None
            return []
        folds = session.conversation.folds
        if folds and folds[-1].before_input_tokens == tokens:  # folded since this measurement
            return []
        hint = utilization(session).get("hint")
        if hint is None:
            return []
        level = (tokens > budget, hint.rsplit(": ", 1)[-1], len(folds))
        if level == self._noted:
            return []
        self._noted = level
        text = f'[Vis: {hint} session["utilization"] has the numbers.]'
        return [ContextNote(session.id, turn_id=turn_id, topic="utilization", text=text)]

    # -- folds Vis makes itself ------------------------------------------------------------

    def overflow_spans(self, session: Any, limit_chars: int | None) -> list[Span]:
        """The oldest settled turns to fold so the transcript shrinks to about half (or under
        ``limit_chars``); the current turn's settled steps but its latest when that is not
        enough."""
        conversation = session.conversation
        turns = turn_steps(conversation)
        current = max(turns, default=0)
        whole = folded_whole_turns(conversation)
        messages = conversation.request_messages()
        size = message_chars(messages)
        target = int(size * SHRINK_TO)
        if limit_chars:
            target = min(target, limit_chars)
        sizes = _chars_by_turn(conversation)
        spans: list[Span] = []
        for position in sorted(turns):
            if size <= target:
                break
            if position in whole or (turns[position].current and position == current):
                continue
            spans.append((position, 0, 0))
            size -= sizes.get(position, 0)
        here = turns.get(current)
        if size > target and here is not None and here.current and len(here.settled) > 1:
            spans.append((current, here.settled[0], here.settled[-2]))
        return spans

    async def fold_with_gist(
        self,
        session: Any,
        spans: Sequence[Span],
        origin: FoldOrigin,
        turn_id: str,
        instructions: str = "",
    ) -> tuple[FoldCreated, WrittenGist]:
        """Fold ``spans`` with a gist Vis writes (the model, else mechanically)."""
        key = describe_spans(spans).replace(" ", "")
        plan = FoldPlan(key, tuple(spans))
        model = session.model
        written = await write_gist(
            model.provider, model.model, folded_turns(session.conversation, spans), instructions
        )
        if written.usage.total:
            info = model.provider.model_info(model.model) if model.provider else None
            await session.emit(
                UsageReported(
                    session.id,
                    turn_id=turn_id,
                    usage=written.usage,
                    cost=info.cost(written.usage) if info else 0.0,
                    model=session.model_label,
                    purpose=UsagePurpose.GIST,
                )
            )
        fold = build_fold(session, plan, written.text, origin=origin, turn_id=turn_id)
        await session.emit(fold)
        return fold, written

    async def recover_overflow(
        self, session: Any, turn_id: str, error: ContextOverflowError
    ) -> str | None:
        limit = session.context_limit
        spans = self.overflow_spans(session, limit * 4 // 2 if limit else None)
        if not spans:
            return None
        fold, written = await self.fold_with_gist(session, spans, FoldOrigin.OVERFLOW, turn_id)
        how = (
            "with a gist the model wrote"
            if written.by_model
            else f"with a mechanical summary (the summary call failed: {written.failure})"
        )
        await session.emit(
            Notification(
                session.id,
                text=(
                    f"The request was too long for {session.model.label}, so Vis folded "
                    f"{fold.key} (~{fold.removed_tokens:,} tokens) {how} and retries once. "
                    "The history is still saved."
                ),
                kind=NotifyKind.WARN,
            )
        )
        return fold.key

    async def compact(self, session: Any, instructions: str = "") -> FoldCreated | None:
        """``/compact``: fold every settled turn not folded yet with a gist Vis asks for."""
        conversation = session.conversation
        whole = folded_whole_turns(conversation)
        turns = turn_steps(conversation)
        spans: list[Span] = [
            (p, 0, 0) for p in sorted(turns) if p not in whole and not turns[p].current
        ]
        if not spans:
            return None
        last_turn = conversation.turns[max(turns)].turn_id
        fold, _ = await self.fold_with_gist(
            session, spans, FoldOrigin.COMPACT, last_turn, instructions
        )
        return fold


def _chars_by_turn(conversation: Any) -> dict[int, int]:
    """Characters each turn adds to the (unfolded) transcript, by position."""
    sizes: dict[int, int] = {}
    for message, (position, _) in zip(conversation.messages, conversation.tags, strict=True):
        sizes[position] = sizes.get(position, 0) + message_chars([message])
    return sizes


def folded_turns(conversation: Any, spans: Sequence[Span]) -> list[dict[str, Any]]:
    """The folded part of the transcript, turn by turn: request, steps, answer."""
    wanted: dict[int, tuple[int, int] | None] = {}
    for position, first, last in spans:
        wanted[position] = None if first == 0 else (first, last)
    turns: dict[int, dict[str, Any]] = {}
    steps: dict[str, dict[str, Any]] = {}
    for message, (position, slot) in zip(conversation.messages, conversation.tags, strict=True):
        if position not in wanted:
            continue
        whole = wanted[position] is None
        turn = turns.setdefault(
            position, {"position": position, "request": "", "steps": [], "answer": ""}
        )
        if slot == REQUEST and whole:
            turn["request"] = message.text
        elif slot == ANSWER and whole and message.role == "assistant":
            turn["answer"] += message.text
        elif message.role == "assistant":
            for call in message.tool_calls:
                index = conversation.call_tags.get(call.id, (position, slot))[1]
                span = wanted[position]
                if span is None or span[0] <= index <= span[1]:
                    code = str(call.arguments.get("code") or call.arguments)
                    step = {"index": index, "code": code, "output": ""}
                    steps[call.id] = step
                    turn["steps"].append(step)
        elif message.role == "tool" and message.tool_call_id in steps:
            steps[message.tool_call_id]["output"] = message.text
    return [turns[p] for p in sorted(turns)]
