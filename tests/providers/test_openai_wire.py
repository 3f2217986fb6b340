"""The OpenAI provider against a local server speaking the Chat Completions SSE format."""

from __future__ import annotations

import platform
import socket
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from vis_core.model.conversation import (
    ResponseDone,
    TextDelta,
    ToolCall,
    ToolCallReady,
    ToolCallStarted,
    UsageUpdate,
)
from vis_core.model.usage import Usage
from vis_core.providers.base import ProviderConfigError, ProviderError, StreamEvent
from vis_core.providers.openai_provider import OpenAIProvider, build_openai_params
from vis_core.providers.retry import stream_with_retries

from .samples import collect, conversation_request, providers, simple_request
from .wire_servers import WireServer, WireToolCall, openai_error, openai_reply

# the provider SDKs are imported in the test process (anthropic ~2 s of CPU): on one worker
pytestmark = pytest.mark.xdist_group("sdk-imports")


@pytest.fixture
async def provider_at(wire_server: WireServer) -> AsyncIterator[Callable[..., OpenAIProvider]]:
    """Builds providers aimed at the wire server and closes them after the test."""
    async with providers(
        OpenAIProvider, api_key="sk-test", base_url=wire_server.openai_base_url
    ) as make:
        yield make


def text_of(events: list[StreamEvent]) -> str:
    return "".join(e.text for e in events if isinstance(e, TextDelta))


async def no_sleep(delay: float) -> None:
    return None


async def test_a_request_never_runs_a_checkouts_uname(
    wire_server: WireServer,
    provider_at: Callable[..., OpenAIProvider],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The SDK's first request asks ``platform.platform()``, which runs ``uname -p`` by name
    off PATH: with an empty entry first, Vis started in a checkout ran its ``./uname``."""
    planted = tmp_path / "pwned"
    uname = tmp_path / "uname"
    uname.write_text(f'#!/bin/sh\necho "$*" >> "{planted}"\necho x86_64\n', encoding="utf-8")
    uname.chmod(0o755)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PATH", f":{Path('/usr/bin')}:{Path('/bin')}")
    # Python keeps the answer for the process: forget one an earlier test got
    monkeypatch.delitem(vars(platform.uname()), "processor", raising=False)
    wire_server.reply(openai_reply("hi"))
    assert text_of(await collect(provider_at())) == "hi"
    assert wire_server.requests[0].headers["x-stainless-os"] == "Linux"
    assert not planted.exists(), planted.read_text(encoding="utf-8")


async def test_text_answer_with_cached_usage(
    wire_server: WireServer, provider_at: Callable[..., OpenAIProvider]
) -> None:
    wire_server.reply(openai_reply("Hello from the wire server!", usage=(1000, 12, 600)))
    events = await collect(provider_at())

    assert text_of(events) == "Hello from the wire server!"
    assert sum(isinstance(e, TextDelta) for e in events) > 1  # really streamed
    assert events[-2:] == [UsageUpdate(Usage(input=400, output=12, cache_read=600)), ResponseDone()]
    request = wire_server.requests[0]
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer sk-test"


async def test_tool_call_arguments_are_accumulated(
    wire_server: WireServer, provider_at: Callable[..., OpenAIProvider]
) -> None:
    code = "files = await ls('.')\nprint(files)\n"
    wire_server.reply(
        openai_reply(
            "Looking.",
            [
                WireToolCall("call_1", "python_execution", {"code": code}),
                WireToolCall("call_2", "mcp__docs__search", {"query": "install", "limit": 3}),
            ],
            piece=5,
        )
    )
    events = await collect(provider_at())

    calls = [e.call for e in events if isinstance(e, ToolCallReady)]
    assert calls == [
        ToolCall("call_1", "python_execution", {"code": code}),
        ToolCall("call_2", "mcp__docs__search", {"query": "install", "limit": 3}),
    ]
    # each call's start is told once, when its name first streams, before any call is ready
    started = [(i, e.name) for i, e in enumerate(events) if isinstance(e, ToolCallStarted)]
    assert [name for _, name in started] == ["python_execution", "mcp__docs__search"]
    assert started[-1][0] < next(i for i, e in enumerate(events) if isinstance(e, ToolCallReady))
    assert events[-1] == ResponseDone("tool_use")


async def test_request_body_maps_every_role(
    wire_server: WireServer, provider_at: Callable[..., OpenAIProvider]
) -> None:
    wire_server.reply(openai_reply("ok"))
    await collect(provider_at(), conversation_request("qwen3"))

    body = wire_server.requests[0].body
    assert body["model"] == "qwen3"
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["max_tokens"] == 1000  # a compatible server: the widely supported name
    assert body["messages"] == [
        {"role": "system", "content": "You are Vis."},
        {"role": "user", "content": "Look around"},
        {
            "role": "assistant",
            "content": "Checking.",
            "tool_calls": [
                {
                    "id": "call_a",
                    "type": "function",
                    "function": {"name": "python_execution", "arguments": '{"code": "print(1)"}'},
                },
                {
                    "id": "call_b",
                    "type": "function",
                    "function": {"name": "mcp__docs__search", "arguments": '{"query": "install"}'},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "call_a", "content": "1\n"},
        {"role": "tool", "tool_call_id": "call_b", "content": "Error: server down"},
        {"role": "user", "content": "And then?"},
    ]
    assert body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "python_execution",
                "description": "Run Python in the sandbox.",
                "parameters": {
                    "type": "object",
                    "properties": {"code": {"type": "string"}},
                    "required": ["code"],
                },
            },
        }
    ]


async def test_retry_after_503(
    wire_server: WireServer, provider_at: Callable[..., OpenAIProvider]
) -> None:
    wire_server.reply(openai_error(503, "overloaded, try again"), openai_reply("second time lucky"))
    retries: list[tuple[int, int | None]] = []

    def on_retry(attempt: int, error: ProviderError, delay: float) -> None:
        retries.append((attempt, error.status))

    events = [
        e
        async for e in stream_with_retries(
            provider_at(), simple_request(), on_retry=on_retry, sleep=no_sleep
        )
    ]
    assert text_of(events) == "second time lucky"
    assert len(wire_server.requests) == 2
    assert retries == [(1, 503)]


async def test_401_is_a_config_error_naming_the_key(
    wire_server: WireServer, provider_at: Callable[..., OpenAIProvider]
) -> None:
    wire_server.reply(openai_error(401, "Incorrect API key provided", "invalid_request_error"))
    provider = provider_at(config_file="/home/me/.config/vis/config.toml")
    with pytest.raises(ProviderConfigError) as failure:
        await collect(provider)
    message = str(failure.value)
    assert "OPENAI_API_KEY" in message
    assert "Incorrect API key provided" in message
    assert "/home/me/.config/vis/config.toml" in message
    assert "api_key_env" in message
    assert failure.value.status == 401
    assert not failure.value.retryable


async def test_custom_key_env_is_named_on_403(
    wire_server: WireServer, provider_at: Callable[..., OpenAIProvider]
) -> None:
    wire_server.reply(openai_error(403, "forbidden"))
    provider = provider_at(name="openrouter", key_env="OPENROUTER_API_KEY")
    with pytest.raises(ProviderConfigError, match=r"OPENROUTER_API_KEY.*\[providers\.openrouter\]"):
        await collect(provider)


@pytest.mark.parametrize(("status", "retryable"), [(429, True), (500, True), (400, False)])
async def test_status_errors_map_to_provider_errors(
    wire_server: WireServer,
    status: int,
    retryable: bool,
    provider_at: Callable[..., OpenAIProvider],
) -> None:
    wire_server.reply(openai_error(status, "nope"))
    with pytest.raises(ProviderError) as failure:
        await collect(provider_at())
    assert failure.value.status == status
    assert failure.value.retryable is retryable
    assert "nope" in str(failure.value)


async def test_connection_cut_mid_stream_is_not_retried(
    wire_server: WireServer, provider_at: Callable[..., OpenAIProvider]
) -> None:
    wire_server.reply(openai_reply("a long answer that is cut off", piece=4, cut_after=3))
    seen: list[StreamEvent] = []
    with pytest.raises(ProviderError) as failure:
        async for event in stream_with_retries(provider_at(), simple_request(), sleep=no_sleep):
            seen.append(event)
    assert failure.value.retryable  # transient, but text was already shown
    assert text_of(seen) == "a long a"  # the role chunk and two text pieces
    assert len(wire_server.requests) == 1


async def test_refused_connection_is_retryable(
    provider_at: Callable[..., OpenAIProvider],
) -> None:
    with socket.socket() as sock:  # a port bound here, that nobody listens on meanwhile
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        provider = provider_at(base_url=f"http://127.0.0.1:{port}/v1")
        with pytest.raises(ProviderError) as failure:
            await collect(provider)
    assert failure.value.retryable
    assert "openai" in str(failure.value)


async def test_missing_usage_is_estimated(
    wire_server: WireServer, provider_at: Callable[..., OpenAIProvider]
) -> None:
    wire_server.reply(openai_reply("12345678", usage=None))
    events = await collect(provider_at())
    usage = next(e.usage for e in events if isinstance(e, UsageUpdate))
    assert usage.output == 2
    assert usage.input > 0


async def test_official_endpoint_sends_max_completion_tokens(
    provider_at: Callable[..., OpenAIProvider],
) -> None:
    assert provider_at(base_url=None).form.completion_tokens
    assert not provider_at().form.completion_tokens
    params = build_openai_params(simple_request(), provider_at(base_url=None).form)
    assert params["max_completion_tokens"] == 1000
    assert "max_tokens" not in params
