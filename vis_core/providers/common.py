"""What every provider shares, without importing an SDK: key names, estimates, parsing."""

from __future__ import annotations

import json
from typing import Any

from vis_core.providers.base import ModelRequest, ProviderError

ANTHROPIC_KEY_ENV = "ANTHROPIC_API_KEY"
OPENAI_KEY_ENV = "OPENAI_API_KEY"
# Local servers (Ollama, llama.cpp, vLLM, LM Studio) ignore the key, but the SDKs need one.
NO_KEY = "no-key-needed"
RETRYABLE_STATUSES = frozenset({408, 429})


def is_retryable_status(status: int | None) -> bool:
    """408, 429 and every 5xx are worth another try."""
    return status is not None and (status in RETRYABLE_STATUSES or status >= 500)


def estimate_tokens(chars: int) -> int:
    """About four characters per token, rounded up."""
    return (chars + 3) // 4


def request_chars(request: ModelRequest) -> int:
    """How many characters a request sends (system, messages, tool calls, tool schemas)."""
    total = len(request.system)
    for message in request.messages:
        total += len(message.text)
        for call in message.tool_calls:
            total += len(call.name) + len(json.dumps(call.arguments, ensure_ascii=False))
    for tool in request.tools:
        total += len(tool.name) + len(tool.description) + len(json.dumps(tool.parameters))
    return total


def parse_tool_arguments(text: str, name: str, provider: str) -> dict[str, Any]:
    """The JSON object the model streamed as ``name``'s arguments."""
    if not text.strip():
        return {}
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise ProviderError(
            f"{provider}: the model's call to {name} had arguments that are not valid JSON "
            f"({exc}); the response was probably cut off"
        ) from exc
    if not isinstance(value, dict):
        raise ProviderError(f"{provider}: the model's call to {name} had non-object arguments")
    return value
