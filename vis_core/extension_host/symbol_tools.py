"""An extension's declared symbols as the host's tools, and a tool's portable contract."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from vis_core.contracts.build import callable_spec
from vis_core.extension.symbols import Symbol
from vis_core.model.activity import SymbolTag
from vis_core.tools.registry import HostTool


def symbol_host_tools(symbol: Symbol, *, owner: str, prefix: str | None = None) -> list[HostTool]:
    """The ``HostTool`` of every callable of ``symbol`` (``prefix.`` prepended when given)."""
    lead = f"{prefix}." if prefix else ""
    return [
        HostTool(
            name=f"{lead}{entry.path}",
            fn=entry.fn,
            tag=entry.tag,
            activity=entry.activity,
            owner=owner,
            is_hidden=entry.is_hidden,
        )
        for entry in symbol.entries
    ]


def tool_contract(tool: HostTool | Callable[..., Any]) -> dict[str, Any]:
    """The portable ``.contract`` dict the sandbox attaches to a tool proxy (fresh each call).

    Give the ``HostTool`` to get its registered dotted name and tag; a bare function is
    described under its own name as an ``observation``.
    """
    if isinstance(tool, HostTool):
        if tool.spec is not None:  # described by the worker that loaded the extension
            spec = dataclasses.replace(tool.spec, name=tool.name, tag=tool.tag.value)
            return spec.to_contract()
        return callable_spec(tool.fn, name=tool.name, tag=tool.tag).to_contract()
    return callable_spec(tool, tag=SymbolTag.OBSERVATION).to_contract()
