"""One session's tool set: built once on first use, narrowed per turn, rebuilt after a reset."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from vis_core.tools.registry import HostTool, ToolRegistry

if TYPE_CHECKING:  # both load with the session's first block, not with the host
    from vis_core.sandbox import ToolEntry
    from vis_core.tools.discovery import Guide


@dataclass(frozen=True)
class ToolSet:
    """What a session's tools are built into: the registry and the extensions' guides."""

    registry: ToolRegistry
    guides: list[Guide] = field(default_factory=list)


class SessionTools:
    """The tools a session's model and extensions can call.

    ``build`` makes the full set; it runs on first use and again after :meth:`reset` (an
    extension reload, an MCP server's tools changing, the ``introspection`` setting). The
    extensions whose ``activation`` said no for the coming request are hidden with
    :meth:`narrow`. The sandbox entries (contracts rendered) are made when the sandbox first
    asks for them.
    """

    def __init__(
        self,
        build: Callable[[SessionTools], ToolSet],
        contract: Callable[[HostTool], dict[str, Any] | None] = lambda tool: None,
    ) -> None:
        self._build = build
        self._contract = contract
        self._lock = threading.Lock()  # worker threads look tools up while the loop reloads
        self._built: ToolSet | None = None
        self._resets = 0  # a set built across a reset is not kept: it may be the old one
        self._entries: list[tuple[str, ToolEntry]] | None = None
        self._hidden: frozenset[str] = frozenset()
        self._narrowed: dict[frozenset[str], ToolRegistry] = {}

    def reset(self) -> None:
        """Build the tools again on next use."""
        with self._lock:
            self._built, self._entries = None, None
            self._narrowed.clear()
            self._resets += 1

    @property
    def version(self) -> int:
        """What changes with every :meth:`reset`."""
        return self._resets

    def narrow(self, inactive: frozenset[str]) -> None:
        """The tools of the coming request: those of the extensions ``inactive`` (owner
        names) hidden."""
        self._hidden = inactive

    def _tool_set(self) -> ToolSet:
        with self._lock:
            built, resets = self._built, self._resets
        if built is None:
            built = self._build(self)  # outside the lock: building may look tools up
            with self._lock:
                if self._resets != resets:  # reset meanwhile: this caller's, not kept
                    return built
                if self._built is None:
                    self._built = built
                built = self._built
        return built

    def full(self) -> ToolRegistry:
        """Every tool, the inactive extensions' too."""
        return self._tool_set().registry

    def registry(self) -> ToolRegistry:
        """The tools of the active extensions (and Vis's, and MCP's)."""
        full, hidden = self.full(), self._hidden
        if not hidden:
            return full
        with self._lock:
            narrowed = self._narrowed.get(hidden)
        if narrowed is None:
            narrowed = full.without_owners(hidden)
            with self._lock:
                if self._built is not None and self._built.registry is full:
                    self._narrowed[hidden] = narrowed
        return narrowed

    def guides(self) -> list[Guide]:
        return self._tool_set().guides

    def sandbox_entries(self) -> list[ToolEntry]:
        """The proxies the sandbox defines: every name (and alias) of an active tool."""
        from vis_core.sandbox import ToolEntry

        entries = self._entries
        if entries is None:
            built = self.full()
            entries = [
                (
                    tool.owner,
                    ToolEntry(name, tool.description, self._contract(tool), tool.is_hidden),
                )
                for tool in built
                for name in (tool.name, *tool.aliases)
                if built.get(name) is tool
            ]
            with self._lock:
                if self._built is not None and self._built.registry is built:
                    self._entries = entries
        hidden = self._hidden
        return [entry for owner, entry in entries if owner not in hidden]
