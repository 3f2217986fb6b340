"""The Anthropic provider: Messages API streaming with tool use, thinking and prompt caching."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncGenerator, Mapping
from typing import Any

from vis_core.model.conversation import (
    ImagePart,
    Message,
    ResponseDone,
    StopReason,
    TextDelta,
    ThinkingDelta,
    ThinkingPart,
    ToolCallReady,
    ToolCallStarted,
    UsageUpdate,
)
from vis_core.model.usage import Usage
from vis_core.providers.base import ModelRequest, StreamEvent
from vis_core.providers.common import (
    ANTHROPIC_KEY_ENV,
    OPENAI_MARK,
    estimated_usage,
    read_tool_call,
    tool_choice_of,
)
from vis_core.providers.errors import UnfinishedResponse
from vis_core.providers.sdk_provider import (
    READ_FAULTS,
    GuardedDecoder,
    SdkProvider,
)

_EPHEMERAL = {"type": "ephemeral"}


_THINKING_TYPES = ("thinking", "redacted_thinking")
# ``reasoning_effort`` on a Claude model: the extended-thinking budget it stands for.
EFFORT_BUDGETS = {"none": 0, "minimal": 0, "low": 2048, "medium": 8192, "high": 24576}
EFFORT_BUDGETS["xhigh"] = 32768
# Stop reasons that mean the answer was cut before the model finished it.
_CUT_STOPS = {"max_tokens": StopReason.MAX_TOKENS, "model_context_window_exceeded": "max_tokens"}


def _image(image: ImagePart) -> dict[str, Any]:
    return {
        "type": "image",
        "source": {"type": "base64", "media_type": image.media_type, "data": image.data},
    }


def _thinking(part: ThinkingPart) -> dict[str, Any] | None:
    """A thinking block as the API takes it back; one without a signature cannot be sent."""
    if part.redacted:
        return {"type": "redacted_thinking", "data": part.redacted}
    if part.signature and not part.signature.startswith(OPENAI_MARK):
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


def tool_choice_param(choice: str, request: ModelRequest) -> dict[str, Any]:
    """The Messages API ``tool_choice`` for the ``tool_choice`` model option, as
    :func:`~vis_core.providers.common.tool_choice_of` settles it."""
    choice = tool_choice_of(choice, request)
    if choice in ("auto", "none"):
        return {"type": choice}
    return {"type": "any"} if choice == "required" else {"type": "tool", "name": choice}


def build_anthropic_params(
    request: ModelRequest,
    *,
    thinking_budget: int = 0,
    options: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The ``messages.create`` keyword arguments for ``request`` (without ``stream``).

    ``thinking_budget`` > 0 turns on extended thinking (``max_tokens`` grows to stay above
    the budget, as the API requires) and sends earlier thinking blocks back. The tool
    schemas, the system prompt and the conversation so far are marked for prompt caching.
    ``options``: ``tool_choice`` (forced choices cannot go with thinking; the API refuses).
    """
    options = options or {}
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
        tools = [
            {"name": t.name, "description": t.description, "input_schema": t.parameters}
            for t in request.tools
        ]
        tools[-1] = {**tools[-1], "cache_control": _EPHEMERAL}  # caches every schema
        params["tools"] = tools
        if options.get("tool_choice"):
            choice = tool_choice_param(options["tool_choice"], request)
            if thinking_budget <= 0 or choice["type"] in ("auto", "none"):
                params["tool_choice"] = choice
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


# a message_delta that gives the stop reason: the answer is whole
_STOPPED = re.compile(r'"stop_reason"\s*:\s*"')


class _StopSpy(GuardedDecoder):
    """Wraps the SDK's SSE decoder to see the stop reason arrive (``message_delta``): a
    connection that breaks after it loses only ``message_stop``, and the answer is kept."""

    def seen(self, sse: Any) -> None:
        self.finished = self.finished or (
            sse.event == "message_delta" and bool(_STOPPED.search(sse.data))
        )


class AnthropicProvider(SdkProvider):
    """Streams Claude models through the official ``anthropic`` SDK (no SDK retries).

    Tool calls are handed out when the message ends, so a call cut by ``max_tokens`` is
    known as cut; a stream that closes without ``message_stop`` is an error, unless it
    closed after the stop reason (the answer is whole). A block's start may hold its text,
    thinking (signed) or input whole, as a compatible server may send them: they count as
    the SDK counts them (a call's input streamed in deltas replaces the one it started with).
    """

    decoder = _StopSpy

    default_name = "anthropic"
    default_key_env = ANTHROPIC_KEY_ENV
    default_url = "https://api.anthropic.com"

    def _sdk(self) -> tuple[Any, type[Any], type[BaseException]]:
        import anthropic

        return anthropic, anthropic.AsyncAnthropic, anthropic.AnthropicError

    def thinking_budget(self, model: str, options: Mapping[str, str]) -> int:
        """``thinking_budget`` when set, else the budget ``reasoning_effort`` stands for."""
        budget = self.model_info(model).thinking_budget
        effort = options.get("reasoning_effort")
        if not budget and effort:
            budget = EFFORT_BUDGETS.get(effort, 0)
        return budget

    async def _events(self, request: ModelRequest) -> AsyncGenerator[StreamEvent, None]:
        usage: dict[str, int] = {}
        stop_reason: str = StopReason.END_TURN
        finished = False
        out_chars = 0
        tools: dict[int, tuple[str, str, list[str]]] = {}  # index → (id, name, json pieces)
        given: dict[int, str] = {}  # index → the input a tool_use block started with, as JSON
        ready: list[tuple[str, str, str]] = []  # (id, name, arguments) of finished blocks
        options = self.model_options(request.model)
        budget = self.thinking_budget(request.model, options)
        params = build_anthropic_params(request, thinking_budget=budget, options=options)
        stream = await self.client.messages.create(**params, stream=True)
        self.meter(stream, request)
        decoder = getattr(stream, "_decoder", None)
        try:
            async with stream:
                await self.check_stream(stream)
                async for event in stream:
                    kind = event.type
                    if kind == "message_start":
                        usage.update(_usage(event.message.usage))
                    elif kind == "content_block_start":
                        block = event.content_block
                        if block.type == "tool_use":
                            tools[event.index] = (block.id, block.name, [])
                            if block.input:  # a compatible server's whole input, no deltas
                                given[event.index] = json.dumps(block.input, ensure_ascii=False)
                            yield ToolCallStarted(block.name)
                        elif block.type == "redacted_thinking":
                            yield ThinkingDelta(redacted=block.data)
                        elif block.type == "text" and block.text:
                            out_chars += len(block.text)
                            yield TextDelta(block.text)
                        elif block.type == "thinking" and block.thinking:
                            yield ThinkingDelta(block.thinking)
                            if block.signature:
                                yield ThinkingDelta(signature=block.signature)
                    elif kind == "content_block_delta":
                        delta = event.delta
                        if delta.type == "text_delta" and delta.text:
                            out_chars += len(delta.text)
                            yield TextDelta(delta.text)
                        elif delta.type == "thinking_delta" and delta.thinking:
                            yield ThinkingDelta(delta.thinking)
                        elif delta.type == "signature_delta" and delta.signature:
                            yield ThinkingDelta(signature=delta.signature)
                        elif delta.type == "input_json_delta" and event.index in tools:
                            tools[event.index][2].append(delta.partial_json)
                            out_chars += len(delta.partial_json)
                    elif kind == "content_block_stop" and event.index in tools:
                        call_id, name, pieces = tools.pop(event.index)
                        arguments = "".join(pieces) or given.get(event.index, "")
                        ready.append((call_id, name, arguments))
                    elif kind == "message_delta":
                        usage.update(_usage(event.usage))
                        if event.delta.stop_reason:
                            stop_reason = event.delta.stop_reason
                    elif kind == "message_stop":
                        finished = True
        except READ_FAULTS as exc:
            raise self.unreadable(exc, stream) from exc
        finally:
            if isinstance(decoder, GuardedDecoder):
                await decoder.aclose()
        # a connection that broke after the stop reason lost only message_stop: the answer is
        # whole (as an OpenAI-compatible one after its finish_reason)
        finished = finished or (isinstance(decoder, _StopSpy) and decoder.finished)
        if not finished:
            got = f"after {out_chars} characters" if out_chars else "before any answer"
            raise UnfinishedResponse(
                f"{self.name}: the response ended unfinished ({got}): the server at {self.url} "
                "closed the stream without message_stop; try again, and if it keeps "
                "happening check the service's status or the proxy in between",
                usage=Usage(**usage) if usage else estimated_usage(request, out_chars),
            )
        stop_reason = _CUT_STOPS.get(stop_reason, stop_reason)
        cut = stop_reason == StopReason.MAX_TOKENS
        for call_id, name, arguments in ready:
            yield ToolCallReady(read_tool_call(call_id, name, arguments, cut=cut))
        for call_id, name, pieces in tools.values():  # blocks the cut left open
            yield ToolCallReady(read_tool_call(call_id, name, "".join(pieces), cut=True))
        yield UsageUpdate(Usage(**usage))
        yield ResponseDone(stop_reason)
