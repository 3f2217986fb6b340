"""Where a setting's ``on_change`` runs: in an extension worker, as every callback does.

``prompt``, ``activation``, ``ctx``, a setting's ``on_change`` and an Activity's ``render`` of an
extension run in the worker of the session they serve (:meth:`SessionWorkers.callbacks`), with
the worker's environment (never the host's keys), all of one batch at once and each with a
time limit; a callback that raises or hangs fails alone: its outcome carries the error and the
caller leaves that contribution out.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

from vis_core.extension.context import CallContext
from vis_core.extension.settings_decl import Setting
from vis_core.extension_host.loaded import LoadedExtensions
from vis_core.extension_host.session_workers import SessionWorkers
from vis_core.extension_host.worker_client import CallbackCall, WorkerPlace
from vis_core.ipc.kinds import CallbackKind

if TYPE_CHECKING:
    from vis_core.settings.declaring import DeclaringExtension


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
        if setting.on_change is None:
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
            (outcome,) = await worker.callbacks(
                CallbackKind.ON_CHANGE,
                [CallbackCall(ext.name, setting.id, change)],
                context_for=lambda _owner: context,
            )
        finally:
            if temporary is not None:
                await asyncio.to_thread(temporary.stop)
        if outcome.error is not None:
            raise outcome.error

    return run
