"""The OpenAI provider over the Responses API (OpenAI's reasoning models) against a local
server speaking its SSE format: reasoning items go back with the next request."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace

import pytest

from vis_core.model.conversation import (
    Message,
    ResponseDone,
    TextDelta,
    ThinkingDelta,
    ThinkingPart,
    ToolCall,
    ToolCallReady,
    ToolCallStarted,
    UsageUpdate,
)
from vis_core.model.usage import Usage
from vis_core.providers.base import ModelRequest, ProviderError
from vis_core.providers.openai_provider import OpenAIProvider
from vis_core.providers.openai_responses import (
    build_responses_params,
    reasoning_signature,
    wants_responses,
)
from vis_core.providers.sdk_provider import MalformedStream

from .samples import collect, simple_request
from .samples import providers as providers_of
from .wire_servers import WireReply, WireServer, WireToolCall, openai_responses_reply

# the provider SDKs are imported in the test process (anthropic ~2 s of CPU): on one worker
pytestmark = pytest.mark.xdist_group("sdk-imports")

OPTIONS = {"m": {"api": "responses", "reasoning_effort": "low"}}


@pytest.fixture
async def provider(wire_server: WireServer) -> AsyncIterator[OpenAIProvider]:
    async with providers_of(
        OpenAIProvider, api_key="sk-test", base_url=wire_server.openai_base_url
    ) as make:
        yield make(model_overrides=OPTIONS)


def test_which_models_use_the_responses_api() -> None:
    assert wants_responses("gpt-5", official=True, api=None)
    assert wants_responses("o4-mini", official=True, api=None)
    assert not wants_responses("gpt-5-chat-latest", official=True, api=None)
    assert not wants_responses("gpt-4.1", official=True, api=None)
    assert not wants_responses("gpt-5", official=False, api=None)  # compatible servers
    assert wants_responses("anything", official=False, api="responses")
    assert not wants_responses("gpt-5", official=True, api="chat")


def test_tool_choice_forces_the_first_request_of_a_turn_only() -> None:
    first = simple_request("m")
    later = replace(first, messages=(*first.messages, Message("assistant", "Checking.")))

    def sent(choice: str, request: ModelRequest) -> object:
        return build_responses_params(request, {"tool_choice": choice}).get("tool_choice")

    named = {"type": "function", "name": "python_execution"}
    assert [sent("python_execution", first), sent("python_execution", later)] == [named, "auto"]
    assert [sent("required", first), sent("required", later)] == ["required", "auto"]
    assert [sent("none", later), sent("auto", first)] == ["none", "auto"]
    assert sent("no_such_tool", first) is None  # a name no tool has: none sent


async def test_text_reasoning_and_a_tool_call(
    wire_server: WireServer, provider: OpenAIProvider
) -> None:
    call = WireToolCall("call_1", "python_execution", {"code": "print(1)"})
    wire_server.reply(
        openai_responses_reply("Checking.", [call], reasoning="Think first.", usage=(100, 9, 60))
    )
    events = await collect(provider, simple_request("m"))
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Checking."
    thinking = [e for e in events if isinstance(e, ThinkingDelta)]
    assert "".join(t.text for t in thinking) == "Think first."
    assert thinking[-1].signature == reasoning_signature("rs_1", "enc-wire")
    assert [e.call for e in events if isinstance(e, ToolCallReady)] == [
        ToolCall("call_1", "python_execution", {"code": "print(1)"})
    ]
    started = events.index(ToolCallStarted("python_execution"))  # once the item is announced
    assert started < next(i for i, e in enumerate(events) if isinstance(e, ToolCallReady))
    assert events[-2:] == [
        UsageUpdate(Usage(input=40, output=9, cache_read=60)),
        ResponseDone("tool_use"),
    ]
    body = wire_server.bodies[0]
    assert wire_server.requests[0].path == "/v1/responses"
    assert body["instructions"] == "You are Vis."
    assert body["store"] is False and body["include"] == ["reasoning.encrypted_content"]
    assert body["reasoning"] == {"summary": "auto", "effort": "low"}
    assert body["tools"][0]["name"] == "python_execution"


async def test_reasoning_items_go_back_before_the_call(
    wire_server: WireServer, provider: OpenAIProvider
) -> None:
    wire_server.reply(openai_responses_reply("Done."))
    part = ThinkingPart("Think first.", reasoning_signature("rs_1", "enc-wire"))
    call = ToolCall("call_1", "python_execution", {"code": "print(1)"})
    request = replace(
        simple_request("m"),
        messages=(
            Message("user", "go"),
            Message("assistant", "", (call,), thinking=(part,)),
            Message("tool", "1", tool_call_id="call_1"),
        ),
    )
    await collect(provider, request)
    items = wire_server.bodies[0]["input"]
    assert items[1] == {
        "type": "reasoning",
        "id": "rs_1",
        "summary": [{"type": "summary_text", "text": "Think first."}],
        "encrypted_content": "enc-wire",
    }
    assert items[2]["type"] == "function_call" and items[2]["call_id"] == "call_1"
    assert items[3] == {"type": "function_call_output", "call_id": "call_1", "output": "1"}


async def test_max_output_tokens_is_a_cut(
    wire_server: WireServer, provider: OpenAIProvider
) -> None:
    wire_server.reply(openai_responses_reply("Half an ans", incomplete="max_output_tokens"))
    events = await collect(provider, simple_request("m"))
    assert events[-1] == ResponseDone("max_tokens")


async def test_an_error_body_or_a_page_with_200_is_said_as_what_it_is(
    wire_server: WireServer, provider: OpenAIProvider
) -> None:
    """A proxy's error body or sign-in page answering 200 was 'the response ended unfinished
    (no response.completed event after 0 characters)'."""
    page = "<html><body>Sign in to the proxy</body></html>"
    wire_server.reply(
        WireReply(body={"error": {"message": "model is loading", "code": 503}}),
        WireReply(body=page, raw=True, headers=(("Content-Type", "text/html"),)),
    )
    with pytest.raises(ProviderError) as loading:
        await collect(provider, simple_request("m"))
    with pytest.raises(MalformedStream) as signing_in:
        await collect(provider, simple_request("m"))
    assert str(loading.value).endswith("answered with an error (code 503): model is loading")
    assert loading.value.retryable
    assert "it answered text/html instead of an event stream" in str(signing_in.value)
    assert "Sign in to the proxy" in str(signing_in.value)
