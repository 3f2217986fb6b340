"""Where the callbacks of an extension's declaration run: in its session's extension worker.

``prompt``, ``activation``, ``ctx``, a setting's ``on_change`` and an Activity's ``render`` of an
extension loaded from a file run in the worker of the session they serve, with the worker's
environment (never the host's keys), all of one batch at once and each with a time limit; an
extension with no entry file (built in code, as tests do) or a caller with no worker runs
them here under the extension's lock. Either way a callback that raises or hangs fails alone:
its outcome carries the error and the caller leaves that contribution out.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from vis_core.extension.context import CallContext, calling
from vis_core.extension.settings_decl import Setting
from vis_core.extension_host.loaded import LoadedExtension, LoadedExtensions
from vis_core.extension_host.session_workers import SessionWorkers
from vis_core.extension_host.worker_client import (
    CallbackCall,
    CallbackOutcome,
    WorkerPlace,
)
from vis_core.ipc.kinds import CallbackKind

if TYPE_CHECKING:
    from vis_core.settings.declaring import DeclaringExtension


@dataclass(frozen=True)
class Callback:
    """One callback to run: ``fn`` is the host's copy, used only where no worker runs it."""

    extension: LoadedExtension
    fn: Callable[..., Any]
    key: str = ""
    args: tuple = ()


async def run_callbacks(
    kind: CallbackKind,
    callbacks: Sequence[Callback],
    worker: SessionWorkers | None,
    context_for: Callable[[str], CallContext] | None = None,
) -> list[CallbackOutcome]:
    """Each callback's outcome, in order: run in ``worker`` at once, or with no worker (a
    test's extensions run in its own process) one after the other in a thread here.

    ``context_for`` gives the call context (session, owner) each one runs as.
    """
    if not callbacks:
        return []
    if worker is None:
        return await asyncio.to_thread(_run_here, callbacks, context_for)
    calls = [CallbackCall(item.extension.name, item.key, item.args) for item in callbacks]
    return await worker.callbacks(kind, calls, context_for=context_for)


def _run_here(
    callbacks: Sequence[Callback], context_for: Callable[[str], CallContext] | None
) -> list[CallbackOutcome]:
    """Run ``callbacks`` here, one after the other (in a thread)."""
    done: list[CallbackOutcome] = []
    for item in callbacks:
        try:
            owner = item.extension.name
            with contextlib.nullcontext() if context_for is None else calling(context_for(owner)):
                value = item.extension.call(item.fn, *item.args)
        except Exception as exc:
            done.append(CallbackOutcome(error=exc))
        else:
            done.append(CallbackOutcome(value=value))
    return done


def on_change_runner(
    extensions: Callable[[], LoadedExtensions],
    workers: Callable[[], Mapping[str, SessionWorkers]],
    place: WorkerPlace,
    values: Callable[[], Mapping[str, str]],
) -> Callable[
    [DeclaringExtension, Setting[Any], tuple[Any, Any, str], CallContext], Awaitable[None]
]:
    """What runs a setting's ``on_change(old, new, scope)`` for the settings service.

    Where: the worker of the session the value was saved for; with no such session (a global
    or project value saved from ``vis settings`` or the Settings screen before a session ran
    any extension code), any live session worker of this workspace, which loaded the same
    extensions; with none, a worker started for this one call and stopped after it. It raises
    what the callback raised, or why it could not run (a hang ends with a ``TimeoutError``).
    """

    async def run(
        declaring: DeclaringExtension,
        setting: Setting[Any],
        change: tuple[Any, Any, str],
        context: CallContext,
    ) -> None:
        hook = setting.on_change
        if hook is None:
            return
        ext = extensions().get(declaring.name)
        if ext is None:
            raise LookupError(f"extension {declaring.name!r} is not loaded; reload extensions")
        live = workers()
        worker = live.get(context.session_id) if context.session_id else None
        if worker is None:
            worker = next(iter(live.values()), None)
        temporary = None
        if worker is None:
            worker = temporary = SessionWorkers(extensions, place, values())
        try:
            (outcome,) = await run_callbacks(
                CallbackKind.ON_CHANGE,
                [Callback(ext, hook, key=setting.id, args=change)],
                worker,
                lambda _owner: context,
            )
        finally:
            if temporary is not None:
                await asyncio.to_thread(temporary.stop)
        if outcome.error is not None:
            raise outcome.error

    return run
