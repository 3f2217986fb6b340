"""A real session against the wire servers: a shown image reaches the next request only; signed
thinking stays in the conversation, also after the session is reopened from the store; a
DeepSeek-like server gets its reasoning back, another server does not."""

from __future__ import annotations

import base64
import textwrap
from pathlib import Path
from typing import Any

import pytest

from vis_core.events import AssistantDelta, AssistantThinking, BlockFinished
from vis_core.host import Host, HostOptions
from vis_core.model.turn import TurnStatus

from .wire_servers import (
    RecordedRequest,
    WireReply,
    WireServer,
    WireToolCall,
    anthropic_reply,
    deepseek_thinking_checks,
    openai_error,
    openai_reply,
    strict_message_checks,
)

# the provider SDKs are imported in the test process (anthropic ~2 s of CPU): on one worker
pytestmark = pytest.mark.xdist_group("sdk-imports")

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 24 + b"wire-image"
PNG_B64 = base64.b64encode(PNG).decode("ascii")
SHOW_CODE = textwrap.dedent(
    f"""
    d = await attach({PNG!r}, "chart.png")
    await attach(b"a,b\\n1,2\\n", "rows.csv")
    shown = await show_attachment("chart.png")
    print("shown", shown["version"])
    """
)
THOUGHT = "A chart says more than numbers."


def configure(vis_home: Path, server: WireServer, kind: str, monkeypatch: Any) -> None:
    base = server.anthropic_base_url if kind == "anthropic" else server.openai_base_url
    (vis_home / "config.toml").write_text(
        f'[providers.wire]\nkind = "{kind}"\nbase_url = "{base}"\napi_key_env = "WIRE_KEY"\n'
        '[models."wire/test-model"]\nthinking_budget = 2048\n',
        encoding="utf-8",
    )
    monkeypatch.setenv("WIRE_KEY", "k")


async def run(
    workspace: Path, request: str, session_id: str | None = None, provider: str = "wire"
) -> tuple[Any, list]:
    host = await Host.open(HostOptions(workspace=workspace, provider=provider, model="test-model"))
    try:
        session = await (host.open_session(session_id) if session_id else host.new_session())
        events: list = []
        session.subscribe(events.append)
        ended = await session.submit(request)
    finally:
        await host.close()
    return ended, events


def anthropic_images(body: dict[str, Any]) -> list[dict[str, Any]]:
    found = []
    for message in body["messages"]:
        for block in message["content"]:
            if block["type"] == "tool_result" and isinstance(block.get("content"), list):
                found += [part for part in block["content"] if part["type"] == "image"]
    return found


def openai_images(body: dict[str, Any]) -> list[str]:
    found = []
    for message in body["messages"]:
        if message["role"] == "user" and isinstance(message["content"], list):
            found += [p["image_url"]["url"] for p in message["content"] if p["type"] == "image_url"]
    return found


async def test_anthropic_gets_the_shown_image_and_the_signed_thinking(
    vis_home: Path, workspace: Path, wire_server: WireServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    configure(vis_home, wire_server, "anthropic", monkeypatch)
    call = WireToolCall("toolu_1", "python_execution", {"code": SHOW_CODE})
    wire_server.reply(
        anthropic_reply("Drawing.", [call], thinking=THOUGHT, signature="sig-a"),
        anthropic_reply("Here is the chart."),
        anthropic_reply("Still there."),
    )
    ended, events = await run(workspace, "chart it")
    assert ended.status is TurnStatus.COMPLETED, ended.error
    block = next(e for e in events if isinstance(e, BlockFinished))
    assert "shown 1" in block.stdout and len(block.images) == 1
    thinking = next(e for e in events if isinstance(e, AssistantThinking))
    assert (thinking.text, thinking.signature) == (THOUGHT, "sig-a")

    second = wire_server.bodies[1]
    assert anthropic_images(second) == [
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG_B64}}
    ]
    result = next(b for b in second["messages"][-1]["content"] if b["type"] == "tool_result")
    assert result["content"][0]["type"] == "text" and "shown 1" in result["content"][0]["text"]
    assistant = second["messages"][1]["content"]
    assert assistant[0] == {"type": "thinking", "thinking": THOUGHT, "signature": "sig-a"}
    assert [b["type"] for b in assistant[1:]] == ["text", "tool_use"]

    # Reopened from the store: the thinking is kept; the image went with the next request only.
    ended, _ = await run(workspace, "again", session_id=ended.session_id)
    assert ended.status is TurnStatus.COMPLETED, ended.error
    third = wire_server.bodies[2]
    assert anthropic_images(third) == []
    assert third["messages"][1]["content"][0]["signature"] == "sig-a"


async def test_openai_gets_the_shown_image_after_the_tool_results(
    vis_home: Path, workspace: Path, wire_server: WireServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    configure(vis_home, wire_server, "openai", monkeypatch)
    call = WireToolCall("call_1", "python_execution", {"code": SHOW_CODE})
    wire_server.reply(
        openai_reply("Drawing.", [call], reasoning=THOUGHT),
        openai_reply("Here is the chart."),
        openai_reply("Still there."),
    )
    ended, events = await run(workspace, "chart it")
    assert ended.status is TurnStatus.COMPLETED, ended.error
    assert [e.text for e in events if isinstance(e, AssistantThinking)] == [THOUGHT]

    messages = wire_server.bodies[1]["messages"]
    roles = [m["role"] for m in messages]
    assert roles == ["system", "user", "assistant", "tool", "user"]
    assert "shown 1" in messages[3]["content"]
    assert openai_images(wire_server.bodies[1]) == [f"data:image/png;base64,{PNG_B64}"]

    ended, _ = await run(workspace, "again", session_id=ended.session_id)
    assert ended.status is TurnStatus.COMPLETED, ended.error
    assert openai_images(wire_server.bodies[2]) == []  # shown for the next request only


async def test_a_deepseek_like_server_gets_its_reasoning_back_and_no_other_server_does(
    vis_home: Path, workspace: Path
) -> None:
    """DeepSeek's thinking mode refuses a request whose tool-calling assistant message lacks
    its ``reasoning_content``; api.openai.com refuses a message that has one."""
    call = WireToolCall("call_1", "python_execution", {"code": "print(2 + 2)"})
    with (
        WireServer(checks=deepseek_thinking_checks) as deep,
        WireServer(checks=strict_message_checks) as strict,
    ):
        (vis_home / "config.toml").write_text(
            f'[providers.deep]\nkind = "openai"\nbase_url = "{deep.openai_base_url}"\n'
            'api_key_env = ""\n'
            f'[providers.strict]\nkind = "openai"\nbase_url = "{strict.openai_base_url}"\n'
            'api_key_env = ""\n',
            encoding="utf-8",
        )
        deep.reply(
            openai_reply(tool_calls=[call], reasoning=THOUGHT),
            openai_reply("Four.", reasoning="Said it."),
            openai_reply("Yes, four."),
        )
        strict.reply(openai_reply("Still four."))
        first, _ = await run(workspace, "2 + 2?", provider="deep")
        assert first.status is TurnStatus.COMPLETED, first.error
        # another server, then the first one again, on the session reopened from the store
        moved, _ = await run(workspace, "sure?", first.session_id, provider="strict")
        assert moved.status is TurnStatus.COMPLETED, moved.error
        back, _ = await run(workspace, "really?", first.session_id, provider="deep")
        assert back.status is TurnStatus.COMPLETED, back.error

    def assistants(body: dict[str, Any]) -> list[dict[str, Any]]:
        return [m for m in body["messages"] if m["role"] == "assistant"]

    [with_call] = assistants(deep.bodies[1])
    assert with_call["reasoning_content"] == THOUGHT and with_call["tool_calls"]
    assert [m.get("reasoning_content") for m in assistants(deep.bodies[2])] == [THOUGHT, None, None]
    assert all(set(m) <= {"role", "content", "tool_calls"} for m in assistants(strict.bodies[0]))


async def test_a_leading_think_block_is_thinking_not_the_reply(
    vis_home: Path, workspace: Path, wire_server: WireServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server that does not parse Qwen3's reasoning out streams it in ``content``: it was
    shown, stored as the reply and sent back with the next request."""
    configure(vis_home, wire_server, "openai", monkeypatch)
    wire_server.reply(
        openai_reply(f"<think>\n{THOUGHT}\n</think>\n\nA bar chart.", piece=4),
        openai_reply("Yes."),
    )
    ended, events = await run(workspace, "which chart?")
    assert ended.status is TurnStatus.COMPLETED, ended.error
    assert ended.content == "A bar chart."
    assert "".join(e.text for e in events if isinstance(e, AssistantDelta)) == "A bar chart."
    assert [e.text for e in events if isinstance(e, AssistantThinking)] == [f"{THOUGHT}\n"]
    ended, _ = await run(workspace, "sure?", session_id=ended.session_id)
    assert ended.status is TurnStatus.COMPLETED, ended.error
    sent = wire_server.bodies[1]["messages"]
    assert {"role": "assistant", "content": "A bar chart."} in sent
    assert not any(THOUGHT in str(m["content"]) for m in sent)


async def test_fields_a_server_refuses_are_left_out_and_the_log_says_so(
    vis_home: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pydantic-based server refuses ``stream_options`` ("Extra inputs are not permitted"),
    Azure's reasoning models ``max_tokens``: both ended every turn with HTTP 400."""

    def picky(request: RecordedRequest) -> WireReply | None:
        if "stream_options" in request.body:
            return openai_error(
                400,
                "1 validation error for ChatCompletionRequest\nstream_options\n"
                "  Extra inputs are not permitted",
                "invalid_request_error",
            )
        if "max_tokens" in request.body:
            return openai_error(
                400,
                "Unsupported parameter: 'max_tokens' is not supported with this model. "
                "Use 'max_completion_tokens' instead.",
                "invalid_request_error",
                "unsupported_parameter",
            )
        return None

    with WireServer(checks=picky) as server:
        configure(vis_home, server, "openai", monkeypatch)
        server.reply(openai_reply("One."), openai_reply("Two."))
        host = await Host.open(HostOptions(workspace=workspace, provider="wire", model="m"))
        try:
            session = await host.new_session()
            ended = [await session.submit("one"), await session.submit("two")]
        finally:
            await host.close()
    assert [(e.status, e.content) for e in ended] == [
        (TurnStatus.COMPLETED, "One."),
        (TurnStatus.COMPLETED, "Two."),
    ], ended
    fields = {"stream_options", "max_tokens", "max_completion_tokens"}
    assert [sorted(fields & set(body)) for body in server.bodies] == [
        ["max_tokens", "stream_options"],
        ["max_tokens"],
        ["max_completion_tokens"],
        ["max_completion_tokens"],  # the session's provider remembers
    ]
    [log] = vis_home.glob("logs/*/vis.log")
    said = log.read_text(encoding="utf-8")
    assert (
        f"{server.openai_base_url} (provider wire) refused stream_options; leaving it out" in said
    )
    assert "refused max_tokens; sending the output limit as max_completion_tokens" in said
