"""The provider protocol: a neutral conversation in; text deltas, tool calls and usage out."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Literal, Protocol

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


StreamEvent = TextDelta | ThinkingDelta | ToolCallReady | UsageUpdate | ResponseDone


@dataclass(frozen=True)
class ModelInfo:
    """A model's input limit and prices in dollars per million tokens; ``thinking_budget``
    (tokens, 0 = off) turns on extended thinking where the provider supports it; ``images``:
    the model takes image input (the person's attached images may be sent to it)."""

    input_limit: int = 200_000
    input_price: float = 0.0
    output_price: float = 0.0
    cache_read_price: float = 0.0
    cache_write_price: float = 0.0
    thinking_budget: int = 0
    images: bool = False

    def cost(self, usage: Usage) -> float:
        return (
            usage.input * self.input_price
            + usage.output * self.output_price
            + usage.cache_read * self.cache_read_price
            + usage.cache_write * self.cache_write_price
        ) / 1_000_000


class ProviderError(Exception):
    """A failed model request. ``retryable`` errors (408, 429, 5xx, reset) are retried.
    ``usage`` is what the failed request cost, when the provider knows or can estimate it."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        retryable: bool = False,
        usage: Usage | None = None,
    ):
        super().__init__(message)
        self.status = status
        self.retryable = retryable
        self.usage = usage


class ContextOverflowError(ProviderError):
    """The request is longer than the model's context window.

    Raised for Anthropic's ``prompt is too long``, OpenAI's ``context_length_exceeded``,
    llama.cpp's ``exceed_context_size_error`` and the like (``errors.context_overflow``).
    ``input_tokens`` (what the request needed) and ``limit`` (the window) are filled in
    when the server said them. Never retried as is: the request must shrink first.
    """

    def __init__(
        self,
        message: str,
        *,
        status: int | None = 400,
        input_tokens: int | None = None,
        limit: int | None = None,
        usage: Usage | None = None,
    ) -> None:
        super().__init__(message, status=status, retryable=False, usage=usage)
        self.input_tokens = input_tokens
        self.limit = limit


class ProviderConfigError(ProviderError):
    """A missing key, a rejected key or a bad setting: the message names what to fix."""


class Provider(Protocol):
    name: str

    def model_info(self, model: str) -> ModelInfo: ...

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]: ...

    async def aclose(self) -> None: ...


@dataclass(frozen=True)
class ModelChoice:
    """``provider/model`` as given on the command line or in ``config.toml``."""

    provider: str
    model: str
    options: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def parse(cls, text: str) -> ModelChoice:
        provider, sep, model = text.partition("/")
        if not sep or not provider or not model:
            raise ValueError(
                f"model {text!r} must be written provider/model, e.g. anthropic/claude-sonnet-4-6"
            )
        return cls(provider, model)
