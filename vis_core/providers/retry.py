"""Retry transient provider failures that happen before anything was streamed."""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import AsyncIterator, Awaitable, Callable

from vis_core.model.conversation import ToolCallStarted
from vis_core.providers.base import ModelRequest, Provider, ProviderError, StreamEvent

OnRetry = Callable[[int, ProviderError, float], Awaitable[None] | None]
Sleep = Callable[[float], Awaitable[object]]

MAX_WAIT = 60.0  # the longest wait a server's Retry-After gets; a longer one fails at once


def backoff_delay(attempt: int, base_delay: float) -> float:
    """The wait after failed attempt ``attempt`` (1-based): base, 2×base, 4×base…"""
    return base_delay * 2 ** (attempt - 1)


def wait_text(seconds: float) -> str:
    """A wait as a person reads it: "0.5 s", "20 s", "3 min 20 s"."""
    if seconds < 10:
        return f"{seconds:.2g} s"
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest} s" if minutes else f"{rest} s"


def too_long_a_wait(error: ProviderError, wait: float) -> ProviderError:
    """``error``, final: the server asked for a wait longer than :data:`MAX_WAIT`."""
    until = time.strftime("%H:%M:%S", time.localtime(time.time() + wait))
    return ProviderError(
        f"{error}; the server asks to wait {wait_text(wait)} before trying again, longer than "
        f"the {wait_text(MAX_WAIT)} Vis waits: try again after {until}",
        status=error.status,
        usage=error.usage,
    )


async def stream_with_retries(
    provider: Provider,
    request: ModelRequest,
    *,
    attempts: int = 3,
    base_delay: float = 0.5,
    on_retry: OnRetry | None = None,
    sleep: Sleep = asyncio.sleep,
) -> AsyncIterator[StreamEvent]:
    """``provider.stream(request)``, retried on retryable errors after the wait the server
    asked for (``retry_after``), else with exponential backoff.

    An attempt is retried only when it failed before yielding anything; otherwise (or when
    the error is not retryable, or ``attempts`` are used up) the error is raised. A server
    that asks to wait longer than :data:`MAX_WAIT` seconds fails the request at once, saying
    when to try again. ``on_retry(failed_attempt, error, delay)`` (sync or async) is called
    before each wait.
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
            delay = exc.retry_after
            if delay is None:
                delay = backoff_delay(attempt, base_delay)
            elif delay > MAX_WAIT:
                raise too_long_a_wait(exc, delay) from exc
            if on_retry is not None:
                result = on_retry(attempt, exc, delay)
                if inspect.isawaitable(result):
                    await result
            await sleep(delay)
