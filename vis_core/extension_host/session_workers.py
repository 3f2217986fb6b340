"""A session's extension workers: one process per distinct declared environment.

An extension's environment is its declared ``env`` plus the project's values, and a worker
process has one ``os.environ``. So the extensions whose declared names resolve to the same
values beyond the project's (most declare none) share one :class:`SessionWorker`, and an
extension with other values gets its own: no extension sees another's declared values. Each
worker starts on the first call that needs it (or :meth:`SessionWorkers.prestart`), stops
with the session, and starts anew after ``/reload``.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from typing import Any

from vis_core.extension.context import CallContext
from vis_core.extension_host.environment import resolve_names
from vis_core.extension_host.loaded import LoadedExtension, LoadedExtensions
from vis_core.extension_host.worker_client import (
    CallbackCall,
    CallbackOutcome,
    DirectHost,
    SessionWorker,
    WorkerPlace,
    WorkerTimes,
)
from vis_core.ipc.kinds import CallbackKind, TargetKind
from vis_core.system.loops import running_loop
from vis_core.tools.registry import HostTool

# the declared values an extension's worker adds to the project's: ((name, value), …) sorted
EnvKey = tuple[tuple[str, str], ...]


def calls_per_request(ext: LoadedExtension) -> bool:
    """Whether ``ext`` has a prompt or activation callback, which every request calls (its
    worker is then needed before the first one)."""
    declaration = ext.declaration
    if declaration is None:
        return False
    return callable(declaration.prompt) or declaration.activation is not None


class SessionWorkers:
    """One session's extension workers, a :class:`SessionWorker` per declared environment;
    each call goes to the worker of its extension."""

    def __init__(
        self,
        extensions: Callable[[], LoadedExtensions],
        place: WorkerPlace,
        values: Mapping[str, str],
    ) -> None:
        self._extensions = extensions
        self._place = place
        self._values = dict(values)  # the project's values: every worker has them
        self.times = WorkerTimes()  # every worker's, changed for all at once
        self._lock = threading.Lock()
        self._workers: dict[EnvKey, SessionWorker] = {}
        # the extensions as loaded when a call last looked its worker up, and the worker of
        # each owner looked up since (a load or /reload makes a new LoadedExtensions)
        self._routes: tuple[LoadedExtensions | None, dict[str, SessionWorker]] = (None, {})
        # the session's loop, where its calls to the workers are awaited: a worker made
        # later, from a thread, still answers on it
        self.loop: asyncio.AbstractEventLoop | None = running_loop() or place.loop
        self._direct: DirectHost | None = None

    @property
    def direct(self) -> DirectHost | None:
        """What pairs each worker with the session's sandbox child (direct channels)."""
        return self._direct

    @direct.setter
    def direct(self, direct: DirectHost | None) -> None:
        with self._lock:
            self._direct = direct
            for worker in self._workers.values():
                worker.direct = direct

    def running(self) -> list[SessionWorker]:
        """The workers that run now, their extensions loaded."""
        with self._lock:
            return [worker for worker in self._workers.values() if worker.ready]

    # -- which worker ----------------------------------------------------------------------

    def _key(self, ext: LoadedExtension | None, loaded: LoadedExtensions) -> EnvKey:
        declaration = None if ext is None else ext.declaration
        declared = () if declaration is None else tuple(declaration.env)
        resolved = resolve_names(declared, loaded.options.environment)
        return tuple(sorted((n, v) for n, v in resolved.items() if self._values.get(n) != v))

    def _members(self, key: EnvKey) -> LoadedExtensions:
        """The loaded extensions (as loaded now) whose worker is the one of ``key``."""
        loaded = self._extensions()
        members = tuple(e for e in loaded.extensions if self._key(e, loaded) == key)
        return LoadedExtensions(members, loaded.options)

    def _worker(self, key: EnvKey) -> SessionWorker:
        with self._lock:
            worker = self._workers.get(key)
            if worker is None:
                worker = SessionWorker(
                    lambda: self._members(key),
                    self._place,
                    self._values,
                    times=self.times,
                    loop=self.loop,
                )
                worker.direct = self._direct
                self._workers[key] = worker
            return worker

    def worker_for(self, owner: str) -> SessionWorker:
        """The worker that runs the code of extension ``owner`` (made, not started, here).

        Which one is worked out once per owner and load: the extensions as loaded are
        immutable, and a ``/reload`` replaces them (the next call works it out again)."""
        loaded = self._extensions()
        routed, routes = self._routes
        if routed is not loaded:
            routes = {}
            self._routes = (loaded, routes)
        worker = routes.get(owner)
        if worker is None:
            worker = routes[owner] = self._worker(self._key(loaded.get(owner), loaded))
        return worker

    def is_extension(self, owner: str) -> bool:
        """Whether ``owner`` names an extension of the session as loaded now (not Vis's own
        code, nor an MCP server's): every extension's code runs in one of these workers."""
        return self._extensions().get(owner) is not None

    def runner(self, owner: str) -> SessionWorker | None:
        """:meth:`worker_for` ``owner`` when it :meth:`is_extension`, else None."""
        return self.worker_for(owner) if self.is_extension(owner) else None

    # -- calls -----------------------------------------------------------------------------

    def call(
        self,
        tool: HostTool,
        args: tuple,
        kwargs: dict,
        *,
        render: bool = False,
        started: Callable[[Any], Awaitable[None]] | None = None,
    ) -> Coroutine[Any, Any, Any]:
        """Run ``tool`` in its extension's worker (see :meth:`SessionWorker.call`): await the
        worker's own call (no coroutine around it: this runs for every tool call)."""
        worker = self.worker_for(tool.owner)
        return worker.call(tool, args, kwargs, render=render, started=started)

    def call_in(
        self, target: TargetKind, owner: str, name: str, args: tuple
    ) -> Coroutine[Any, Any, Any]:
        """Run an op hook or a slash command of ``owner`` in its worker (await the answer)."""
        return self.worker_for(owner).call_in(target, owner, name, args)

    async def ready_for(self, owner: str) -> None:
        """Until ``owner``'s worker can take a call (started, cancelled calls settled)."""
        await self.worker_for(owner).ready_for(owner)

    async def callbacks(
        self,
        kind: CallbackKind,
        calls: Sequence[CallbackCall],
        *,
        timeout: float | None = None,
        context_for: Callable[[str], CallContext] | None = None,
    ) -> list[CallbackOutcome]:
        """Run ``calls`` in their extensions' workers at once and await all of them (see
        :meth:`SessionWorker.callbacks`); the outcomes in the order of ``calls``."""
        batches: dict[SessionWorker, list[int]] = {}
        for index, item in enumerate(calls):
            batches.setdefault(self.worker_for(item.owner), []).append(index)
        done = await asyncio.gather(
            *(
                worker.callbacks(
                    kind, [calls[i] for i in indices], timeout=timeout, context_for=context_for
                )
                for worker, indices in batches.items()
            )
        )
        by_index = {
            index: outcome
            for indices, results in zip(batches.values(), done, strict=True)
            for index, outcome in zip(indices, results, strict=True)
        }
        return [by_index[index] for index in range(len(calls))]  # every call is in one batch

    async def callback(
        self,
        kind: CallbackKind,
        item: CallbackCall,
        *,
        timeout: float | None = None,
        context: CallContext | None = None,
    ) -> CallbackOutcome:
        """Run one callback in its extension's worker from the event loop (an Activity's
        ``render``; see :meth:`SessionWorker.callback`)."""
        worker = self.worker_for(item.owner)
        return await worker.callback(kind, item, timeout=timeout, context=context)

    # -- the processes ---------------------------------------------------------------------

    def prestart(self, needs: Callable[[LoadedExtension], bool] = calls_per_request) -> None:
        """Start, in the background, the workers (those not running) of the extensions that
        ``needs`` names: by default those every request calls (prompt, activation), which
        the first request must not wait for."""
        loaded = self._extensions()
        keys = {self._key(ext, loaded) for ext in loaded.enabled if needs(ext)}
        for key in keys:
            worker = self._worker(key)
            if not worker.ready:
                worker.prestart()

    def move_to(self, place: WorkerPlace) -> None:
        """The session entered or left a draft: the workers running stop, and the next call
        starts one in ``place`` (its working folder, ``vis.workspace_root()``)."""
        with self._lock:
            self._place = place
            workers = list(self._workers.values())
            self._workers = {}
            self._routes = (None, {})
        for worker in workers:
            worker.stop("the session moved to another working copy")

    def stop(self, reason: str | None = None) -> None:
        """Stop every worker (the session closed, or ``/reload``: the next call starts anew);
        ``reason``: what a call it cuts off says ended its worker."""
        with self._lock:
            workers = list(self._workers.values())
        for worker in workers:
            worker.stop(reason)
