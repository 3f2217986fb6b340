"""``vis.Provider``: a model provider an extension declares (its models, a streaming function)."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass, fields
from typing import Any

from vis_core.model.conversation import (
    ResponseDone,
    TextDelta,
    ThinkingDelta,
    ToolCall,
    ToolCallReady,
    ToolCallStarted,
    UsageUpdate,
)
from vis_core.model.lines import is_one_line
from vis_core.model.usage import Usage

PROVIDER_NAME = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,63}$")
BUILT_IN_PROVIDERS = ("anthropic", "openai", "scripted")
STREAM_EVENTS = (
    TextDelta,
    ThinkingDelta,
    ToolCallStarted,
    ToolCallReady,
    UsageUpdate,
    ResponseDone,
)
EVENT_NAMES = (
    "vis.TextDelta, vis.ThinkingDelta, vis.ToolCallStarted, vis.ToolCallReady, "
    "vis.UsageUpdate, vis.ResponseDone"
)


@dataclass(frozen=True)
class ProviderModel:
    """One model of a :class:`Provider`: its name, input limit (tokens) and prices in dollars
    per million tokens (input, output, cache reads, cache writes)."""

    name: str
    input_limit: int = 128_000
    input_price: float = 0.0
    output_price: float = 0.0
    cache_read_price: float = 0.0
    cache_write_price: float = 0.0

    def __post_init__(self) -> None:
        name = self.name
        if not isinstance(name, str) or not name.strip() or name != name.strip():
            raise ValueError(f"ProviderModel name {name!r} must be nonblank text")
        if any(c.isspace() or ord(c) < 32 for c in name):
            raise ValueError(f"ProviderModel name {name!r} must not hold spaces")
        for item in fields(self)[1:]:
            value = getattr(self, item.name)
            number = isinstance(value, int | float) and not isinstance(value, bool)
            if not number or value < 0 or not math.isfinite(value):
                raise ValueError(f"ProviderModel {name!r}: {item.name} must be a number >= 0")
        if isinstance(self.input_limit, float) or self.input_limit < 1:
            raise ValueError(f"ProviderModel {name!r}: input_limit must be a whole number >= 1")


@dataclass(frozen=True)
class Provider:
    """``Provider(name, models, stream, description=...)``: the models ``name/<model>`` that
    ``stream(request)`` answers. ``stream`` gets a ``vis.ModelRequest`` and yields (an async
    or plain generator) the events the built-in providers stream: ``vis.TextDelta``,
    ``vis.ThinkingDelta``, ``vis.ToolCallStarted`` (optional: the model began writing a call,
    so what it needs can start), ``vis.ToolCallReady``, ``vis.UsageUpdate``, then
    ``vis.ResponseDone``. It runs in the extension's worker."""

    name: str
    models: tuple[ProviderModel, ...]
    stream: Callable[..., Any]
    _: KW_ONLY
    description: str = ""

    def __post_init__(self) -> None:
        name = self.name
        if not isinstance(name, str) or not PROVIDER_NAME.fullmatch(name):
            raise ValueError(
                f"Provider name {name!r} must be 1-64 lower-case letters, digits, '.', '-' or "
                "'_', starting with a letter or digit (models are chosen as name/model)"
            )
        if name in BUILT_IN_PROVIDERS:
            raise ValueError(f"Provider name {name!r} is Vis's own provider; choose another name")
        given = self.models
        if isinstance(given, str | ProviderModel) or not isinstance(given, list | tuple):
            raise ValueError(f"Provider {name!r}: models must be a list of vis.ProviderModel")
        models = tuple(ProviderModel(m) if isinstance(m, str) else m for m in given)
        if not models:
            raise ValueError(f"Provider {name!r}: declare at least one model")
        seen: set[str] = set()
        for model in models:
            if not isinstance(model, ProviderModel):
                raise ValueError(
                    f"Provider {name!r}: models holds {type(model).__name__}; use "
                    "vis.ProviderModel(name, input_limit=..., input_price=..., ...)"
                )
            if model.name in seen:
                raise ValueError(f"Provider {name!r}: model {model.name!r} is declared twice")
            seen.add(model.name)
        if not callable(self.stream):
            raise ValueError(f"Provider {name!r}: stream must be a function stream(request)")
        if not isinstance(self.description, str) or not is_one_line(self.description.strip()):
            raise ValueError(f"Provider {name!r}: description must be one line of text")
        object.__setattr__(self, "models", models)

    def model(self, name: str) -> ProviderModel | None:
        """The declared model ``name``, or None."""
        return next((m for m in self.models if m.name == name), None)


def checked_event(provider: str, event: object) -> object:
    """``event`` when it is a stream event of the built-in providers' shape; else a
    ``TypeError`` naming the provider, what it yielded and what it may yield."""
    if not isinstance(event, STREAM_EVENTS):
        shown = repr(event)
        shown = shown if len(shown) <= 120 else shown[:117] + "..."
        raise TypeError(
            f"provider {provider!r} yielded {type(event).__name__} {shown}; a provider's "
            f"stream yields {EVENT_NAMES}"
        )
    problem = _problem(event)
    if problem:
        raise TypeError(
            f"provider {provider!r} yielded a malformed {type(event).__name__}: {problem}"
        )
    return event


def _problem(event: object) -> str:
    if isinstance(event, TextDelta):
        return "" if isinstance(event.text, str) else "text must be a str"
    if isinstance(event, ThinkingDelta):
        parts = (event.text, event.signature, event.redacted)
        return "" if all(isinstance(p, str) for p in parts) else "its fields must be str"
    if isinstance(event, ToolCallStarted):
        return "" if isinstance(event.name, str) and event.name else "name must be a tool's name"
    if isinstance(event, ToolCallReady):
        call = event.call
        if not isinstance(call, ToolCall):
            return "call must be a vis.ToolCall(id, name, arguments)"
        if not isinstance(call.id, str) or not call.id or not isinstance(call.name, str):
            return "the call needs a nonblank id and a name"
        return "" if isinstance(call.arguments, dict) else "the call's arguments must be a dict"
    if isinstance(event, UsageUpdate):
        usage = event.usage
        if not isinstance(usage, Usage):
            return "usage must be a vis.Usage"
        counts = (usage.input, usage.output, usage.cache_read, usage.cache_write)
        return "" if all(isinstance(c, int) and c >= 0 for c in counts) else "bad token counts"
    if isinstance(event, ResponseDone):
        return "" if isinstance(event.stop_reason, str) else "stop_reason must be a str"
    return ""
