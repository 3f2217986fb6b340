"""The worker protocol's names that need no msgspec (call kinds, a closed channel)."""

from __future__ import annotations

from enum import StrEnum


class TargetKind(StrEnum):
    """What a :class:`Call` runs: a tool, an op hook or a slash command of an extension, a
    named SDK service, an exported object, a declaration's callback (:class:`CallbackKind`,
    the call's name), or the worker's own setup (loading the session's extensions; in the
    load-only mode, one entry file at a time)."""

    TOOL = "tool"
    DRAWN_TOOL = "drawn_tool"  # a tool, then its render of success: (value, drawn, problem)
    STARTED_TOOL = "started_tool"  # as DRAWN_TOOL, its render of the start sent ahead (Early)
    HOOK = "hook"
    COMMAND = "command"
    CALLBACK = "callback"
    SDK = "sdk"
    OBJECT = "object"
    LOAD = "load"


class CallbackKind(StrEnum):
    """Which callback of an extension's declaration a ``CALLBACK`` call runs; its first
    argument names the setting (``ON_CHANGE``) or the tool (``RENDER``), else is empty."""

    PROMPT = "prompt"
    ACTIVATION = "activation"
    CTX = "ctx"
    ON_CHANGE = "on_change"
    RENDER = "render"
    PROVIDER = "provider"  # a vis.Provider's stream: (request, sink), the key names it
    NETWORK_FILTER = "network_filter"  # a vis.NetworkFilter: (phase, request or response)


class ChannelClosed(RuntimeError):
    """The other side is gone; the call will not be answered."""
