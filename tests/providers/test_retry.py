"""stream_with_retries retries transient failures before the first event, with backoff."""

from __future__ import annotations

from pathlib import Path

import pytest

from vis_core.model.conversation import TextDelta
from vis_core.providers.base import ProviderError, StreamEvent
from vis_core.providers.retry import backoff_delay, stream_with_retries
from vis_core.providers.scripted import ScriptedProvider

from .samples import simple_request


class Recorder:
    """An injected sleep and on_retry that remember what they were asked."""

    def __init__(self) -> None:
        self.sleeps: list[float] = []
        self.retries: list[tuple[int, int | None, float]] = []

    async def sleep(self, delay: float) -> None:
        self.sleeps.append(delay)

    def on_retry(self, attempt: int, error: ProviderError, delay: float) -> None:
        self.retries.append((attempt, error.status, delay))


def provider_for(tmp_path: Path, script: str) -> ScriptedProvider:
    path = tmp_path / "script.yaml"
    path.write_text(script, encoding="utf-8")
    return ScriptedProvider(path)


async def run(provider: ScriptedProvider, rec: Recorder, **kwargs: object) -> list[StreamEvent]:
    return [
        e
        async for e in stream_with_retries(
            provider, simple_request(), sleep=rec.sleep, on_retry=rec.on_retry, **kwargs
        )
    ]


async def test_two_transient_failures_then_success(tmp_path: Path) -> None:
    provider = provider_for(
        tmp_path,
        "- error: {status: 503, message: busy}\n"
        "- error: {status: 429, message: slow down}\n"
        "- text: done\n",
    )
    rec = Recorder()
    events = await run(provider, rec)
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["done"]
    assert rec.sleeps == [0.5, 1.0]
    assert rec.retries == [(1, 503, 0.5), (2, 429, 1.0)]
    assert provider.remaining == 0


async def test_gives_up_after_the_last_attempt(tmp_path: Path) -> None:
    provider = provider_for(tmp_path, "- error: {status: 500, message: down}\n" * 4)
    rec = Recorder()
    with pytest.raises(ProviderError, match="down") as failure:
        await run(provider, rec, base_delay=0.1)
    assert failure.value.status == 500
    assert rec.sleeps == [0.1, 0.2]
    assert provider.remaining == 1


async def test_non_retryable_error_is_raised_at_once(tmp_path: Path) -> None:
    provider = provider_for(tmp_path, "- error: {status: 400, message: bad}\n- text: never\n")
    rec = Recorder()
    with pytest.raises(ProviderError, match="bad"):
        await run(provider, rec)
    assert rec.sleeps == []
    assert provider.remaining == 1


async def test_failure_after_streaming_started_is_not_retried(tmp_path: Path) -> None:
    provider = provider_for(
        tmp_path, "- {text: partial, error: {status: 503, message: reset}}\n- text: never\n"
    )
    rec = Recorder()
    seen: list[StreamEvent] = []
    with pytest.raises(ProviderError, match="reset"):
        async for event in stream_with_retries(
            provider, simple_request(), sleep=rec.sleep, on_retry=rec.on_retry
        ):
            seen.append(event)
    assert seen == [TextDelta("partial")]
    assert rec.sleeps == []
    assert provider.remaining == 1


async def test_async_on_retry_is_awaited(tmp_path: Path) -> None:
    provider = provider_for(tmp_path, "- error: {status: 503, message: busy}\n- text: ok\n")
    calls: list[int] = []

    async def on_retry(attempt: int, error: ProviderError, delay: float) -> None:
        calls.append(attempt)

    async def no_sleep(delay: float) -> None:
        return None

    events = [
        e
        async for e in stream_with_retries(
            provider, simple_request(), on_retry=on_retry, sleep=no_sleep
        )
    ]
    assert calls == [1]
    assert TextDelta("ok") in events


def test_backoff_doubles() -> None:
    assert [backoff_delay(n, 0.5) for n in (1, 2, 3)] == [0.5, 1.0, 2.0]


async def test_attempts_must_be_positive(tmp_path: Path) -> None:
    provider = provider_for(tmp_path, "- text: hi\n")
    with pytest.raises(ValueError, match="attempts"):
        await run(provider, Recorder(), attempts=0)
