"""Retry transient provider failures that happen before anything was streamed."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import AsyncIterator, Awaitable, Callable

from vis_core.model.conversation import ToolCallStarted
from vis_core.providers.base import ModelRequest, Provider, ProviderError, StreamEvent

OnRetry = Callable[[int, ProviderError, float], Awaitable[None] | None]
Sleep = Callable[[float], Awaitable[object]]


def backoff_delay(attempt: int, base_delay: float) -> float:
    """The wait after failed attempt ``attempt`` (1-based): base, 2×base, 4×base…"""
    return base_delay * 2 ** (attempt - 1)


async def stream_with_retries(
    provider: Provider,
    request: ModelRequest,
    *,
    attempts: int = 3,
    base_delay: float = 0.5,
    on_retry: OnRetry | None = None,
    sleep: Sleep = asyncio.sleep,
) -> AsyncIterator[StreamEvent]:
    """``provider.stream(request)``, retried with exponential backoff on retryable errors.

    An attempt is retried only when it failed before yielding anything; otherwise (or when
    the error is not retryable, or ``attempts`` are used up) the error is raised.
    ``on_retry(failed_attempt, error, delay)`` (sync or async) is called before each wait.
    """
    if attempts < 1:
        raise ValueError("attempts must be at least 1")
    for attempt in range(1, attempts + 1):
        yielded = False
        try:
            events = provider.stream(request)
            try:
                async for event in events:
                    # a hint that a call began is no answer yet: a failure after it is retried
                    yielded = yielded or not isinstance(event, ToolCallStarted)
                    yield event
            finally:
                aclose = getattr(events, "aclose", None)
                if aclose is not None:
                    await aclose()
            return
        except ProviderError as exc:
            if yielded or not exc.retryable or attempt == attempts:
                raise
            delay = backoff_delay(attempt, base_delay)
            if on_retry is not None:
                result = on_retry(attempt, exc, delay)
                if inspect.isawaitable(result):
                    await result
            await sleep(delay)
