"""The provider protocol: a neutral conversation in; text deltas, tool calls and usage out."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from vis_core.model.conversation import ModelRequest, StreamEvent
from vis_core.model.usage import Usage


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
    """A failed model request. ``retryable`` errors (408, 429, 5xx, reset) are retried, after
    ``retry_after`` seconds when the server said how long to wait. ``usage`` is what the
    failed request cost, when the provider knows or can estimate it."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        retryable: bool = False,
        usage: Usage | None = None,
        retry_after: float | None = None,
    ):
        super().__init__(message)
        self.status = status
        self.retryable = retryable
        self.usage = usage
        self.retry_after = retry_after


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
