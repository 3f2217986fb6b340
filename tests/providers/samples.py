"""Sample model requests for the provider tests (one simple, one using every role), and
helpers to build providers and read what they stream."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from vis_core.model.conversation import Message, ToolCall, ToolDefinition
from vis_core.providers.base import ModelRequest, StreamEvent

PYTHON_EXECUTION_TOOL = ToolDefinition(
    "python_execution",
    "Run Python in the sandbox.",
    {"type": "object", "properties": {"code": {"type": "string"}}, "required": ["code"]},
)


def simple_request(model: str = "test-model", text: str = "Say hi") -> ModelRequest:
    return ModelRequest(
        model=model,
        system="You are Vis.",
        messages=(Message("user", text),),
        tools=(PYTHON_EXECUTION_TOOL,),
        max_tokens=1000,
    )


def conversation_request(model: str = "test-model") -> ModelRequest:
    """A user request, an assistant reply with two tool calls, both results, a follow-up."""
    calls = (
        ToolCall("call_a", "python_execution", {"code": "print(1)"}),
        ToolCall("call_b", "mcp__docs__search", {"query": "install"}),
    )
    return ModelRequest(
        model=model,
        system="You are Vis.",
        messages=(
            Message("user", "Look around"),
            Message("assistant", "Checking.", tool_calls=calls),
            Message("tool", "1\n", tool_call_id="call_a"),
            Message("tool", "server down", tool_call_id="call_b", is_error=True),
            Message("user", "And then?"),
        ),
        tools=(PYTHON_EXECUTION_TOOL,),
        max_tokens=1000,
    )


@asynccontextmanager
async def providers(cls: Callable[..., Any], **defaults: Any) -> AsyncIterator[Callable[..., Any]]:
    """A factory of ``cls`` providers (``defaults`` under the caller's arguments), each closed
    at the end."""
    made: list[Any] = []

    def make(**kwargs: Any) -> Any:
        made.append(cls(**{**defaults, **kwargs}))
        return made[-1]

    try:
        yield make
    finally:
        for provider in made:
            await provider.aclose()


async def collect(provider: Any, request: ModelRequest | None = None) -> list[StreamEvent]:
    """Everything ``provider`` streams for ``request`` (a simple one by default)."""
    return [e async for e in provider.stream(request or simple_request())]
