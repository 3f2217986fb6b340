"""The Anthropic provider against a local server speaking the Messages SSE format."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import replace

import pytest

from vis_core.model.conversation import (
    Message,
    ResponseDone,
    TextDelta,
    ThinkingDelta,
    ToolCall,
    ToolCallReady,
    ToolCallStarted,
    UsageUpdate,
)
from vis_core.model.usage import Usage
from vis_core.providers.anthropic_provider import AnthropicProvider
from vis_core.providers.base import (
    ContextOverflowError,
    ModelRequest,
    ProviderConfigError,
    ProviderError,
    StreamEvent,
)
from vis_core.providers.errors import UnfinishedResponse
from vis_core.providers.retry import stream_with_retries

from .samples import collect, conversation_request, providers, simple_request
from .wire_servers import (
    WireReply,
    WireServer,
    WireToolCall,
    anthropic_error,
    anthropic_frames,
    anthropic_reply,
)

# the provider SDKs are imported in the test process (anthropic ~2 s of CPU): on one worker
pytestmark = pytest.mark.xdist_group("sdk-imports")

EPHEMERAL = {"type": "ephemeral"}


@pytest.fixture
async def provider_at(wire_server: WireServer) -> AsyncIterator[Callable[..., AnthropicProvider]]:
    """Builds providers aimed at the wire server and closes them after the test."""
    async with providers(
        AnthropicProvider, api_key="sk-ant-test", base_url=wire_server.anthropic_base_url
    ) as make:
        yield make


def text_of(events: list[StreamEvent]) -> str:
    return "".join(e.text for e in events if isinstance(e, TextDelta))


async def no_sleep(delay: float) -> None:
    return None


async def test_text_answer_with_cache_usage(
    wire_server: WireServer, provider_at: Callable[..., AnthropicProvider]
) -> None:
    wire_server.reply(anthropic_reply("Hello from Claude's wire!", usage=(21, 13, 1500, 200)))
    events = await collect(provider_at())

    assert text_of(events) == "Hello from Claude's wire!"
    assert sum(isinstance(e, TextDelta) for e in events) > 1
    assert events[-2:] == [
        UsageUpdate(Usage(input=21, output=13, cache_read=1500, cache_write=200)),
        ResponseDone("end_turn"),
    ]
    request = wire_server.requests[0]
    assert request.path == "/v1/messages"
    assert request.headers["authorization"] == "Bearer sk-ant-test"  # this SDK sends the key so


async def test_tool_use_input_is_accumulated(
    wire_server: WireServer, provider_at: Callable[..., AnthropicProvider]
) -> None:
    code = "for name in await ls('src'):\n    print(name)\n"
    wire_server.reply(
        anthropic_reply(
            "I'll list it.",
            [
                WireToolCall("toolu_1", "python_execution", {"code": code}),
                WireToolCall("toolu_2", "mcp__docs__search", {}),
            ],
            piece=4,
        )
    )
    events = await collect(provider_at())

    assert [e.call for e in events if isinstance(e, ToolCallReady)] == [
        ToolCall("toolu_1", "python_execution", {"code": code}),
        ToolCall("toolu_2", "mcp__docs__search", {}),
    ]
    # each call's start is told as its block starts, before any call is ready
    started = [(i, e.name) for i, e in enumerate(events) if isinstance(e, ToolCallStarted)]
    assert [name for _, name in started] == ["python_execution", "mcp__docs__search"]
    assert started[-1][0] < next(i for i, e in enumerate(events) if isinstance(e, ToolCallReady))
    assert text_of(events) == "I'll list it."
    assert events[-1] == ResponseDone("tool_use")


async def test_a_blocks_content_given_whole_at_its_start_is_kept(
    wire_server: WireServer, provider_at: Callable[..., AnthropicProvider]
) -> None:
    """A compatible server may give a block's thinking, text or tool input whole in its
    content_block_start and stream no delta (the SDK reads the block so): Vis dropped the
    thinking and the text, and ran the call with no arguments."""
    arguments = {"code": "print('é')"}
    [start, *_, delta, stop] = anthropic_reply().frames
    blocks = [
        {"type": "thinking", "thinking": "Plan it.", "signature": "sig-whole"},
        {"type": "text", "text": "Running it."},
        {"type": "tool_use", "id": "toolu_1", "name": "python_execution", "input": arguments},
    ]
    frames = anthropic_frames(
        event
        for index, block in enumerate(blocks)
        for event in (
            {"type": "content_block_start", "index": index, "content_block": block},
            {"type": "content_block_stop", "index": index},
        )
    )
    wire_server.reply(
        WireReply(frames=(start, *frames, delta.replace("end_turn", "tool_use"), stop))
    )
    events = await collect(provider_at())
    assert events[:4] == [
        ThinkingDelta("Plan it."),
        ThinkingDelta(signature="sig-whole"),
        TextDelta("Running it."),
        ToolCallStarted("python_execution"),
    ]
    assert [e.call for e in events if isinstance(e, ToolCallReady)] == [
        ToolCall("toolu_1", "python_execution", arguments)
    ]


async def test_request_body_maps_tool_results_and_caches(
    wire_server: WireServer, provider_at: Callable[..., AnthropicProvider]
) -> None:
    wire_server.reply(anthropic_reply("ok"))
    await collect(provider_at(), conversation_request("claude-sonnet-4-6"))

    body = wire_server.requests[0].body
    assert body["model"] == "claude-sonnet-4-6"
    assert body["max_tokens"] == 1000
    assert body["stream"] is True
    assert body["system"] == [{"type": "text", "text": "You are Vis.", "cache_control": EPHEMERAL}]
    assert body["tools"] == [
        {
            "name": "python_execution",
            "description": "Run Python in the sandbox.",
            "input_schema": {
                "type": "object",
                "properties": {"code": {"type": "string"}},
                "required": ["code"],
            },
            "cache_control": EPHEMERAL,  # the last schema: caches every tool schema
        }
    ]
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "Look around"}]},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Checking."},
                {
                    "type": "tool_use",
                    "id": "call_a",
                    "name": "python_execution",
                    "input": {"code": "print(1)"},
                },
                {
                    "type": "tool_use",
                    "id": "call_b",
                    "name": "mcp__docs__search",
                    "input": {"query": "install"},
                },
            ],
        },
        {  # both results and the follow-up merge into one user turn, results first
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "call_a", "content": "1\n"},
                {
                    "type": "tool_result",
                    "tool_use_id": "call_b",
                    "content": "server down",
                    "is_error": True,
                },
                {"type": "text", "text": "And then?", "cache_control": EPHEMERAL},
            ],
        },
    ]


async def test_user_text_before_results_is_reordered(
    wire_server: WireServer, provider_at: Callable[..., AnthropicProvider]
) -> None:
    wire_server.reply(anthropic_reply("ok"))
    request = ModelRequest(
        model="claude-haiku-4-5",
        system="",
        messages=(
            Message("user", "go"),
            Message("assistant", "", tool_calls=(ToolCall("t1", "python_execution", {}),)),
            Message("user", "(interjection)"),
            Message("tool", "", tool_call_id="t1"),
        ),
    )
    await collect(provider_at(), request)

    body = wire_server.requests[0].body
    assert "system" not in body
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user"]
    assert body["messages"][1]["content"] == [
        {"type": "tool_use", "id": "t1", "name": "python_execution", "input": {}}
    ]
    assert body["messages"][2]["content"] == [
        {"type": "tool_result", "tool_use_id": "t1"},
        {"type": "text", "text": "(interjection)", "cache_control": EPHEMERAL},
    ]


async def test_retry_after_503(
    wire_server: WireServer, provider_at: Callable[..., AnthropicProvider]
) -> None:
    wire_server.reply(anthropic_error(503, "service unavailable"), anthropic_reply("back again"))
    statuses: list[int | None] = []

    def on_retry(attempt: int, error: ProviderError, delay: float) -> None:
        statuses.append(error.status)

    events = [
        e
        async for e in stream_with_retries(
            provider_at(), simple_request(), on_retry=on_retry, sleep=no_sleep
        )
    ]
    assert text_of(events) == "back again"
    assert len(wire_server.requests) == 2
    assert statuses == [503]


async def test_401_is_a_config_error_naming_the_key(
    wire_server: WireServer, provider_at: Callable[..., AnthropicProvider]
) -> None:
    wire_server.reply(anthropic_error(401, "invalid x-api-key", "authentication_error"))
    with pytest.raises(ProviderConfigError) as failure:
        await collect(provider_at(config_file="/tmp/vis-home/config.toml"))
    message = str(failure.value)
    assert "ANTHROPIC_API_KEY" in message
    assert "invalid x-api-key" in message
    assert "[providers.anthropic]" in message
    assert "/tmp/vis-home/config.toml" in message
    assert failure.value.status == 401


@pytest.mark.parametrize("status", [529, 200])
async def test_overloaded_529_is_retryable(
    wire_server: WireServer, provider_at: Callable[..., AnthropicProvider], status: int
) -> None:
    """With 200 (a compatible proxy's error body): Vis called it a malformed stream and told
    the person to check base_url, naming OpenAI's /v1."""
    wire_server.reply(anthropic_error(status, "Overloaded", "overloaded_error"))
    with pytest.raises(ProviderError) as failure:
        await collect(provider_at())
    assert str(failure.value) == "anthropic request failed (HTTP 529): Overloaded"
    assert failure.value.status == 529
    assert failure.value.retryable


async def test_a_page_with_200_names_base_url_without_openais_v1(
    wire_server: WireServer, provider_at: Callable[..., AnthropicProvider]
) -> None:
    """It told the person an OpenAI-compatible server's base_url ends in /v1 (the Anthropic
    SDK adds /v1 itself)."""
    page = "<html><body>Sign in to the proxy</body></html>"
    wire_server.reply(WireReply(body=page, raw=True, headers=(("Content-Type", "text/html"),)))
    with pytest.raises(ProviderError) as failure:
        await collect(provider_at(config_file="/tmp/vis-home/config.toml"))
    assert str(failure.value).endswith(
        'answered text/html instead of an event stream: "Sign in to the proxy"; check '
        "base_url under [providers.anthropic] in /tmp/vis-home/config.toml"
    )


async def test_error_event_mid_stream_is_raised_not_retried(
    wire_server: WireServer, provider_at: Callable[..., AnthropicProvider]
) -> None:
    wire_server.reply(
        anthropic_reply("Half an ans", error_event=("overloaded_error", "Overloaded")),
        anthropic_reply("never used"),
    )
    seen: list[StreamEvent] = []
    with pytest.raises(ProviderError) as failure:
        async for event in stream_with_retries(provider_at(), simple_request(), sleep=no_sleep):
            seen.append(event)
    assert text_of(seen) == "Half an ans"
    assert failure.value.status == 529
    assert failure.value.retryable
    assert len(wire_server.requests) == 1


async def test_a_failure_after_only_a_call_began_is_retried(
    wire_server: WireServer, provider_at: Callable[..., AnthropicProvider]
) -> None:
    call = WireToolCall("toolu_1", "python_execution", {"code": "1"})
    frames = anthropic_reply("", [call]).frames
    began = next(i for i, f in enumerate(frames) if '"tool_use"' in f)
    [error] = anthropic_reply(error_event=("overloaded_error", "Overloaded")).frames[-1:]
    wire_server.reply(WireReply(frames=(*frames[: began + 1], error)), anthropic_reply("back"))
    seen: list[StreamEvent] = []
    async for event in stream_with_retries(provider_at(), simple_request(), sleep=no_sleep):
        seen.append(event)
    # the start of a call is a hint, not an answer: the request is tried again
    assert seen[0] == ToolCallStarted("python_execution")
    assert text_of(seen) == "back"
    assert len(wire_server.requests) == 2


async def test_unreadable_tool_input_is_kept_raw_with_what_was_wrong(
    wire_server: WireServer, provider_at: Callable[..., AnthropicProvider]
) -> None:
    reply = anthropic_reply("", [WireToolCall("t", "python_execution", {"code": "x" * 40})])
    deltas = [f for f in reply.frames if "input_json_delta" in f]
    # keep only the first piece of the JSON: the block stops after a partial argument
    frames = tuple(f for f in reply.frames if f not in deltas[1:])
    wire_server.reply(WireReply(frames=frames))
    events = await collect(provider_at())
    [call] = [e.call for e in events if isinstance(e, ToolCallReady)]
    assert call.arguments == {}
    assert call.raw_arguments == '{"code"'
    assert "not valid JSON (Expecting ':' delimiter" in call.problem
    assert "output limit" not in call.problem
    assert events[-1] == ResponseDone("tool_use")


async def test_max_tokens_inside_a_tool_call_marks_it_cut(
    wire_server: WireServer, provider_at: Callable[..., AnthropicProvider]
) -> None:
    reply = anthropic_reply(
        "Running:",
        [WireToolCall("t", "python_execution", {"code": "x" * 40})],
        stop_reason="max_tokens",
    )
    deltas = [f for f in reply.frames if "input_json_delta" in f]
    frames = tuple(f for f in reply.frames if f not in deltas[2:])
    wire_server.reply(WireReply(frames=frames))
    events = await collect(provider_at())
    [call] = [e.call for e in events if isinstance(e, ToolCallReady)]
    assert call.problem.startswith("the answer was cut at the output limit (max_tokens)")
    assert call.raw_arguments.startswith('{"code": "x')
    assert events[-1] == ResponseDone("max_tokens")


async def test_stream_closed_without_message_stop_is_unfinished(
    wire_server: WireServer, provider_at: Callable[..., AnthropicProvider]
) -> None:
    reply = anthropic_reply("A long answer that the server never finishes")
    frames = tuple(f for f in reply.frames if "message_delta" not in f and "message_stop" not in f)
    wire_server.reply(WireReply(frames=frames))
    with pytest.raises(UnfinishedResponse, match="ended unfinished .after 44 characters") as err:
        await collect(provider_at())
    assert wire_server.anthropic_base_url in str(err.value)
    assert err.value.usage == Usage(input=10, output=1)


async def test_a_stream_that_breaks_after_its_stop_reason_keeps_the_answer(
    wire_server: WireServer, provider_at: Callable[..., AnthropicProvider]
) -> None:
    """The connection broke after ``message_delta`` gave the stop reason, losing only
    ``message_stop``: the answer was failed as unfinished (an OpenAI-compatible one after its
    finish_reason is kept)."""
    reply = anthropic_reply("A whole answer.")
    (stop,) = [i for i, f in enumerate(reply.frames) if "message_stop" in f]
    wire_server.reply(replace(reply, cut_after=stop), replace(reply, cut_after=stop, reset=True))
    for _ in range(2):  # closed, then reset
        events = await collect(provider_at())
        assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "A whole answer."
        assert events[-1] == ResponseDone("end_turn")


async def test_prompt_too_long_is_a_context_overflow(
    wire_server: WireServer, provider_at: Callable[..., AnthropicProvider]
) -> None:
    wire_server.reply(
        anthropic_error(
            400, "prompt is too long: 210351 tokens > 200000 maximum", "invalid_request_error"
        )
    )
    with pytest.raises(ContextOverflowError, match="prompt is too long") as err:
        await collect(provider_at())
    assert (err.value.input_tokens, err.value.limit, err.value.retryable) == (210351, 200000, False)


async def test_tool_choice_forces_the_first_request_of_a_turn_only(
    wire_server: WireServer, provider_at: Callable[..., AnthropicProvider]
) -> None:
    wire_server.reply(anthropic_reply("a"), anthropic_reply("b"))
    provider = provider_at(model_overrides={"m": {"tool_choice": "python_execution"}})
    await collect(provider, simple_request("m"))
    after_results = conversation_request("m")
    await collect(provider, replace(after_results, messages=after_results.messages[:4]))
    first, later = wire_server.bodies
    assert first["tool_choice"] == {"type": "tool", "name": "python_execution"}
    assert later["tool_choice"] == {"type": "auto"}


async def test_reasoning_effort_turns_on_thinking(
    wire_server: WireServer, provider_at: Callable[..., AnthropicProvider]
) -> None:
    wire_server.reply(anthropic_reply("a"))
    provider = provider_at(model_overrides={"m": {"reasoning_effort": "low"}})
    await collect(provider, simple_request("m"))
    body = wire_server.bodies[0]
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert body["max_tokens"] > 2048
