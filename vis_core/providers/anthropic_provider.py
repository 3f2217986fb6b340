"""The Anthropic provider: Messages API streaming with tool use and prompt caching."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

import anthropic

from vis_core.events import Usage
from vis_core.providers.base import (
    Message,
    ModelRequest,
    ResponseDone,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolCallReady,
    UsageUpdate,
)
from vis_core.providers.common import ANTHROPIC_KEY_ENV, parse_tool_arguments
from vis_core.providers.sdk_provider import SdkProvider

_EPHEMERAL = {"type": "ephemeral"}


def _blocks(message: Message) -> list[dict[str, Any]]:
    if message.role == "tool":
        block: dict[str, Any] = {"type": "tool_result", "tool_use_id": message.tool_call_id}
        if message.text:
            block["content"] = message.text
        if message.is_error:
            block["is_error"] = True
        return [block]
    blocks: list[dict[str, Any]] = []
    if message.text:
        blocks.append({"type": "text", "text": message.text})
    for call in message.tool_calls:
        blocks.append(
            {"type": "tool_use", "id": call.id, "name": call.name, "input": call.arguments}
        )
    return blocks


def to_anthropic_messages(messages: tuple[Message, ...] | list[Message]) -> list[dict[str, Any]]:
    """Neutral messages → Anthropic ``messages``: tool results become user ``tool_result``
    blocks, consecutive same-role messages merge, and a user turn lists its results first."""
    wire: list[dict[str, Any]] = []
    for message in messages:
        role = "assistant" if message.role == "assistant" else "user"
        blocks = _blocks(message)
        if not blocks:
            continue
        if wire and wire[-1]["role"] == role:
            wire[-1]["content"].extend(blocks)
        else:
            wire.append({"role": role, "content": blocks})
    for entry in wire:
        if entry["role"] == "user":
            entry["content"].sort(key=lambda b: b["type"] != "tool_result")
    return wire


def build_anthropic_params(request: ModelRequest) -> dict[str, Any]:
    """The ``messages.create`` keyword arguments for ``request`` (without ``stream``)."""
    messages = to_anthropic_messages(request.messages)
    if messages:  # cache the conversation so far: the next request reads it back
        last = messages[-1]["content"][-1]
        messages[-1]["content"][-1] = {**last, "cache_control": _EPHEMERAL}
    params: dict[str, Any] = {
        "model": request.model,
        "max_tokens": request.max_tokens,
        "messages": messages,
    }
    if request.system:
        params["system"] = [{"type": "text", "text": request.system, "cache_control": _EPHEMERAL}]
    if request.tools:
        params["tools"] = [
            {"name": t.name, "description": t.description, "input_schema": t.parameters}
            for t in request.tools
        ]
    return params


def _usage(raw: Any) -> dict[str, int]:
    """The token counts an Anthropic usage object reports (absent ones left out)."""
    found: dict[str, int] = {}
    for wire_name, ours in (
        ("input_tokens", "input"),
        ("output_tokens", "output"),
        ("cache_read_input_tokens", "cache_read"),
        ("cache_creation_input_tokens", "cache_write"),
    ):
        value = getattr(raw, wire_name, None)
        if isinstance(value, int):
            found[ours] = value
    return found


class AnthropicProvider(SdkProvider):
    """Streams Claude models through the official ``anthropic`` SDK (no SDK retries)."""

    def __init__(
        self,
        *,
        api_key: str,
        name: str = "anthropic",
        base_url: str | None = None,
        key_env: str = ANTHROPIC_KEY_ENV,
        config_file: Path | str | None = None,
        model_overrides: Mapping[str, Mapping[str, Any]] | None = None,
        timeout: float = 600.0,
    ) -> None:
        super().__init__(
            name=name, key_env=key_env, config_file=config_file, model_overrides=model_overrides
        )
        self.client = anthropic.AsyncAnthropic(
            api_key=api_key, base_url=base_url, max_retries=0, timeout=timeout
        )

    async def _events(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        usage: dict[str, int] = {}
        stop_reason = "end_turn"
        tools: dict[int, tuple[str, str, list[str]]] = {}  # index → (id, name, json pieces)
        stream = await self.client.messages.create(**build_anthropic_params(request), stream=True)
        async with stream:
            async for event in stream:
                kind = event.type
                if kind == "message_start":
                    usage.update(_usage(event.message.usage))
                elif kind == "content_block_start":
                    block = event.content_block
                    if block.type == "tool_use":
                        tools[event.index] = (block.id, block.name, [])
                elif kind == "content_block_delta":
                    delta = event.delta
                    if delta.type == "text_delta" and delta.text:
                        yield TextDelta(delta.text)
                    elif delta.type == "input_json_delta" and event.index in tools:
                        tools[event.index][2].append(delta.partial_json)
                elif kind == "content_block_stop" and event.index in tools:
                    call_id, name, pieces = tools.pop(event.index)
                    arguments = parse_tool_arguments("".join(pieces), name, self.name)
                    yield ToolCallReady(ToolCall(call_id, name, arguments))
                elif kind == "message_delta":
                    usage.update(_usage(event.usage))
                    if event.delta.stop_reason:
                        stop_reason = event.delta.stop_reason
        yield UsageUpdate(Usage(**usage))
        yield ResponseDone(stop_reason)
