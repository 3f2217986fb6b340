"""Everything one session needs from the extension services: contexts, op hooks, ``session``."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from vis_core.extension.declarations import callback_env
from vis_core.extension_host.hooks import OpHooks
from vis_core.extension_host.services import SessionServices
from vis_core.extension_host.session_context import collect_context, session_dict
from vis_core.extension_host.tool_hooks import ToolHooks
from vis_core.extension_host.worker_client import SessionWorker, WorkerPlace

if TYPE_CHECKING:
    from vis_core.agent.hooked_sandbox import HookedSandbox
    from vis_core.host import Host


def _request_health(host: Host, session_id: str) -> dict[str, Any]:
    """``fold_measurement`` of the latest fold (all folds between two requests share it)."""
    folds = host.store.folds(session_id)
    return {"fold_measurement": folds[-1].measurement()} if folds else {}


class SessionKit:
    """The extension services of one session, built by the host before the session itself."""

    def __init__(self, host: Host, session_id: str, session: Callable[[], Any]) -> None:
        self._host = host
        self._session = session
        try:
            loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        self.services = SessionServices(
            session_id=session_id,
            workspace_root=host.workspace,
            project_root=host.project_root,
            channel=host.options.channel,
            runtime=host.runtime,
            loop=loop,
        )
        # the session's extension worker: started by the first tool, hook or command it runs
        self.worker = SessionWorker(
            lambda: host.extensions,
            WorkerPlace(session_id, host.workspace, host.project_root, host.options.channel),
            host.project_values(),
        )
        self.hooks = OpHooks(lambda: host.extensions, self.services.context_for, self.worker)
        self.tool_hooks = ToolHooks(self.hooks)

    def env(self) -> dict[str, Any]:
        return callback_env(
            workspace_root=self._host.workspace,
            project_root=self._host.project_root,
            session_id=self.services.session_id,
            channel=self._host.options.channel,
        )

    def core_fields(self) -> dict[str, Any]:
        """The fields Vis fills in ``session``: ids, roots, turn, model, goal and budget."""
        host, session = self._host, self._session()
        session_id = self.services.session_id
        fields: dict[str, Any] = {
            "id": session_id,
            "workspace_root": str(host.workspace),
            "project_root": str(host.project_root),
            "cwd": str(host.workspace),
            "channel": host.options.channel,
        }
        if session is not None:
            model = session.model
            fields.update(
                title=session.title,
                turn=session.turn_count,
                model=model.label,
                utilization=session.utilization(),
            )
            health = _request_health(host, session_id) if session_id else {}
            if health:
                fields["request_health"] = health
        goal = host.store.state_get("vis.goal", session_id) if session_id else None
        if goal:
            fields["goal"] = goal
        return fields

    async def session_globals(self) -> dict[str, Any]:
        """The ``session`` dict for the next block (extension ``ctx`` run in worker threads)."""
        contributed = await asyncio.to_thread(
            collect_context, self._host.extensions, self.env(), self.services.context_for
        )
        return session_dict(self.core_fields(), contributed)

    def wrap(self, sandbox: Any) -> HookedSandbox:
        from vis_core.agent.hooked_sandbox import HookedSandbox

        return HookedSandbox(sandbox, self.hooks, session=self.session_globals)

    def closer(self, close: Callable[[], Any] | None) -> Callable[[], Any]:
        """``close`` as an awaitable (the session's ``on_close``)."""

        async def run() -> None:
            if close is not None:
                result = close()
                if inspect.isawaitable(result):
                    await result

        return run
