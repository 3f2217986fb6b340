"""Host tools by name: what the sandbox exposes as awaitable functions, and who owns them."""

from __future__ import annotations

import difflib
import inspect
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from vis_core.model.activity import Activity, SymbolTag


@dataclass(frozen=True)
class HostTool:
    """One callable the model can reach: ``name`` may be dotted (``git.status``)."""

    name: str
    fn: Callable[..., Any]
    tag: SymbolTag = SymbolTag.OBSERVATION
    activity: Activity | None = None
    owner: str = "vis"
    is_hidden: bool = False

    @property
    def description(self) -> str:
        return inspect.getdoc(self.fn) or ""


class ToolRegistry:
    """An ordered name → :class:`HostTool` map (manifest order is registration order)."""

    def __init__(self, tools: list[HostTool] | None = None) -> None:
        self._tools: dict[str, HostTool] = {}
        for tool in tools or ():
            self.add(tool)

    def add(self, tool: HostTool) -> None:
        if tool.name in self._tools:
            owner = self._tools[tool.name].owner
            raise ValueError(f"tool {tool.name!r} is already registered by {owner!r}")
        self._tools[tool.name] = tool

    def remove_owner(self, owner: str) -> None:
        self._tools = {n: t for n, t in self._tools.items() if t.owner != owner}

    def get(self, name: str) -> HostTool | None:
        return self._tools.get(name)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __iter__(self) -> Iterator[HostTool]:
        return iter(list(self._tools.values()))

    def names(self, *, include_hidden: bool = True) -> list[str]:
        return [n for n, t in self._tools.items() if include_hidden or not t.is_hidden]

    def similar(self, name: str, n: int = 3) -> list[str]:
        """Public tool names close to ``name``, for "did you mean" hints."""
        return difflib.get_close_matches(name, self.names(include_hidden=False), n=n)
