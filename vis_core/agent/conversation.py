"""Rebuild the model's conversation (provider-neutral messages) from a session's events."""

from __future__ import annotations

from collections.abc import Iterable

from vis_core.events import (
    AssistantMessage,
    BlockFinished,
    Event,
    IterationStarted,
    TurnEnded,
    TurnStarted,
)
from vis_core.providers.base import Message, ToolCall

NO_OUTPUT = "(the block printed nothing; print() what you want to see)"


def block_result_text(stdout: str, error: str | None, restarted: str | None = None) -> str:
    """What the model reads after a ``python_execution`` block."""
    parts = []
    if restarted:
        parts.append(f"[sandbox] {restarted}")
    if stdout:
        parts.append(stdout.rstrip("\n"))
    if error:
        parts.append(error.rstrip("\n"))
    return "\n".join(parts) if parts else NO_OUTPUT


class ConversationBuilder:
    """Accumulates events into messages; used live by the loop and to resume a session."""

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self._pending_text: dict[str, str] = {}

    def add(self, event: Event) -> None:
        handler = getattr(self, f"_on_{event.type}", None)
        if handler is not None:
            handler(event)

    def _on_TurnStarted(self, event: TurnStarted) -> None:
        self.messages.append(Message("user", event.request))

    def _on_AssistantMessage(self, event: AssistantMessage) -> None:
        self._pending_text[event.turn_id] = self._pending_text.get(event.turn_id, "") + event.text

    def _on_IterationStarted(self, event: IterationStarted) -> None:
        arguments = {"code": event.code} if event.tool == "python_execution" else event.arguments
        text = self._pending_text.pop(event.turn_id, "")
        call = ToolCall(event.iteration_id, event.tool, arguments)
        last = self.messages[-1] if self.messages else None
        if last is not None and last.role == "assistant" and not text and last.tool_calls:
            self.messages[-1] = Message("assistant", last.text, (*last.tool_calls, call))
        else:
            self.messages.append(Message("assistant", text, (call,)))

    def _on_BlockFinished(self, event: BlockFinished) -> None:
        text = block_result_text(event.stdout, event.error)
        self.messages.append(
            Message("tool", text, tool_call_id=event.iteration_id, is_error=event.error is not None)
        )

    def _on_TurnEnded(self, event: TurnEnded) -> None:
        text = self._pending_text.pop(event.turn_id, "")
        if text:
            self.messages.append(Message("assistant", text))
        # A tool call left without a result (a cancelled turn) must still be answered.
        answered = {m.tool_call_id for m in self.messages if m.role == "tool"}
        for message in list(self.messages):
            for call in message.tool_calls:
                if call.id not in answered:
                    self.messages.append(
                        Message("tool", "(cancelled)", tool_call_id=call.id, is_error=True)
                    )
                    answered.add(call.id)


def conversation_from_events(events: Iterable[Event]) -> list[Message]:
    builder = ConversationBuilder()
    for event in events:
        builder.add(event)
    return builder.messages
