"""The OpenAI provider: Chat Completions streaming, also for any OpenAI-compatible base URL."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

import openai

from vis_core.model.usage import Usage
from vis_core.providers.base import (
    ImagePart,
    Message,
    ModelRequest,
    ResponseDone,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ToolCall,
    ToolCallReady,
    UsageUpdate,
)
from vis_core.providers.common import (
    NO_KEY,
    OPENAI_KEY_ENV,
    estimate_tokens,
    parse_tool_arguments,
    request_chars,
)
from vis_core.providers.sdk_provider import SdkProvider

_STOP_REASONS = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
    "content_filter": "refusal",
}


# Reasoning text that OpenAI-compatible servers stream beside ``content`` (DeepSeek, vLLM,
# llama.cpp: ``reasoning_content``; OpenRouter, Ollama: ``reasoning``).
_REASONING_FIELDS = ("reasoning_content", "reasoning")


def image_url_part(image: ImagePart) -> dict[str, Any]:
    url = f"data:{image.media_type};base64,{image.data}"
    return {"type": "image_url", "image_url": {"url": url}}


def shown_images_message(messages: list[Message]) -> dict[str, Any]:
    """The user message that carries the images of tool results (a tool message holds text)."""
    content: list[dict[str, Any]] = []
    for message in messages:
        content.append(
            {"type": "text", "text": f"Images shown by tool call {message.tool_call_id}:"}
        )
        content.extend(image_url_part(image) for image in message.images)
    return {"role": "user", "content": content}


def to_openai_messages(messages: tuple[Message, ...] | list[Message]) -> list[dict[str, Any]]:
    """Neutral messages → Chat Completions messages; the images of a run of tool results follow
    it as one user message, since every tool call must be answered before anything else."""
    wire: list[dict[str, Any]] = []
    with_images: list[Message] = []
    for message in messages:
        if message.role != "tool" and with_images:
            wire.append(shown_images_message(with_images))
            with_images = []
        wire.append(to_openai_message(message))
        if message.role == "tool" and message.images:
            with_images.append(message)
    if with_images:
        wire.append(shown_images_message(with_images))
    return wire


def to_openai_message(message: Message) -> dict[str, Any]:
    if message.role == "tool":
        text = f"Error: {message.text}" if message.is_error else message.text
        return {"role": "tool", "tool_call_id": message.tool_call_id, "content": text}
    if message.role == "assistant":
        wire: dict[str, Any] = {"role": "assistant", "content": message.text or None}
        if message.tool_calls:
            wire["tool_calls"] = [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {
                        "name": call.name,
                        "arguments": json.dumps(call.arguments, ensure_ascii=False),
                    },
                }
                for call in message.tool_calls
            ]
        return wire
    if message.images:
        parts: list[dict[str, Any]] = [{"type": "text", "text": message.text}]
        parts.extend(image_url_part(image) for image in message.images)
        return {"role": "user", "content": parts}
    return {"role": "user", "content": message.text}


def build_openai_params(request: ModelRequest, *, official: bool) -> dict[str, Any]:
    """The ``chat.completions.create`` keyword arguments for ``request``.

    ``official`` (api.openai.com) sends ``max_completion_tokens``, which reasoning models
    require; other servers get the widely supported ``max_tokens``.
    """
    messages: list[dict[str, Any]] = []
    if request.system:
        messages.append({"role": "system", "content": request.system})
    messages.extend(to_openai_messages(request.messages))
    params: dict[str, Any] = {
        "model": request.model,
        "messages": messages,
        "stream": True,
        "stream_options": {"include_usage": True},
        ("max_completion_tokens" if official else "max_tokens"): request.max_tokens,
    }
    if request.tools:
        params["tools"] = [
            {
                "type": "function",
                "function": {
                    "name": t.name,
                    "description": t.description,
                    "parameters": t.parameters,
                },
            }
            for t in request.tools
        ]
    return params


def _usage(raw: Any) -> Usage:
    prompt = getattr(raw, "prompt_tokens", 0) or 0
    completion = getattr(raw, "completion_tokens", 0) or 0
    details = getattr(raw, "prompt_tokens_details", None)
    cached = (getattr(details, "cached_tokens", 0) or 0) if details is not None else 0
    return Usage(input=max(prompt - cached, 0), output=completion, cache_read=cached)


class OpenAIProvider(SdkProvider):
    """Streams Chat Completions through the official ``openai`` SDK (no SDK retries).

    Usage.input is the uncached part of ``prompt_tokens``; ``cache_read`` is
    ``prompt_tokens_details.cached_tokens``. A server that reports no usage gets an estimate.
    """

    def __init__(
        self,
        *,
        api_key: str | None,
        name: str = "openai",
        base_url: str | None = None,
        key_env: str = OPENAI_KEY_ENV,
        config_file: Path | str | None = None,
        model_overrides: Mapping[str, Mapping[str, Any]] | None = None,
        timeout: float = 600.0,
    ) -> None:
        super().__init__(
            name=name, key_env=key_env, config_file=config_file, model_overrides=model_overrides
        )
        self.client = openai.AsyncOpenAI(
            api_key=api_key or NO_KEY, base_url=base_url, max_retries=0, timeout=timeout
        )
        self.official = base_url is None or "api.openai.com" in base_url

    async def _events(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        usage: Usage | None = None
        finish: str | None = None
        text_chars = 0
        calls: dict[int, dict[str, Any]] = {}  # index → {"id", "name", "arguments": [pieces]}
        params = build_openai_params(request, official=self.official)
        stream = await self.client.chat.completions.create(**params)
        async with stream:
            async for chunk in stream:
                if chunk.usage is not None:
                    usage = _usage(chunk.usage)
                for choice in chunk.choices or ():
                    delta = choice.delta
                    for name in _REASONING_FIELDS if delta is not None else ():
                        reasoning = getattr(delta, name, None)
                        if isinstance(reasoning, str) and reasoning:
                            yield ThinkingDelta(reasoning)
                            break
                    if delta is not None and delta.content:
                        text_chars += len(delta.content)
                        yield TextDelta(delta.content)
                    for part in (delta.tool_calls if delta is not None else None) or ():
                        call = calls.setdefault(part.index, {"id": "", "name": "", "arguments": []})
                        if part.id:
                            call["id"] = part.id
                        if part.function is not None:
                            if part.function.name and not call["name"]:
                                call["name"] = part.function.name
                            if part.function.arguments:
                                call["arguments"].append(part.function.arguments)
                    if choice.finish_reason:
                        finish = choice.finish_reason
        out_chars = text_chars
        for index in sorted(calls):
            call = calls[index]
            raw_arguments = "".join(call["arguments"])
            out_chars += len(call["name"]) + len(raw_arguments)
            arguments = parse_tool_arguments(raw_arguments, call["name"], self.name)
            call_id = call["id"] or f"call_{uuid.uuid4().hex[:24]}"
            yield ToolCallReady(ToolCall(call_id, call["name"], arguments))
        if usage is None:
            usage = Usage(
                input=estimate_tokens(request_chars(request)), output=estimate_tokens(out_chars)
            )
        yield UsageUpdate(usage)
        stop = _STOP_REASONS.get(finish or "stop", finish or "end_turn")
        if calls and stop == "end_turn":
            stop = "tool_use"  # some compatible servers say "stop" after a tool call
        yield ResponseDone(stop)
