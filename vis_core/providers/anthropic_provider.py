"""The Anthropic provider: Messages API streaming with tool use, thinking and prompt caching."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

import anthropic

from vis_core.model.usage import Usage
from vis_core.providers.base import (
    ImagePart,
    Message,
    ModelRequest,
    ResponseDone,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ThinkingPart,
    ToolCall,
    ToolCallReady,
    UsageUpdate,
)
from vis_core.providers.common import ANTHROPIC_KEY_ENV, parse_tool_arguments
from vis_core.providers.sdk_provider import SdkProvider

_EPHEMERAL = {"type": "ephemeral"}


_THINKING_TYPES = ("thinking", "redacted_thinking")


def _image(image: ImagePart) -> dict[str, Any]:
    return {
        "type": "image",
        "source": {"type": "base64", "media_type": image.media_type, "data": image.data},
    }


def _thinking(part: ThinkingPart) -> dict[str, Any] | None:
    """A thinking block as the API takes it back; one without a signature cannot be sent."""
    if part.redacted:
        return {"type": "redacted_thinking", "data": part.redacted}
    if part.signature:
        return {"type": "thinking", "thinking": part.text, "signature": part.signature}
    return None


def _blocks(message: Message, *, thinking: bool) -> list[dict[str, Any]]:
    if message.role == "tool":
        block: dict[str, Any] = {"type": "tool_result", "tool_use_id": message.tool_call_id}
        if message.images:
            content: list[dict[str, Any]] = []
            if message.text:
                content.append({"type": "text", "text": message.text})
            content.extend(_image(image) for image in message.images)
            block["content"] = content
        elif message.text:
            block["content"] = message.text
        if message.is_error:
            block["is_error"] = True
        return [block]
    blocks: list[dict[str, Any]] = []
    if thinking and message.role == "assistant":
        blocks.extend(b for b in map(_thinking, message.thinking) if b is not None)
    if message.text:
        blocks.append({"type": "text", "text": message.text})
    for call in message.tool_calls:
        blocks.append(
            {"type": "tool_use", "id": call.id, "name": call.name, "input": call.arguments}
        )
    if message.role == "user":
        blocks.extend(_image(image) for image in message.images)
    return blocks


def to_anthropic_messages(
    messages: tuple[Message, ...] | list[Message], *, thinking: bool = False
) -> list[dict[str, Any]]:
    """Neutral messages → Anthropic ``messages``: tool results become user ``tool_result``
    blocks (with any images inside), consecutive same-role messages merge, a user turn lists
    its results first, and with ``thinking`` an assistant turn starts with its signed
    thinking blocks."""
    wire: list[dict[str, Any]] = []
    for message in messages:
        role = "assistant" if message.role == "assistant" else "user"
        blocks = _blocks(message, thinking=thinking)
        if not blocks:
            continue
        if wire and wire[-1]["role"] == role:
            wire[-1]["content"].extend(blocks)
        else:
            wire.append({"role": role, "content": blocks})
    for entry in wire:
        if entry["role"] == "user":
            entry["content"].sort(key=lambda b: b["type"] != "tool_result")
        else:
            entry["content"].sort(key=lambda b: b["type"] not in _THINKING_TYPES)
    return wire


def build_anthropic_params(request: ModelRequest, *, thinking_budget: int = 0) -> dict[str, Any]:
    """The ``messages.create`` keyword arguments for ``request`` (without ``stream``).

    ``thinking_budget`` > 0 turns on extended thinking (``max_tokens`` grows to stay above
    the budget, as the API requires) and sends earlier thinking blocks back.
    """
    messages = to_anthropic_messages(request.messages, thinking=thinking_budget > 0)
    if messages:  # cache the conversation so far: the next request reads it back
        last = messages[-1]["content"][-1]
        messages[-1]["content"][-1] = {**last, "cache_control": _EPHEMERAL}
    params: dict[str, Any] = {
        "model": request.model,
        "max_tokens": request.max_tokens,
        "messages": messages,
    }
    if thinking_budget > 0:
        params["thinking"] = {"type": "enabled", "budget_tokens": thinking_budget}
        if request.max_tokens <= thinking_budget:
            params["max_tokens"] = thinking_budget + request.max_tokens
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
        budget = self.model_info(request.model).thinking_budget
        params = build_anthropic_params(request, thinking_budget=budget)
        stream = await self.client.messages.create(**params, stream=True)
        async with stream:
            async for event in stream:
                kind = event.type
                if kind == "message_start":
                    usage.update(_usage(event.message.usage))
                elif kind == "content_block_start":
                    block = event.content_block
                    if block.type == "tool_use":
                        tools[event.index] = (block.id, block.name, [])
                    elif block.type == "redacted_thinking":
                        yield ThinkingDelta(redacted=block.data)
                elif kind == "content_block_delta":
                    delta = event.delta
                    if delta.type == "text_delta" and delta.text:
                        yield TextDelta(delta.text)
                    elif delta.type == "thinking_delta" and delta.thinking:
                        yield ThinkingDelta(delta.thinking)
                    elif delta.type == "signature_delta" and delta.signature:
                        yield ThinkingDelta(signature=delta.signature)
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
