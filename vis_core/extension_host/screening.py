"""The worker program's load-only mode (registration), worker side: entry files load one by one
and each is answered with its declaration as data, or why it failed.

The host speaks to it over the session worker's channel (:mod:`worker_channel`): a ``LOAD``
call named :data:`READY` first (the worker imports what every entry file uses), then one named
:data:`SCREEN` per entry file. A declared ``env`` name is resolved by calling the host back
(an ``SDK`` call named :data:`ENV`), for the entry file that declared it only.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from vis_core import codegen_cache
from vis_core.ipc.kinds import TargetKind

if TYPE_CHECKING:
    from vis_core.extension_host.worker_channel import Channel
    from vis_core.ipc.messages import Call

READY = "ready"  # (build globals,): warm up and install the runtime; answers the worker's pid
SCREEN = "screen"  # (candidate, project names): the declaration (a dict) or a ``LoadError``
ENV = "env"  # worker → host: (names,): the values of those that are set


class HostValues(Mapping[str, str]):
    """What declared ``env`` names resolve to: the project's values here, others from the host."""

    live = True  # asked name by name; registration must not copy it

    def __init__(self, channel: Channel, project: Mapping[str, str]) -> None:
        self._channel = channel
        self._values = dict(project)
        self._asked: set[str] = set(project)
        self.project_names = frozenset(project)

    def _ask(self, name: str) -> None:
        if name not in self._asked:
            self._asked.add(name)
            self._values.update(self._channel.call(TargetKind.SDK, ENV, ([name],)))

    def __getitem__(self, name: str) -> str:
        self._ask(name)
        return self._values[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)


class LoadOnly:
    """Serves the host's calls in the load-only mode."""

    def __init__(self) -> None:
        self.channel: Channel | None = None
        self._base = dict(os.environ)  # each entry file starts from the worker's environment
        self._build: dict[str, str | None] = {}  # the host's build globals, given with READY

    def serve(self, call: Call, args: tuple, kwargs: dict) -> Any:
        if call.target is TargetKind.LOAD and call.name == READY:
            self._build = dict(args[0])
            _warm()
            return os.getpid()
        if call.target is TargetKind.LOAD and call.name == SCREEN:
            screened = self._screen(*args)
            codegen_cache.save()  # the classes only workers define, for the next worker's start
            return screened
        raise LookupError(f"the load-only worker does not serve {call.target} {call.name!r}")

    def _screen(self, wire: dict[str, Any], project_names: list[str]) -> Any:
        from vis_core.extension_host.discovery import Candidate
        from vis_core.extension_host.entry import (
            EntryFailed,
            error_from_exception,
            execute_entry,
            forget_module,
        )

        assert self.channel is not None
        candidate = Candidate.from_wire(wire)
        os.environ.clear()
        os.environ.update(self._base)
        project = {name: self._base[name] for name in project_names if name in self._base}
        try:
            values = HostValues(self.channel, project)
            declaration, _module = execute_entry(candidate, values, build=self._build)
        except EntryFailed as failed:
            return failed.error
        except BaseException as exc:  # KeyboardInterrupt and the like are named too
            forget_module(candidate.module_name)
            return error_from_exception(candidate, exc)
        return _declaration(declaration, candidate)


def _declaration(extension: Any, candidate: Any) -> Any:
    """What an entry file declared, as data (:func:`declared.describe`, with the answer of a
    state-only ``ctx`` against empty state), or why its symbols cannot be tools (a
    ``LoadError``)."""
    from vis_core.extension_host.declared import describe
    from vis_core.extension_host.entry import LoadError
    from vis_core.extension_host.state_ctx import answer_when_empty
    from vis_core.extension_host.symbol_tools import symbol_host_tools

    tools = []
    try:
        for symbol in extension.symbols:
            tools.extend(symbol_host_tools(symbol, owner=extension.name))
        return describe(extension, tools, answer_when_empty(extension))
    except Exception as exc:  # a symbol that cannot be a tool (TypeError, ValueError)
        return LoadError(extension.name, candidate.path, None, f"{type(exc).__name__}: {exc}")


def _warm() -> None:
    """Import what every entry file uses and install the runtime, before the first entry file
    loads, so its load time limit counts its own work, not the worker's imports."""
    import vis_core.extension as vis
    from vis_core.extension.runtime import install
    from vis_core.extension_host import entry  # noqa: F401 - imported for its cost
    from vis_core.extension_host.store_runtime import StoreRuntime

    for name in ("Extension", "Symbol", "Setting", "SlashCommand", "OpHook", "Activity"):
        getattr(vis, name)
    install(StoreRuntime())  # vis.state and vis.log of entry files, in the Vis database
