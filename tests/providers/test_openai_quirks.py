"""The OpenAI provider against wire fixtures that behave like real compatible servers do:
llama.cpp / llama-cpp-python quirks, cut and unfinished streams, error bodies."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import replace

import pytest

from vis_core.model.conversation import (
    Message,
    ResponseDone,
    TextDelta,
    ToolCall,
    ToolCallReady,
    UsageUpdate,
)
from vis_core.model.usage import Usage
from vis_core.providers.base import ContextOverflowError, ProviderError
from vis_core.providers.common import estimate_tokens, request_chars
from vis_core.providers.errors import UnfinishedResponse
from vis_core.providers.openai_provider import OpenAIProvider
from vis_core.providers.retry import stream_with_retries

from .samples import collect, conversation_request, providers, simple_request
from .wire_servers import (
    RecordedRequest,
    WireReply,
    WireServer,
    WireToolCall,
    llama_cpp_python_checks,
    openai_error,
    openai_frames,
    openai_reply,
)

# the provider SDKs are imported in the test process (anthropic ~2 s of CPU): on one worker
pytestmark = pytest.mark.xdist_group("sdk-imports")


@pytest.fixture
async def provider_at(wire_server: WireServer) -> AsyncIterator[Callable[..., OpenAIProvider]]:
    async with providers(
        OpenAIProvider, api_key="sk-test", base_url=wire_server.openai_base_url
    ) as make:
        yield make


def calls_of(events: list) -> list[ToolCall]:
    return [e.call for e in events if isinstance(e, ToolCallReady)]


async def no_sleep(delay: float) -> None:
    return None


async def test_tool_name_repeated_in_every_chunk_is_not_doubled(
    wire_server: WireServer, provider_at: Callable[..., OpenAIProvider]
) -> None:
    call = WireToolCall("call_1", "python_execution", {"code": "print('hi')\nprint(2)"})
    wire_server.reply(openai_reply(tool_calls=[call], repeat_name=True, piece=5))
    events = await collect(provider_at())
    assert calls_of(events) == [
        ToolCall("call_1", "python_execution", {"code": "print('hi')\nprint(2)"})
    ]
    assert events[-1] == ResponseDone("tool_use")


async def test_literal_control_characters_in_arguments_are_read(
    wire_server: WireServer, provider_at: Callable[..., OpenAIProvider]
) -> None:
    raw = '{"code": "for i in range(2):\n\tprint(i)\n"}'  # a real newline and tab in a string
    call = WireToolCall("call_1", "python_execution")
    wire_server.reply(openai_reply(tool_calls=[call], raw_arguments=[raw]))
    [got] = calls_of(await collect(provider_at()))
    assert got.arguments == {"code": "for i in range(2):\n\tprint(i)\n"}
    assert got.problem == ""


def tool_chunk(index: int, arguments: str, call_id: str = "") -> dict:
    """A chunk with one tool-call piece; ``call_id`` opens the call, naming it."""
    part: dict = {"index": index, "function": {"arguments": arguments}}
    if call_id:
        part = {**part, "id": call_id, "type": "function"}
        part["function"] = {"name": "python_execution", "arguments": arguments}
    return {"choices": [{"index": 0, "delta": {"tool_calls": [part]}, "finish_reason": None}]}


FINISH_TOOL_CALLS = {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}


async def test_a_placeholder_then_the_whole_arguments_are_the_arguments(
    wire_server: WireServer, provider_at: Callable[..., OpenAIProvider]
) -> None:
    """Gemini's compatible API sends ``{}`` and then the whole arguments: Vis read
    ``{}{"code": "1"}`` and refused the call as invalid JSON."""
    chunks = [tool_chunk(0, "{}", "call_1"), tool_chunk(0, '{"code": "1"}'), FINISH_TOOL_CALLS]
    wire_server.reply(WireReply(frames=openai_frames(chunks)))
    events = await collect(provider_at())
    assert calls_of(events) == [ToolCall("call_1", "python_execution", {"code": "1"})]


async def test_calls_interleaved_by_index_and_a_character_split_between_packets(
    wire_server: WireServer, provider_at: Callable[..., OpenAIProvider]
) -> None:
    text = 'data: {"choices": [{"index": 0, "delta": {"content": "日本"}}]}\n\n'.encode()
    split = text.index("本".encode()) + 1
    chunks = [
        tool_chunk(0, '{"code": ', "call_a"),
        tool_chunk(1, '{"code": ', "call_b"),
        tool_chunk(1, '"b"}'),
        tool_chunk(0, '"a"}'),
        FINISH_TOOL_CALLS,
    ]
    wire_server.reply(WireReply(frames=(text[:split], text[split:], *openai_frames(chunks))))
    events = await collect(provider_at())
    assert TextDelta("日本") in events
    assert calls_of(events) == [
        ToolCall("call_a", "python_execution", {"code": "a"}),
        ToolCall("call_b", "python_execution", {"code": "b"}),
    ]


async def test_an_empty_data_line_is_no_event(
    wire_server: WireServer, provider_at: Callable[..., OpenAIProvider]
) -> None:
    """Some servers and proxies keep a stream alive with ``data:`` and nothing after it: Vis
    failed the turn on 'an event that is not valid JSON'."""
    frames = openai_reply("fine").frames
    wire_server.reply(WireReply(frames=(frames[0], "data:\n\n", "data: \n\n", *frames[1:])))
    events = await collect(provider_at())
    assert events[0] == TextDelta("fine") and events[-1] == ResponseDone("end_turn")


async def test_invalid_arguments_keep_the_raw_text_and_say_what_is_wrong(
    wire_server: WireServer, provider_at: Callable[..., OpenAIProvider]
) -> None:
    raw = '{"code": "print(1)" "extra": 2}'
    call = WireToolCall("call_1", "python_execution")
    wire_server.reply(openai_reply(tool_calls=[call], raw_arguments=[raw]))
    [got] = calls_of(await collect(provider_at()))
    assert got.raw_arguments == raw
    assert "Expecting ',' delimiter: line 1 column 21" in got.problem
    assert "output limit" not in got.problem  # it was not cut


async def test_length_stop_marks_the_answer_and_the_call_cut(
    wire_server: WireServer, provider_at: Callable[..., OpenAIProvider]
) -> None:
    call = WireToolCall("call_1", "python_execution")
    wire_server.reply(
        openai_reply(
            "Let me run", [call], raw_arguments=['{"code": "print(\'a very'], finish_reason="length"
        )
    )
    events = await collect(provider_at())
    [got] = calls_of(events)
    assert got.problem.startswith("the answer was cut at the output limit (max_tokens)")
    assert got.raw_arguments == '{"code": "print(\'a very'
    assert events[-1] == ResponseDone("max_tokens")


async def test_a_stream_closed_without_finish_or_done_is_an_error(
    wire_server: WireServer, provider_at: Callable[..., OpenAIProvider]
) -> None:
    wire_server.reply(openai_reply("The answer is cut mid-wo", unfinished=True))
    seen: list = []
    with pytest.raises(UnfinishedResponse) as failure:
        async for event in provider_at().stream(simple_request()):
            seen.append(event)
    message = str(failure.value)
    assert "the response ended unfinished (after 24 characters)" in message
    assert wire_server.openai_base_url in message and "log" in message
    assert "".join(e.text for e in seen if isinstance(e, TextDelta)) == "The answer is cut mid-wo"
    assert failure.value.usage is not None and failure.value.usage.output == 6


async def test_a_200_with_an_empty_body_is_an_error_not_an_empty_answer(
    wire_server: WireServer, provider_at: Callable[..., OpenAIProvider]
) -> None:
    wire_server.reply(WireReply(empty_stream=True))
    with pytest.raises(UnfinishedResponse, match=r"ended unfinished \(before any answer\)"):
        await collect(provider_at())


async def test_an_empty_200_for_a_request_over_the_limit_is_a_context_overflow(
    wire_server: WireServer, provider_at: Callable[..., OpenAIProvider]
) -> None:
    wire_server.reply(WireReply(empty_stream=True))
    provider = provider_at(model_overrides={"small": {"input_limit": 10}})
    with pytest.raises(ContextOverflowError) as failure:
        await collect(provider, simple_request("small", "x" * 400))
    assert failure.value.limit == 10 and (failure.value.input_tokens or 0) > 10
    assert failure.value.usage is None  # refused before reading it: not counted as spent


async def test_done_without_finish_reason_is_accepted(
    wire_server: WireServer, provider_at: Callable[..., OpenAIProvider]
) -> None:
    frames = openai_reply("fine", usage=None).frames
    frames = tuple(f for f in frames if '"finish_reason": "stop"' not in f)
    wire_server.reply(WireReply(frames=frames))
    events = await collect(provider_at())
    assert events[-1] == ResponseDone("end_turn")


async def test_assistant_content_is_an_empty_string_beside_tool_calls() -> None:
    with WireServer(checks=llama_cpp_python_checks) as server:
        server.reply(openai_reply("ok"))
        async with providers(OpenAIProvider, api_key="k", base_url=server.openai_base_url) as make:
            request = conversation_request()
            messages = (
                Message("user", "go"),
                Message("assistant", "", (ToolCall("c1", "python_execution", {"code": "1"}),)),
                Message("tool", "1", tool_call_id="c1"),
            )
            events = await collect(make(), replace(request, messages=messages))
    assert events[-1] == ResponseDone("end_turn")
    assistant = server.bodies[0]["messages"][2]
    assert assistant["content"] == "" and assistant["tool_calls"][0]["id"] == "c1"


async def test_a_500_for_a_rejected_request_is_not_retried(
    wire_server: WireServer, provider_at: Callable[..., OpenAIProvider]
) -> None:
    wire_server.reply(
        openai_error(500, 'TypeError: can only concatenate str (not "NoneType") to str'),
        openai_reply("never asked for"),
    )
    with pytest.raises(ProviderError) as failure:
        async for _ in stream_with_retries(provider_at(), simple_request(), sleep=no_sleep):
            pass
    assert not failure.value.retryable
    assert len(wire_server.requests) == 1


@pytest.mark.parametrize(
    ("body", "tokens", "limit"),
    [
        (  # OpenAI
            openai_error(
                400,
                "This model's maximum context length is 128000 tokens. However, your messages "
                "resulted in 130532 tokens. Please reduce the length of the messages.",
                "invalid_request_error",
                "context_length_exceeded",
            ),
            130532,
            128000,
        ),
        (  # llama.cpp's server
            WireReply(
                status=400,
                body={
                    "error": {
                        "code": 400,
                        "message": "the request exceeds the available context size, try "
                        "increasing it",
                        "type": "exceed_context_size_error",
                        "n_prompt_tokens": 5000,
                        "n_ctx": 4096,
                    }
                },
            ),
            5000,
            4096,
        ),
    ],
)
async def test_context_errors_are_context_overflow(
    wire_server: WireServer,
    provider_at: Callable[..., OpenAIProvider],
    body: WireReply,
    tokens: int | None,
    limit: int | None,
) -> None:
    wire_server.reply(body)
    with pytest.raises(ContextOverflowError) as failure:
        await collect(provider_at())
    assert (failure.value.input_tokens, failure.value.limit) == (tokens, limit)
    assert not failure.value.retryable and failure.value.status == 400


async def test_404_without_v1_says_to_add_it(
    wire_server: WireServer, provider_at: Callable[..., OpenAIProvider]
) -> None:
    wire_server.reply(WireReply(status=404, body={"detail": "Not Found"}))
    provider = provider_at(base_url=wire_server.url, name="local")
    with pytest.raises(ProviderError) as failure:
        await collect(provider)
    message = str(failure.value)
    assert f'try base_url = "{wire_server.url}/v1"' in message
    assert "[providers.local]" in message and not failure.value.retryable


async def test_connection_error_names_the_url(
    provider_at: Callable[..., OpenAIProvider],
) -> None:
    provider = provider_at(base_url="http://127.0.0.1:9/v1", name="local")
    with pytest.raises(
        ProviderError, match=r"connection to local at http://127\.0\.0\.1:9/v1/chat"
    ):
        await collect(provider)


async def test_a_stalled_stream_ends_with_an_error_naming_the_setting(
    wire_server: WireServer, provider_at: Callable[..., OpenAIProvider]
) -> None:
    wire_server.reply(replace(openai_reply("slow answer"), stall_after=2, stall=5.0))
    provider = provider_at(stall_timeout=0.5, name="local")
    with pytest.raises(ProviderError, match=r"sent nothing for 0.5 s.*stall_timeout.*local"):
        await collect(provider)


async def test_keep_alive_comments_are_no_stall(
    wire_server: WireServer, provider_at: Callable[..., OpenAIProvider]
) -> None:
    """A server (OpenRouter, a proxy) that sends SSE comments while the model thinks sends
    bytes: the answer after 1.5 s of ``: ping`` every 0.1 s is read with a 1 s stall_timeout."""
    frames = openai_reply("the answer after the wait", piece=50).frames
    pings = (": OPENROUTER PROCESSING\n\n", *[": ping\n\n"] * 15)
    wire_server.reply(WireReply(frames=(frames[0], *pings, *frames[1:]), delay=0.1))
    events = await collect(provider_at(stall_timeout=1.0, name="local"))
    assert events[0] == TextDelta("the answer after the wait")
    assert events[-1] == ResponseDone("end_turn")


async def test_a_stall_timeout_of_0_never_gives_a_response_up(
    wire_server: WireServer, provider_at: Callable[..., OpenAIProvider]
) -> None:
    """``stall_timeout = 0`` is "never" (README, factory): a silent wait longer than the
    request's timeout was given up at that timeout (600 s by default; 1 s here)."""
    wire_server.reply(
        replace(openai_reply("the answer after the wait", piece=50), stall_after=1, stall=1.5)
    )
    events = await collect(provider_at(stall_timeout=0, timeout=1.0, name="local"))
    assert events[0] == TextDelta("the answer after the wait")
    assert events[-1] == ResponseDone("end_turn")


async def test_cancelling_a_stalled_stream_is_immediate(
    wire_server: WireServer, provider_at: Callable[..., OpenAIProvider]
) -> None:
    wire_server.reply(replace(openai_reply("slow answer"), stall_after=2, stall=3600.0))
    got_text = asyncio.Event()

    async def consume() -> None:
        async for event in provider_at(stall_timeout=60).stream(simple_request()):
            if isinstance(event, TextDelta):
                got_text.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(got_text.wait(), 30)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        async with asyncio.timeout(60):  # a guard against a hang (TimeoutError): the stall is 1 h
            await task
    assert wire_server.stalls_ended == 0  # it ended while the server was still stalled


async def test_server_context_size_comes_before_the_configured_limit(
    wire_server: WireServer, provider_at: Callable[..., OpenAIProvider]
) -> None:
    wire_server.serve("/props", WireReply(body={"default_generation_settings": {"n_ctx": 2048}}))
    wire_server.reply(openai_reply("hi"))
    provider = provider_at(model_overrides={"smol": {"input_limit": 9999}})
    assert provider.model_info("smol").input_limit == 9999  # before the server was asked
    await collect(provider, simple_request("smol"))
    assert provider.model_info("smol").input_limit == 2048
    assert wire_server.gets == ["/props"]


async def test_models_listing_gives_the_context_length(
    wire_server: WireServer, provider_at: Callable[..., OpenAIProvider]
) -> None:
    listing = {"data": [{"id": "qwen", "object": "model", "max_model_len": 32768}]}
    wire_server.serve("/v1/models", WireReply(body=listing))
    wire_server.reply(openai_reply("hi"), openai_reply("again"))
    provider = provider_at()
    await collect(provider, simple_request("qwen"))
    await collect(provider, simple_request("qwen"))
    assert provider.model_info("qwen").input_limit == 32768
    assert wire_server.gets == ["/props", "/v1/models"]  # asked once


async def test_a_silent_server_leaves_the_configured_limit(
    wire_server: WireServer, provider_at: Callable[..., OpenAIProvider]
) -> None:
    wire_server.reply(openai_reply("hi"))
    provider = provider_at(model_overrides={"smol": {"input_limit": 4096}})
    await collect(provider, simple_request("smol"))
    assert provider.model_info("smol").input_limit == 4096


async def test_model_options_reach_the_request(
    wire_server: WireServer, provider_at: Callable[..., OpenAIProvider]
) -> None:
    wire_server.reply(openai_reply("a"), openai_reply("b"))
    options = {"tool_choice": "python_execution", "reasoning_effort": "high"}
    provider = provider_at(model_overrides={"m": options})
    await collect(provider, simple_request("m"))
    after_results = conversation_request("m")
    await collect(provider, replace(after_results, messages=after_results.messages[:4]))
    first, later = wire_server.bodies
    assert first["tool_choice"] == "required"  # the only tool declared: the same choice
    assert first["reasoning_effort"] == "high"
    assert later["tool_choice"] == "auto"


async def test_usage_of_a_tool_turn(
    wire_server: WireServer, provider_at: Callable[..., OpenAIProvider]
) -> None:
    call = WireToolCall("call_1", "python_execution", {"code": "1"})
    wire_server.reply(openai_reply(tool_calls=[call], usage=(50, 7, 20)))
    events = await collect(provider_at())
    assert UsageUpdate(Usage(input=30, output=7, cache_read=20)) in events


PYDANTIC_EXTRA = (
    "1 validation error for ChatCompletionRequest\nstream_options\n  Extra inputs are not permitted"
)
AZURE_EXTRA = "Unrecognized request argument supplied: stream_options"
NO_MAX_TOKENS = (
    "Unsupported parameter: 'max_tokens' is not supported with this model. "
    "Use 'max_completion_tokens' instead."
)


@pytest.mark.parametrize(
    ("field", "message", "after"),
    [
        ("stream_options", PYDANTIC_EXTRA, {"max_tokens": 1000}),
        ("stream_options", AZURE_EXTRA, {"max_tokens": 1000}),
        ("max_tokens", NO_MAX_TOKENS, {"max_completion_tokens": 1000}),
    ],
)
async def test_a_refused_field_is_left_out_from_then_on(
    provider_at: Callable[..., OpenAIProvider], field: str, message: str, after: dict
) -> None:
    def refuse(request: RecordedRequest) -> WireReply | None:
        if field in request.body:
            return openai_error(400, message, "invalid_request_error")
        return None

    with WireServer(checks=refuse) as server:
        server.reply(openai_reply("one"), openai_reply("two"))
        provider = provider_at(base_url=server.openai_base_url)
        first = await collect(provider)
        second = await collect(provider)
    assert [field in body for body in server.bodies] == [True, False, False]  # learnt once
    assert all(after.items() <= body.items() for body in server.bodies[1:])
    assert first[-1] == second[-1] == ResponseDone("end_turn")


async def test_a_refusal_of_the_value_is_not_a_refused_field(
    wire_server: WireServer, provider_at: Callable[..., OpenAIProvider]
) -> None:
    """vLLM names both limit fields when the value is too large: not a field it refuses."""
    wire_server.reply(
        openai_error(
            400,
            "'max_tokens' or 'max_completion_tokens' is too large: 1000. This model's maximum "
            "context length is 1024 tokens and your request has 100 input tokens "
            "(1000 > 1024 - 100). None",
            "BadRequestError",
        )
    )
    with pytest.raises(ContextOverflowError):
        await collect(provider_at())
    assert len(wire_server.requests) == 1


# --- credentials in base_url --------------------------------------------------------------


def with_credentials(url: str) -> str:
    return url.replace("http://", "http://proxyuser:hunter2Secret@", 1)


async def test_a_password_in_base_url_is_never_in_an_error(
    wire_server: WireServer, provider_at: Callable[..., OpenAIProvider]
) -> None:
    wire_server.reply(
        WireReply(status=404, body={"detail": "Not Found"}),
        openai_reply("Partial", unfinished=True),
    )
    provider = provider_at(base_url=with_credentials(wire_server.url), name="local")
    messages = []
    for _ in range(2):
        with pytest.raises(ProviderError) as failure:
            await collect(provider)
        messages.append(str(failure.value))
    refused = provider_at(base_url=with_credentials("http://127.0.0.1:9/v1"), name="local")
    with pytest.raises(ProviderError) as failure:
        await collect(refused)
    messages.append(str(failure.value))
    assert wire_server.requests[0].headers["authorization"].startswith("Basic ")  # still sent
    assert not [m for m in messages if "hunter2Secret" in m or "proxyuser" in m]
    hint, unfinished, connection = messages
    assert f'try base_url = "{wire_server.url.replace("//", "//***@")}/v1"' in hint
    assert f"the server at {wire_server.url.replace('//', '//***@')}" in unfinished
    assert "connection to local at http://***@127.0.0.1:9/v1/chat/completions" in connection


async def test_a_key_in_the_query_is_masked_where_the_server_echoes_it(
    wire_server: WireServer, provider_at: Callable[..., OpenAIProvider]
) -> None:
    wire_server.reply(
        openai_error(404, "no route /openai/chat/completions?key=AIzaSecretQueryKey&alt=sse")
    )
    provider = provider_at(base_url=f"{wire_server.url}/openai", name="gemini")
    with pytest.raises(ProviderError) as failure:
        await collect(provider)
    assert "AIzaSecretQueryKey" not in str(failure.value)
    assert "?key=***&alt=sse" in str(failure.value)


# --- what is shown of an error body -------------------------------------------------------

NGINX_502 = (
    "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n"
    "<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx/1.18.0 (Ubuntu)</center>\r\n"
    "</body>\r\n</html>\r\n"
)


async def test_an_html_error_page_is_shown_as_its_words(
    wire_server: WireServer, provider_at: Callable[..., OpenAIProvider]
) -> None:
    page = WireReply(status=502, body=NGINX_502, raw=True, headers=(("Content-Type", "text/html"),))
    wire_server.reply(page)
    with pytest.raises(ProviderError) as failure:
        await collect(provider_at(name="local"))
    assert str(failure.value) == (
        "local request failed (HTTP 502): 502 Bad Gateway nginx/1.18.0 (Ubuntu)"
    )
    assert failure.value.retryable


async def test_an_error_body_with_200_is_the_servers_error(
    wire_server: WireServer, provider_at: Callable[..., OpenAIProvider]
) -> None:
    """A server that fails yet answers 200 with ``{"error": ...}`` (LM Studio, proxies): Vis
    called it a malformed stream and told the person to check base_url. An HTTP status as
    its code is retried as an error event's is (tests/providers/test_hostile_streams.py has
    the error given as text)."""
    wire_server.reply(WireReply(body={"error": {"message": "model is loading", "code": 503}}))
    with pytest.raises(ProviderError) as failure:
        await collect(provider_at(name="local"))
    server = f"The model server at {wire_server.openai_base_url} (provider local)"
    assert str(failure.value) == f"{server} answered with an error (code 503): model is loading"
    assert failure.value.retryable


async def test_a_huge_error_message_is_cut_saying_so(
    wire_server: WireServer, provider_at: Callable[..., OpenAIProvider]
) -> None:
    wire_server.reply(openai_error(500, "boom " + "x" * 900_000))
    with pytest.raises(ProviderError) as failure:
        await collect(provider_at(name="local"))
    message = str(failure.value)
    assert message.startswith("local request failed (HTTP 500): boom xxx")
    assert message.endswith("xxx… (cut: 900,005 characters in all)")
    assert len(message) < 500


# --- a connection that breaks -------------------------------------------------------------


def cut_after_finish(reply: WireReply) -> WireReply:
    """``reply`` closed after its finish_reason chunk: no usage chunk, no [DONE]."""
    return replace(reply, cut_after=len(reply.frames) - 2)


async def test_a_finished_answer_is_kept_when_the_connection_breaks_before_done(
    wire_server: WireServer, provider_at: Callable[..., OpenAIProvider]
) -> None:
    call = WireToolCall("call_1", "python_execution", {"code": "print(1)"})
    wire_server.reply(
        cut_after_finish(openai_reply("Complete answer.", piece=50)),
        cut_after_finish(openai_reply("Running it.", [call], piece=50)),
    )
    provider = provider_at()
    answer = await collect(provider)
    with_call = await collect(provider)
    assert answer[0] == TextDelta("Complete answer.")
    assert answer[-1] == ResponseDone("end_turn")
    [usage] = [e.usage for e in answer if isinstance(e, UsageUpdate)]
    assert usage.input == estimate_tokens(request_chars(simple_request())) and usage.output > 0
    assert calls_of(with_call) == [ToolCall("call_1", "python_execution", {"code": "print(1)"})]
    assert with_call[-1] == ResponseDone("tool_use")


async def test_a_reset_connection_says_what_broke(
    wire_server: WireServer, provider_at: Callable[..., OpenAIProvider]
) -> None:
    wire_server.reply(replace(openai_reply("never read"), cut_after=0, reset=True))
    with pytest.raises(ProviderError) as failure:
        await collect(provider_at(name="local"))
    message = str(failure.value)
    assert message.startswith(f"connection to local at {wire_server.openai_base_url}/chat/")
    assert message.endswith(" failed: read error ([Errno 104] Connection reset by peer)")
    assert failure.value.retryable
