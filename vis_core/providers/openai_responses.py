"""OpenAI's Responses API for OpenAI's own reasoning models: reasoning items (encrypted, with
their summaries) go back with the next request, as the models need between tool calls."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Any

from vis_core.model.conversation import (
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
from vis_core.providers.base import ModelRequest, ProviderError, StreamEvent
from vis_core.providers.common import OPENAI_MARK, estimated_usage, read_tool_call, tool_choice_of
from vis_core.providers.errors import UnfinishedResponse, context_overflow

# A reasoning item travels in ThinkingPart.signature as this prefix + JSON {id, encrypted}.
REASONING_PREFIX = f"{OPENAI_MARK}reasoning:"
# OpenAI models that reason, and so want their reasoning items back (Responses API).
_REASONING_MODELS = ("gpt-5", "o1", "o3", "o4", "codex")


def wants_responses(model: str, *, official: bool, api: str | None) -> bool:
    """The Responses API when the ``api`` option says so, or by default for OpenAI's own
    reasoning models at api.openai.com; Chat Completions everywhere else."""
    if api:
        return api == "responses"
    name = model.lower().rsplit("/", 1)[-1]
    return official and name.startswith(_REASONING_MODELS) and "chat" not in name


def reasoning_signature(item_id: str, encrypted: str) -> str:
    return REASONING_PREFIX + json.dumps({"id": item_id, "encrypted": encrypted})


def _reasoning_item(part: ThinkingPart) -> dict[str, Any] | None:
    if not part.signature.startswith(REASONING_PREFIX):
        return None
    try:
        data = json.loads(part.signature[len(REASONING_PREFIX) :])
    except ValueError:
        return None
    summary = [{"type": "summary_text", "text": part.text}] if part.text else []
    return {
        "type": "reasoning",
        "id": data.get("id", ""),
        "summary": summary,
        "encrypted_content": data.get("encrypted", ""),
    }


def _image(media_type: str, data: str) -> dict[str, Any]:
    return {"type": "input_image", "image_url": f"data:{media_type};base64,{data}"}


def to_response_input(messages: tuple[Message, ...] | list[Message]) -> list[dict[str, Any]]:
    """Neutral messages → Responses ``input`` items; the images of tool results follow the
    results as one user message."""
    items: list[dict[str, Any]] = []
    shown: list[dict[str, Any]] = []
    for message in messages:
        if message.role != "tool" and shown:
            items.append({"role": "user", "content": shown})
            shown = []
        if message.role == "user":
            content = [{"type": "input_text", "text": message.text}]
            content += [_image(i.media_type, i.data) for i in message.images]
            items.append({"role": "user", "content": content})
        elif message.role == "assistant":
            items.extend(i for i in map(_reasoning_item, message.thinking) if i is not None)
            if message.text:
                content = [{"type": "output_text", "text": message.text}]
                items.append({"role": "assistant", "content": content})
            for call in message.tool_calls:
                items.append(
                    {
                        "type": "function_call",
                        "call_id": call.id,
                        "name": call.name,
                        "arguments": json.dumps(call.arguments, ensure_ascii=False),
                    }
                )
        else:
            text = f"Error: {message.text}" if message.is_error else message.text
            items.append(
                {"type": "function_call_output", "call_id": message.tool_call_id, "output": text}
            )
            if message.images:
                label = f"Images shown by tool call {message.tool_call_id}:"
                shown.append({"type": "input_text", "text": label})
                shown += [_image(i.media_type, i.data) for i in message.images]
    if shown:
        items.append({"role": "user", "content": shown})
    return items


def build_responses_params(
    request: ModelRequest, options: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """The ``responses.create`` keyword arguments: nothing stored at OpenAI (``store``
    off), so the encrypted reasoning is asked for and sent back."""
    options = options or {}
    params: dict[str, Any] = {
        "model": request.model,
        "input": to_response_input(request.messages),
        "stream": True,
        "store": False,
        "include": ["reasoning.encrypted_content"],
        "max_output_tokens": request.max_tokens,
        "reasoning": {"summary": "auto"},
    }
    if request.system:
        params["instructions"] = request.system
    if options.get("reasoning_effort"):
        params["reasoning"]["effort"] = options["reasoning_effort"]
    if request.tools:
        params["tools"] = [
            {
                "type": "function",
                "name": t.name,
                "description": t.description,
                "parameters": t.parameters,
                "strict": False,
            }
            for t in request.tools
        ]
        choice = options.get("tool_choice") or ""
        if choice in ("auto", "none", "required") or choice in {t.name for t in request.tools}:
            choice = tool_choice_of(choice, request)  # a name it does not know: none sent
            named = choice not in ("auto", "none", "required")
            params["tool_choice"] = {"type": "function", "name": choice} if named else choice
    return params


def usage_of(raw: Any, prompt: str = "input_tokens", answer: str = "output_tokens") -> Usage:
    """An OpenAI usage object (Responses' field names, or Chat Completions' ``prompt_tokens``
    and ``completion_tokens``): ``input`` is the uncached part of the prompt, ``cache_read``
    its ``<prompt>_details.cached_tokens``."""
    if raw is None:
        return Usage()
    details = getattr(raw, f"{prompt}_details", None)
    cached = (getattr(details, "cached_tokens", 0) or 0) if details is not None else 0
    total = getattr(raw, prompt, 0) or 0
    return Usage(
        input=max(total - cached, 0), output=getattr(raw, answer, 0) or 0, cache_read=cached
    )


def _failure(provider: str, error: Any) -> ProviderError:
    code = getattr(error, "code", None) or ""
    message = getattr(error, "message", None) or str(error)
    body = {"error": {"code": code, "message": message}}
    overflow = context_overflow(provider, None, body)
    if overflow is not None:
        return overflow
    retryable = code in ("server_error", "rate_limit_exceeded")
    return ProviderError(
        f"{provider} response failed ({code or 'error'}): {message}", retryable=retryable
    )


async def response_events(
    client: Any,
    request: ModelRequest,
    *,
    provider: str,
    options: Mapping[str, str],
    ready: Callable[[Any], Awaitable[None]] | None = None,
) -> AsyncIterator[StreamEvent]:
    """Stream one Responses API request as neutral events; ``ready`` sees the stream first
    (puts the response cap on it, refuses a page sent instead)."""
    stream = await client.responses.create(**build_responses_params(request, options))
    calls: list[tuple[str, str, str]] = []
    usage: Usage | None = None
    stop: str | None = None
    out_chars = 0
    async with stream:
        if ready is not None:
            await ready(stream)
        async for event in stream:
            kind = getattr(event, "type", "")
            if kind == "response.output_text.delta":
                out_chars += len(event.delta)
                yield TextDelta(event.delta)
            elif kind == "response.reasoning_summary_text.delta":
                yield ThinkingDelta(event.delta)
            elif kind == "response.output_item.added":
                item = event.item
                if item.type == "function_call" and item.name:
                    yield ToolCallStarted(item.name)
            elif kind == "response.output_item.done":
                item = event.item
                if item.type == "function_call":
                    calls.append((item.call_id, item.name, item.arguments or ""))
                    out_chars += len(item.arguments or "")
                elif item.type == "reasoning":
                    encrypted = getattr(item, "encrypted_content", None) or ""
                    yield ThinkingDelta(signature=reasoning_signature(item.id, encrypted))
            elif kind == "response.completed":
                usage, stop = usage_of(event.response.usage), StopReason.END_TURN
            elif kind == "response.incomplete":
                usage = usage_of(event.response.usage)
                details = getattr(event.response, "incomplete_details", None)
                reason = getattr(details, "reason", "") or ""
                stop = (
                    StopReason.MAX_TOKENS if reason == "max_output_tokens" else StopReason.REFUSAL
                )
            elif kind == "response.failed":
                raise _failure(provider, getattr(event.response, "error", None))
            elif kind == "error":
                raise _failure(provider, event)
    if stop is None:
        raise UnfinishedResponse(
            f"{provider}: the response ended unfinished (no response.completed event after "
            f"{out_chars} characters); try again, and if it keeps happening check the "
            "service's status or the proxy in between",
            usage=estimated_usage(request, out_chars),
        )
    cut = stop == StopReason.MAX_TOKENS
    for call_id, name, arguments in calls:
        yield ToolCallReady(read_tool_call(call_id, name, arguments, cut=cut))
    yield UsageUpdate(usage or Usage())
    yield ResponseDone(StopReason.TOOL_USE if calls and stop == StopReason.END_TURN else stop)
