"""Host tools by name: what the sandbox exposes as awaitable functions, and who owns them."""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from vis_core.model.activity import Activity, SymbolTag

if TYPE_CHECKING:
    from vis_core.contracts.specs import ToolSpec


@dataclass(frozen=True)
class HostTool:
    """One callable the model can reach: ``name`` may be dotted (``git.status``)."""

    name: str
    fn: Callable[..., Any]
    tag: SymbolTag = SymbolTag.OBSERVATION
    activity: Activity | None = None
    owner: str = "vis"
    is_hidden: bool = False
    #: second names of the same tool (``visual.check`` for the bare ``check`` of alias
    #: ``visual``); ``get`` resolves them after every bare name, discovery never lists them
    aliases: tuple[str, ...] = ()
    #: the contract of an extension's tool, computed in the worker that loaded it: the host
    #: holds no function of an extension (``fn`` is then a marker that refuses to run)
    spec: ToolSpec | None = None

    def __post_init__(self) -> None:
        # a tool made inside a function (the built-ins close over their context) is named as
        # the model calls it in Python's own errors: "shell() got an unexpected keyword
        # argument", not "builtin_tools.<locals>.shell() …"
        if "<locals>" in getattr(self.fn, "__qualname__", ""):
            with contextlib.suppress(AttributeError, TypeError):
                self.fn.__qualname__ = self.name

    @property
    def description(self) -> str:
        if self.spec is not None:
            return self.spec.description
        return inspect.getdoc(self.fn) or ""


class ToolRegistry:
    """An ordered name → :class:`HostTool` map (manifest order is registration order)."""

    def __init__(self, tools: list[HostTool] | None = None) -> None:
        self._tools: dict[str, HostTool] = {}
        self._aliases: dict[str, HostTool] = {}
        for tool in tools or ():
            self.add(tool)

    def add(self, tool: HostTool) -> None:
        if tool.name in self._tools:
            owner = self._tools[tool.name].owner
            raise ValueError(f"tool {tool.name!r} is already registered by {owner!r}")
        self._tools[tool.name] = tool
        for alias in tool.aliases:
            self._aliases.setdefault(alias, tool)

    def without_owners(self, owners: frozenset[str]) -> ToolRegistry:
        """The same tools minus those of ``owners`` (extensions inactive for a turn)."""
        return ToolRegistry([t for t in self._tools.values() if t.owner not in owners])

    def get(self, name: str) -> HostTool | None:
        """The tool with the bare name ``name``, else the one with that second (alias) name."""
        tool = self._tools.get(name)
        return tool if tool is not None else self._aliases.get(name)

    def __contains__(self, name: object) -> bool:
        return name in self._tools or name in self._aliases

    def alias_names(self) -> list[str]:
        """Every second name that does not shadow a bare one, in registration order."""
        return [n for n in self._aliases if n not in self._tools]

    def __iter__(self) -> Iterator[HostTool]:
        return iter(list(self._tools.values()))

    def names(self, *, include_hidden: bool = True) -> list[str]:
        return [n for n, t in self._tools.items() if include_hidden or not t.is_hidden]

    def similar(self, name: str, n: int = 3) -> list[str]:
        """Public tool names close to ``name``, for "did you mean" hints."""
        import difflib

        public = self.names(include_hidden=False)
        second = [a for a in self.alias_names() if not self._aliases[a].is_hidden]
        return difflib.get_close_matches(name, [*public, *second], n=n)
