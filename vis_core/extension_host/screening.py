"""Registration, the worker program's load-only mode: entry files load one by one in it, and
it reports each outcome.

Started as ``vis_core.extension_host.session_worker:load_only``; messages
(:mod:`vis_core.ipc.messages`) are frames on the original stdin/stdout.

Host → worker: ``Load``; ``EnvValues`` answers an ``EnvAsk``.
Worker → host: ``WorkerReady`` once; for each ``Load``, ``EnvAsk`` (declared names to resolve),
then ``Loaded`` (the whole declaration as data, :mod:`declared`) or ``LoadFailed``.

Its environment is the minimal one the host gives it plus the project's values; a declared
``env`` name is resolved by asking the host, for the entry file that declared it only.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from typing import Any

from vis_core.ipc.framing import read_one, write_all
from vis_core.ipc.messages import (
    EnvAsk,
    EnvValues,
    Load,
    Loaded,
    LoadFailed,
    WorkerReady,
    framed,
    to_registration,
)
from vis_core.system.child_process import ProtocolFds

MAX_MESSAGE = 64 << 20  # a declaration is small; this only bounds a corrupt length


class HostValues(Mapping[str, str]):
    """What declared ``env`` names resolve to: the project's values here, others from the host."""

    live = True  # asked name by name; registration must not copy it

    def __init__(self, fd_in: int, fd_out: int, project: Mapping[str, str], names: frozenset[str]):
        self._fd_in, self._fd_out = fd_in, fd_out
        self._values = dict(project)
        self._asked: set[str] = set(project)
        self.project_names = names

    def _ask(self, name: str) -> None:
        if name in self._asked:
            return
        self._asked.add(name)
        write_all(self._fd_out, framed(EnvAsk([name])))
        body = read_one(self._fd_in, MAX_MESSAGE)
        if body is None:
            raise SystemExit(0)
        reply = to_registration(body)
        if isinstance(reply, EnvValues):
            self._values.update(reply.values)

    def __getitem__(self, name: str) -> str:
        self._ask(name)
        return self._values[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)


def _declaration(extension: Any, candidate: Any) -> Loaded | LoadFailed:
    """What an entry file declared, as data (:func:`declared.describe`), or why its symbols
    cannot be tools."""
    from vis_core.extension_host.declared import describe
    from vis_core.extension_host.symbol_tools import symbol_host_tools

    tools = []
    try:
        for symbol in extension.symbols:
            tools.extend(symbol_host_tools(symbol, owner=extension.name))
        return Loaded(describe(extension, tools))
    except Exception as exc:  # a symbol that cannot be a tool (TypeError, ValueError)
        return LoadFailed(
            {
                "extension": extension.name,
                "path": str(candidate.path),
                "line": None,
                "message": f"{type(exc).__name__}: {exc}",
            }
        )


def load(message: Load, fd_in: int, fd_out: int, base: Mapping[str, str]) -> Loaded | LoadFailed:
    from vis_core.extension_host.discovery import Candidate
    from vis_core.extension_host.entry import (
        EntryFailed,
        error_from_exception,
        execute_entry,
        forget_module,
    )

    candidate = Candidate.from_wire(message.candidate)
    os.environ.clear()
    os.environ.update(base)  # each entry file starts from the worker's own environment
    project = {name: base[name] for name in message.project_names if name in base}
    values = HostValues(fd_in, fd_out, project, frozenset(project))
    try:
        declaration, _module = execute_entry(candidate, values)
    except EntryFailed as failed:
        error = failed.error
    except BaseException as exc:  # KeyboardInterrupt and the like are named too
        forget_module(candidate.module_name)
        error = error_from_exception(candidate, exc)
    else:
        return _declaration(declaration, candidate)
    return LoadFailed(
        {
            "extension": error.extension,
            "path": str(error.path),
            "line": error.line,
            "message": error.message,
        }
    )


def _warm() -> None:
    """Import what every entry file uses before saying ready, so an entry file's load time
    limit counts its own work, not the worker's imports."""
    import vis_core.extension as vis
    from vis_core.extension.metadata import build_metadata
    from vis_core.extension_host import entry  # noqa: F401 - imported for its cost

    for name in ("Extension", "Symbol", "Setting", "SlashCommand", "OpHook", "Activity"):
        getattr(vis, name)
    build_metadata()


def serve(fds: ProtocolFds) -> None:
    """Serve ``Load`` requests on ``fds`` until the host closes the pipe."""
    fd_in, fd_out = fds.read, fds.write
    base = dict(os.environ)
    _warm()
    from vis_core.extension.runtime import install
    from vis_core.extension_host.runtime import StoreRuntime

    install(StoreRuntime())  # vis.state and vis.log of entry files, in the Vis database
    write_all(fd_out, framed(WorkerReady(os.getpid())))
    while True:
        body = read_one(fd_in, MAX_MESSAGE)
        if body is None:
            return
        message = to_registration(body)
        if isinstance(message, Load):
            write_all(fd_out, framed(load(message, fd_in, fd_out, base)))
