"""Everything one session needs from the extension services: contexts, op hooks, ``session``."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Protocol

from vis_core.extension.context import CallContext
from vis_core.extension.declarations import callback_env
from vis_core.extension_host.call_state import SessionCallState
from vis_core.extension_host.hooks import OpHooks
from vis_core.extension_host.loaded import LoadedExtension, LoadedExtensions
from vis_core.extension_host.session_context import collect_context, session_dict
from vis_core.extension_host.session_workers import SessionWorkers
from vis_core.extension_host.state_ctx import answered_without_worker
from vis_core.extension_host.tool_hooks import ToolHooks
from vis_core.extension_host.worker_client import WorkerPlace
from vis_core.store import Store
from vis_core.system.loops import running_loop


class SessionFacts(Protocol):
    """What the ``session`` dict shows of a running agent session."""

    title: str
    turn_count: int
    model: Any  # its ``label`` names the model (or says there is none)

    def utilization(self) -> dict[str, Any]: ...


_ATTRIBUTE_OF = re.compile(r"\b([A-Za-z_]\w*)\s*\.")  # ``todo.`` in ``await todo.add(…)``


def _request_health(store: Store, session_id: str) -> dict[str, Any]:
    """``fold_measurement`` of the latest fold (all folds between two requests share it)."""
    folds = store.folds(session_id)
    return {"fold_measurement": folds[-1].measurement()} if folds else {}


def needs_context(ext: LoadedExtension) -> bool:
    """Whether ``ext`` has a ``ctx`` that runs in a worker before each block."""
    return ext.declaration is not None and ext.declaration.ctx is not None


class SessionKit:
    """The extension services of one session (contexts, op hooks, its worker, the state its
    calls share), built before
    the session itself from plain values: the host that assembles sessions is above it."""

    def __init__(
        self,
        place: WorkerPlace,
        *,
        store: Store,
        extensions: Callable[[], LoadedExtensions],
        project_values: dict[str, str],
        tell: Callable[[str], Awaitable[None]] | None = None,
    ) -> None:
        # the session's loop: what its callbacks' contexts name
        self.place = dataclasses.replace(place, loop=running_loop() or place.loop)
        self._store = store
        self._extensions = extensions
        # the session's extension workers (one per declared environment): each started by the
        # first tool, hook, command or callback it runs
        self.worker = SessionWorkers(extensions, self.place, project_values)
        self.worker.prestart()  # the first request's prompt needs them; start them meanwhile
        # who waits on the session's turn, the images shown to its model with a call's result
        self.call_state = SessionCallState()
        # ``tell``: a warning in the session (an op hook that returned no verdict)
        self.hooks = OpHooks(extensions, self.context_for, self.worker, tell)
        self.tool_hooks = ToolHooks(self.hooks)

    def move_to(self, workspace: Path, project_root: Path) -> None:
        """The session entered or left a draft: callbacks, hooks and the extension workers
        see the new roots (``vis.workspace_root()``, ``vis.project_root()``)."""
        self.place = dataclasses.replace(
            self.place, workspace_root=workspace, project_root=project_root
        )
        self.worker.move_to(self.place)

    def context_for(self, owner: str) -> CallContext:
        """The context of a callback of extension ``owner`` in this session, at its roots now."""
        return self.place.context_for(owner)

    def env(self) -> dict[str, Any]:
        return callback_env(
            workspace_root=self.place.workspace_root,
            project_root=self.place.project_root,
            session_id=self.place.session_id,
            channel=self.place.channel,
        )

    def core_fields(self, session: SessionFacts | None) -> dict[str, Any]:
        """The fields Vis fills in ``session``: ids, roots, turn, model, goal and budget."""
        place, session_id = self.place, self.place.session_id
        fields: dict[str, Any] = {
            "id": session_id,
            "workspace_root": str(place.workspace_root),
            "project_root": str(place.project_root),
            "cwd": str(place.workspace_root),
            "channel": place.channel.value,
        }
        if session is not None:
            fields.update(
                title=session.title,
                turn=session.turn_count,
                model=session.model.label,
                utilization=session.utilization(),
            )
            health = _request_health(self._store, session_id) if session_id else {}
            if health:
                fields["request_health"] = health
        goal = self._store.state_get("vis.goal", session_id) if session_id else None
        if goal:
            fields["goal"] = goal
        return fields

    def state_holds(self, extension: str, key: str) -> bool:
        """Whether ``key`` of ``extension``'s ``vis.state`` holds a value (writes the session's
        calls made are committed before this read)."""
        return self._store.state_get(extension, key) is not None

    def block_coming(self) -> None:
        """The model has begun writing a block: start, in the background, the workers of the
        extensions whose ``ctx`` builds its ``session`` dict (not started yet), but for a
        state-only ``ctx`` whose answer is known without it."""
        session_id = self.place.session_id

        def needed(ext: LoadedExtension) -> bool:
            return (
                needs_context(ext)
                and answered_without_worker(ext, session_id, self.state_holds) is None
            )

        self.worker.prestart(needed)

    def block_written(self, code: str) -> None:
        """The block's code has come: start, in the background, the workers (not started
        yet) of the extensions it names as ``alias.``, whose first call would wait for it."""
        named = set(_ATTRIBUTE_OF.findall(code))
        if named:
            self.worker.prestart(lambda ext: ext.alias in named)

    async def session_globals(self, session: SessionFacts | None) -> dict[str, Any]:
        """The ``session`` dict for ``session``'s next block (extension ``ctx`` run in the
        session's extension worker, or known without it)."""
        contributed = await collect_context(
            self._extensions(),
            self.env(),
            self.worker,
            self.context_for,
            self.state_holds,
        )
        return session_dict(self.core_fields(session), contributed)
