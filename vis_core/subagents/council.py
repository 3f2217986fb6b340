"""``vis.council``: the Council handle of the bound session, for trusted extension code: the
model's ``run_session`` and ``consult``, served on the host's loop (blocking calls of an
extension's callback in its worker)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from vis_core.extension_host.gateway import require_change
from vis_core.subagents.mirror import CallSite
from vis_core.subagents.service import SubagentError, failure

if TYPE_CHECKING:
    from vis_core.agent.session import AgentSession
    from vis_core.extension.context import CallContext
    from vis_core.extension_host.host_port import HostPort
    from vis_core.subagents.service import Subagents


class Council:
    """The child sessions of the session that called your extension: each call runs in a
    child session of it, shown under your tool's Activity, its cost counted in the session's.
    Calls block until the child answers (``timeout`` seconds at most: then TimeoutError and
    the child is cancelled)."""

    def __init__(self, subagents: Subagents, host: HostPort) -> None:
        self._subagents = subagents
        self._host = host  # its open sessions are the parents

    def __repr__(self) -> str:
        return "<vis.council>"

    async def run_session(
        self,
        request: str,
        model: str | None = None,
        read_only: bool = True,
        timeout: float | None = None,
    ) -> str:
        """A new child session answers ``request`` in one turn; its answer. ``model``:
        'provider/model' (default: the session's); ``read_only=False``: the child may change
        files, in a draft of its own."""
        call, parent = self._bound("vis.council.run_session()")
        answer = await self._wait(
            parent,
            self._subagents.run(
                parent, request, model=model, read_only=read_only is not False, site=_site(call)
            ),
            timeout,
        )
        if answer.status.value != "completed":
            raise SubagentError(failure("vis.council.run_session()", answer))
        return answer.text()

    async def consult(
        self, session: Any, question: str, timeout: float | None = None
    ) -> dict[str, Any]:
        """Ask stored session ``session`` (an id, a prefix, a marker or a ``list_sessions()``
        row) ``question`` in a read-only fork of it: ``session_id``, ``title``, ``answer`` and
        ``fork_id``. The original session never changes."""
        call, parent = self._bound("vis.council.consult()")
        coro = self._subagents.consult(parent, session, question, site=_site(call))
        return await self._wait(parent, coro, timeout)

    def _bound(self, what: str) -> tuple[CallContext, AgentSession]:
        call = require_change(what)
        assert call.session_id is not None  # require_change refuses a call of no session
        parent = self._host.live_session(call.session_id)
        if parent is None:
            raise RuntimeError(
                f"{what}: session {call.session_id} is not open in this Vis; call it from a "
                "tool call or command of an open session"
            )
        return call, parent  # type: ignore[return-value]

    async def _wait(self, parent: AgentSession, coro: Any, timeout: float | None) -> Any:
        """Await ``coro`` (``timeout`` seconds at most: then TimeoutError and the child is
        cancelled); the calling extension is marked as waiting on its session meanwhile, so
        that the child may call the extension's tools too."""
        from vis_core.extension_host.sessions_api import _parked

        with _parked(self._host, parent.id):
            return await asyncio.wait_for(coro, timeout)


def _site(call: CallContext) -> CallSite:
    return CallSite(call.turn_id, call.iteration_id, call.activity_id)
