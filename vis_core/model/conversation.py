"""A conversation in a provider-neutral shape: the request a model gets, the events it streams."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Literal

from vis_core.model.usage import Usage


@dataclass(frozen=True)
class ToolDefinition:
    """A tool the model may call directly (``python_execution`` is one)."""

    name: str
    description: str
    parameters: dict[str, Any]


@dataclass(frozen=True)
class ToolCall:
    """A call the model made. When its arguments could not be read, ``arguments`` is empty,
    ``raw_arguments`` keeps what the model sent and ``problem`` says what was wrong (a call
    with a problem is not run)."""

    id: str
    name: str
    arguments: dict[str, Any]
    raw_arguments: str = ""
    problem: str = ""


@dataclass(frozen=True)
class ImagePart:
    """An image sent to the model: its media type and base64-encoded bytes."""

    media_type: str
    data: str


@dataclass(frozen=True)
class ThinkingPart:
    """One block of the model's reasoning; ``signature`` / ``redacted`` are Anthropic's
    opaque fields, sent back unchanged so a tool-use turn can continue."""

    text: str = ""
    signature: str = ""
    redacted: str = ""


@dataclass(frozen=True)
class Message:
    """One conversation message in a provider-neutral shape.

    ``user``: ``text``. ``assistant``: ``text``, any ``tool_calls`` and the ``thinking``
    that preceded them. ``tool``: the result ``text`` of the call ``tool_call_id``
    (``is_error`` when it failed). ``images`` go with a user or tool message.
    """

    role: Literal["user", "assistant", "tool"]
    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    is_error: bool = False
    thinking: tuple[ThinkingPart, ...] = ()
    images: tuple[ImagePart, ...] = ()


@dataclass(frozen=True)
class ModelRequest:
    """What one model call sends."""

    model: str
    system: str
    messages: tuple[Message, ...]
    tools: tuple[ToolDefinition, ...] = ()
    max_tokens: int = 8192


@dataclass(frozen=True)
class TextDelta:
    """A piece of streamed answer text."""

    text: str


@dataclass(frozen=True)
class ThinkingDelta:
    """A piece of the model's reasoning text; ``signature`` (Anthropic) ends a thinking block,
    ``redacted`` carries a whole redacted block."""

    text: str = ""
    signature: str = ""
    redacted: str = ""


@dataclass(frozen=True)
class ToolCallStarted:
    """The model began writing a call of tool ``name``; its :class:`ToolCallReady` follows
    (a hint: what the call will need can start meanwhile)."""

    name: str


@dataclass(frozen=True)
class ToolCallReady:
    """A tool call the model finished writing."""

    call: ToolCall


@dataclass(frozen=True)
class UsageUpdate:
    """Tokens used so far by the response."""

    usage: Usage


class StopReason(StrEnum):
    """Why the model stopped (Anthropic's names; OpenAI's finish reasons map onto them)."""

    END_TURN = "end_turn"
    TOOL_USE = "tool_use"
    MAX_TOKENS = "max_tokens"  # cut at the output limit: the answer is incomplete
    REFUSAL = "refusal"
    STOP_SEQUENCE = "stop_sequence"
    PAUSE_TURN = "pause_turn"


@dataclass(frozen=True)
class ResponseDone:
    """The response ended; why it stopped."""

    stop_reason: str = StopReason.END_TURN


StreamEvent = (
    TextDelta | ThinkingDelta | ToolCallStarted | ToolCallReady | UsageUpdate | ResponseDone
)
