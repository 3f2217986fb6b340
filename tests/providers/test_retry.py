"""stream_with_retries retries transient failures before the first event, with backoff."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from vis_core.model.conversation import TextDelta
from vis_core.providers.base import ProviderError, StreamEvent
from vis_core.providers.openai_provider import OpenAIProvider
from vis_core.providers.retry import backoff_delay, stream_with_retries
from vis_core.providers.retry_after import retry_after
from vis_core.providers.scripted import ScriptedProvider

from .samples import providers, simple_request
from .wire_servers import WireReply, WireServer, openai_error, openai_reply


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


# --- what the server says of the wait, against a real OpenAI-compatible wire server ---------


def rate_limited(*headers: tuple[str, str], code: str = "rate_limit_exceeded") -> WireReply:
    error = openai_error(429, "Rate limit reached for requests", "requests", code)
    return replace(error, headers=headers)


async def retried(server: WireServer, rec: Recorder) -> list[StreamEvent]:
    async with providers(OpenAIProvider, api_key="k", base_url=server.openai_base_url) as make:
        return [
            e
            async for e in stream_with_retries(
                make(), simple_request(), sleep=rec.sleep, on_retry=rec.on_retry
            )
        ]


@pytest.mark.xdist_group("sdk-imports")
@pytest.mark.parametrize(
    ("headers", "wait"),
    [
        ((("Retry-After", "20"),), 20.0),
        ((("retry-after-ms", "1500"), ("Retry-After", "2")), 1.5),
        (  # OpenAI's and Groq's resets: that of the limit used up
            (
                ("x-ratelimit-remaining-requests", "5"),
                ("x-ratelimit-reset-requests", "30s"),
                ("x-ratelimit-remaining-tokens", "0"),
                ("x-ratelimit-reset-tokens", "2.5s"),
            ),
            2.5,
        ),
    ],
)
async def test_a_429_waits_as_long_as_the_server_says(
    wire_server: WireServer, headers: tuple[tuple[str, str], ...], wait: float
) -> None:
    wire_server.reply(rate_limited(*headers), openai_reply("after the wait"))
    rec = Recorder()
    events = await retried(wire_server, rec)
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "after the wait"
    assert rec.sleeps == [wait]
    assert rec.retries == [(1, 429, wait)]


@pytest.mark.xdist_group("sdk-imports")
async def test_a_wait_longer_than_a_minute_fails_at_once_saying_when_to_try(
    wire_server: WireServer,
) -> None:
    wire_server.reply(rate_limited(("Retry-After", "3600")), openai_reply("never asked for"))
    rec = Recorder()
    with pytest.raises(ProviderError) as failure:
        await retried(wire_server, rec)
    assert rec.sleeps == [] and len(wire_server.requests) == 1
    message = str(failure.value)
    assert "Rate limit reached" in message and "asks to wait 60 min 0 s" in message
    assert "longer than the 1 min 0 s Vis waits: try again after " in message
    assert failure.value.status == 429 and not failure.value.retryable


@pytest.mark.xdist_group("sdk-imports")
async def test_a_429_for_a_used_up_quota_is_final(wire_server: WireServer) -> None:
    wire_server.reply(
        openai_error(
            429,
            "You exceeded your current quota, please check your plan and billing details.",
            "insufficient_quota",
            "insufficient_quota",
        ),
        openai_reply("never asked for"),
    )
    rec = Recorder()
    with pytest.raises(ProviderError, match="quota is used up") as failure:
        await retried(wire_server, rec)
    assert not failure.value.retryable and failure.value.status == 429
    assert rec.sleeps == [] and len(wire_server.requests) == 1


def error_event(code: int, message: str) -> str:
    return "data: " + json.dumps({"error": {"code": code, "message": message}}) + "\n\n"


@pytest.mark.xdist_group("sdk-imports")
async def test_an_error_event_with_a_5xx_code_before_any_answer_is_retried(
    wire_server: WireServer,
) -> None:
    """OpenRouter answers 200 and then an error event when the model's provider failed."""
    upstream = WireReply(
        frames=(": OPENROUTER PROCESSING\n\n", error_event(502, "Provider returned error"))
    )
    wire_server.reply(upstream, openai_reply("from another provider"))
    rec = Recorder()
    events = await retried(wire_server, rec)
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "from another provider"
    assert rec.retries == [(1, 502, 0.5)]


@pytest.mark.xdist_group("sdk-imports")
async def test_an_error_event_with_a_4xx_code_is_not_retried(wire_server: WireServer) -> None:
    wire_server.reply(
        WireReply(frames=(error_event(400, "Input required: specify prompt or messages"),)),
        openai_reply("never asked for"),
    )
    rec = Recorder()
    with pytest.raises(ProviderError, match=r"answered with an error \(code 400\)"):
        await retried(wire_server, rec)
    assert rec.sleeps == [] and len(wire_server.requests) == 1


def test_a_retry_after_date_and_a_reset_time_are_waits_from_now() -> None:
    now = 1_764_547_200.0  # Mon, 01 Dec 2025 00:00:00 GMT
    assert retry_after({"retry-after": "Mon, 01 Dec 2025 00:00:30 GMT"}, now) == 30.0
    assert retry_after({"x-ratelimit-reset": str(int(now * 1000) + 4000)}, now) == 4.0
    assert retry_after({"retry-after": "Mon, 01 Dec 2025 00:00:00 GMT"}, now + 5) == 0.0
    assert retry_after({"retry-after": "soon"}, now) is None
    assert retry_after({}, now) is None
