"""Thinking on the wire: Anthropic thinking/signature deltas, OpenAI-compatible reasoning."""

from __future__ import annotations

from typing import Any

import pytest

from vis_core.model.conversation import (
    Message,
    TextDelta,
    ThinkingDelta,
    ThinkingPart,
    ToolCall,
    ToolCallReady,
)
from vis_core.providers.anthropic_provider import AnthropicProvider
from vis_core.providers.base import ModelRequest, StreamEvent
from vis_core.providers.openai_provider import OpenAIProvider, reasoning_mark

from .wire_servers import WireServer, WireToolCall, anthropic_reply, openai_reply

# the provider SDKs are imported in the test process (anthropic ~2 s of CPU): on one worker
pytestmark = pytest.mark.xdist_group("sdk-imports")

THOUGHT = "The user wants the files; listing them first is cheapest."


def request(messages: tuple[Message, ...], max_tokens: int = 8192) -> ModelRequest:
    return ModelRequest(model="claude-test", system="sys", messages=messages, max_tokens=max_tokens)


async def collect(provider: Any, req: ModelRequest) -> list[StreamEvent]:
    try:
        return [e async for e in provider.stream(req)]
    finally:
        await provider.aclose()


def anthropic(server: WireServer, budget: int = 0) -> AnthropicProvider:
    overrides = {"claude-test": {"thinking_budget": budget}} if budget else None
    return AnthropicProvider(
        api_key="k", base_url=server.anthropic_base_url, model_overrides=overrides
    )


async def test_anthropic_streams_thinking_and_signature(wire_server: WireServer) -> None:
    wire_server.reply(
        anthropic_reply(
            "Listing.",
            [WireToolCall("toolu_1", "python_execution", {"code": "ls()"})],
            thinking=THOUGHT,
            signature="sig-123",
            redacted="opaque-bytes",
        )
    )
    events = await collect(anthropic(wire_server, 2048), request((Message("user", "ls"),), 1024))
    deltas = [e for e in events if isinstance(e, ThinkingDelta)]
    assert "".join(d.text for d in deltas) == THOUGHT
    assert [d.signature for d in deltas if d.signature] == ["sig-123"]
    assert [d.redacted for d in deltas if d.redacted] == ["opaque-bytes"]
    assert any(isinstance(e, ToolCallReady) for e in events)
    body = wire_server.bodies[0]
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert body["max_tokens"] > 2048  # the API requires max_tokens above the budget


async def test_anthropic_sends_signed_thinking_back_before_the_tool_use(
    wire_server: WireServer,
) -> None:
    call = ToolCall("toolu_1", "python_execution", {"code": "ls()"})
    history = (
        Message("user", "ls"),
        Message(
            "assistant",
            "Listing.",
            (call,),
            thinking=(
                ThinkingPart(THOUGHT, "sig-123"),
                ThinkingPart(redacted="opaque-bytes"),
                ThinkingPart("unsigned text cannot go back"),
                ThinkingPart("DeepSeek's reasoning neither", reasoning_mark("deep")),
            ),
        ),
        Message("tool", "a.txt", tool_call_id="toolu_1"),
    )
    wire_server.reply(anthropic_reply("Done."), anthropic_reply("Done."))
    await collect(anthropic(wire_server, 2048), request(history))
    await collect(anthropic(wire_server), request(history))
    with_budget, without = wire_server.bodies
    assert [b["type"] for b in with_budget["messages"][1]["content"]] == [
        "thinking",
        "redacted_thinking",
        "text",
        "tool_use",
    ]
    assert with_budget["messages"][1]["content"][0] == {
        "type": "thinking",
        "thinking": THOUGHT,
        "signature": "sig-123",
    }
    assert "thinking" not in without
    assert [b["type"] for b in without["messages"][1]["content"]] == ["text", "tool_use"]


async def test_openai_compatible_reasoning_fields_become_thinking(
    wire_server: WireServer,
) -> None:
    wire_server.reply(
        openai_reply("Four.", reasoning="two plus two", reasoning_field="reasoning_content"),
        openai_reply("Four.", reasoning="two plus two", reasoning_field="reasoning"),
    )
    for _ in range(2):
        provider = OpenAIProvider(api_key="k", base_url=wire_server.openai_base_url)
        events = await collect(provider, request((Message("user", "2+2?"),)))
        assert "".join(e.text for e in events if isinstance(e, ThinkingDelta)) == "two plus two"
    history = (
        Message("user", "2+2?"),
        Message("assistant", "Four.", thinking=(ThinkingPart("two plus two"),)),
        Message("user", "and 3+3?"),
    )
    wire_server.reply(openai_reply("Six."))
    await collect(
        OpenAIProvider(api_key="k", base_url=wire_server.openai_base_url), request(history)
    )
    sent = wire_server.bodies[-1]["messages"]
    assert sent[2] == {"role": "assistant", "content": "Four."}  # reasoning is not sent back


@pytest.mark.parametrize(
    ("content", "thinking", "text"),
    [
        ("<think>\nIt is 2 + 2.\n</think>\n\nFour.", "It is 2 + 2.\n", "Four."),
        ("\n <think>brief</think>Four.", "brief", "Four."),
        ("<think>\n\n</think>\n\nFour.", "", "Four."),  # Qwen3 told not to think
        ("<think>cut off while think", "cut off while think", ""),
        ("<thinking aloud> is a tag", "", "<thinking aloud> is a tag"),
        ("Four. <think>not a lead</think>", "", "Four. <think>not a lead</think>"),
        ("<thi", "", "<thi"),
    ],
)
async def test_a_leading_think_block_in_the_content_is_thinking(
    wire_server: WireServer, content: str, thinking: str, text: str
) -> None:
    """Qwen3 and R1 distills served without reasoning parsing (Ollama, LM Studio, llama.cpp)
    write their reasoning at the start of ``content``; its tags may come in any pieces."""
    for piece in (1, 3, 100):
        wire_server.reply(openai_reply(content, piece=piece))
        provider = OpenAIProvider(api_key="k", base_url=wire_server.openai_base_url)
        events = await collect(provider, request((Message("user", "2+2?"),)))
        got = [e for e in events if isinstance(e, ThinkingDelta | TextDelta)]
        assert "".join(e.text for e in got if isinstance(e, ThinkingDelta)) == thinking, piece
        assert "".join(e.text for e in got if isinstance(e, TextDelta)) == text, piece
        assert all(e.text for e in got), piece  # no empty pieces
