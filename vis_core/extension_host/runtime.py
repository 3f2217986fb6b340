"""The host's side of the SDK runtime: ``vis.notify``, ``vis.ask`` and ``vis.live`` in the
running call's session, over :class:`~vis_core.extension_host.store_runtime.StoreRuntime`
(``vis.state`` in the store, ``vis.log`` in the log folder). What waits on the host's loop
(a person's answer, a notification shown, a tool of ``vis.tools``) is a coroutine there
(:meth:`HostRuntime.on_loop`): a worker's call of it is served on the loop."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import cached_property, partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from vis_core.events import Notification
from vis_core.extension.attachments import check_shown, missing
from vis_core.extension.context import current_call
from vis_core.extension.place import require_trusted
from vis_core.extension_host import attachments, tool_calls
from vis_core.extension_host.store_runtime import StoreRuntime
from vis_core.model.notify import NotifyKind
from vis_core.store.session_data import search_rows, session_data
from vis_core.system.loops import end_tasks, keep

if TYPE_CHECKING:
    from vis_core.extension.attachments import Stored
    from vis_core.extension.forms import Answer, Form
    from vis_core.extension.fs import JailTerms
    from vis_core.extension.live import LiveView
    from vis_core.extension.mcp_servers import McpServer
    from vis_core.extension_host.host_port import HostPort, OpenSession
    from vis_core.extension_host.loaded import LoadedExtensions
    from vis_core.interaction import Interaction
    from vis_core.store import Store
    from vis_core.system.git_control import GitLooks

log = logging.getLogger(__name__)
NOTIFY_WAIT = 5.0


class JailPlace(Protocol):
    """The project and its jail (the host's ``Workspace``)."""

    @property
    def project_root(self) -> Path: ...
    @property
    def git_looks(self) -> GitLooks: ...
    def jail_policy(self, session_id: str | None = None) -> tuple[bool, str | None]: ...
    def project_values(self) -> dict[str, str]: ...


class CallbackSettings(Protocol):
    def value_for_callback(self, setting_id: str, default: Any) -> Any: ...


class Extensions(Protocol):
    @property
    def loaded(self) -> LoadedExtensions: ...  # as last (re)loaded


class OpenSessions(Protocol):
    def live_session(self, session_id: str) -> OpenSession | None: ...  # the one in use


@dataclass(frozen=True)
class RuntimeDeps:
    """What the host side of the SDK uses of the host's services (the composition root
    builds it); ``loop``: the one the host runs on (None: built outside one, read-only)."""

    store: Store
    interaction: Interaction
    settings: CallbackSettings
    space: JailPlace
    catalog: Extensions
    registry: OpenSessions
    loop: asyncio.AbstractEventLoop | None


class HostRuntime(StoreRuntime):
    """The Vis host: its store, its sessions and the channel to its person."""

    def __init__(self, deps: RuntimeDeps) -> None:
        super().__init__(deps.store)
        self.deps = deps
        self._tasks: set[asyncio.Task[Any]] = set()  # notifications posted from the loop
        self._host: HostPort | None = None

    def serve(self, host: HostPort) -> None:
        """What ``vis.sessions``, ``vis.council`` and ``vis.attach`` reach: given once the
        session factory exists (a session's extension can open sessions, so these come last)."""
        self._host = host

    @cached_property
    def git_looks(self) -> GitLooks:
        """The workspace's looks for git files: the host's jails share them."""
        return self.deps.space.git_looks

    @property
    def host(self) -> HostPort:
        if self._host is None:
            raise RuntimeError("the Vis host is still starting; its sessions are not served yet")
        return self._host

    def on_loop(self, operation: str) -> Callable[..., Awaitable[Any]] | None:
        """The coroutine serving a worker's call of ``operation`` on the host's loop; None:
        the synchronous operation serves it (in a thread: it may block on a store or file)."""
        served: dict[str, Callable[..., Awaitable[Any]]] = {
            "notify": self.notify_on_loop,
            "ask": self.ask_on_loop,
            "call_tool": tool_calls.call_tool,  # the bound session's tool, on the loop
            "attachment_add": self.attachment_add_on_loop,
            "publish_activity": _at_once(self.publish_activity),
            "register_mcp_server": _at_once(self.register_mcp_server),
            "extension_path": _at_once(self.extension_path),
        }
        return served.get(operation)

    def _agent(self, session_id: str | None) -> OpenSession | None:
        """The open agent session ``session_id``, if it is open here."""
        return None if session_id is None else self.deps.registry.live_session(session_id)

    def extension_path(self, owner: str) -> Path | None:
        loaded = self.deps.catalog.loaded.get(owner)
        return None if loaded is None else Path(loaded.path)

    # -- notify -----------------------------------------------------------------------------
    def notify(self, text: str, kind: str) -> bool:
        raise _served_on_loop("vis.notify")

    async def notify_on_loop(self, text: str, kind: str) -> bool:
        """Emit a :class:`Notification` in the call's session: saved and shown
        (``NOTIFY_WAIT`` seconds at most, then it goes on alone)."""
        call = current_call()
        agent = self._agent(call.session_id if call is not None else None)
        if agent is None:
            return False
        event = Notification(agent.id, text=text, kind=NotifyKind(kind))
        task = keep(self._tasks, asyncio.ensure_future(agent.emit(event)))
        done, _ = await asyncio.wait({task}, timeout=NOTIFY_WAIT)
        if not done:
            log.warning("notification %r was not shown within %.0f s", text, NOTIFY_WAIT)
        return True

    async def close(self) -> None:
        """Deliver the notifications posted from the loop that are still on their way."""
        await end_tasks(self._tasks, cancel=False)

    # -- the person ----------------------------------------------------------------------------
    def _route(self) -> tuple[str | None, str] | None:
        """The running call's session and extension; with no call, the only open session's
        and Vis (None: no session to reach the person through)."""
        call = current_call()
        if call is not None:
            return call.session_id, call.owner
        only = self.deps.interaction.only_session()
        return None if only is None else (only, "vis")

    def ask(self, form: Form) -> Answer:
        raise _served_on_loop("vis.ask")

    async def ask_on_loop(self, form: Form) -> Answer:
        """Show ``form`` to the person of the running call's session and await the answer."""
        from vis_core.extension.forms import Answer, AnswerReason

        found = self._route()
        if found is None:
            return Answer(reason=AnswerReason.UNDELIVERABLE)
        answer = await self.deps.interaction.ask_async(form, *found)
        call = current_call()
        if not answer and call is not None:  # the calling Activity must not end as a plain ✓
            reason = answer.reason.value if answer.reason else "not answered"
            call.unanswered_forms.append(f"form {form.title!r} {reason}")
        return answer

    def open_live(
        self,
        title: str,
        nodes: tuple[Any, ...],
        *,
        placement: Any,
        key: str | None,
        flush_ms: int,
    ) -> LiveView:
        from vis_core.extension.live import NoSink, open_view

        found = self._route()
        sink = NoSink() if found is None else self.deps.interaction.sink(*found)
        return open_view(title, nodes, placement, key, flush_ms, sink)

    # -- sessions ------------------------------------------------------------------------------
    def list_sessions(self, search: str | None) -> list[dict[str, Any]]:
        require_trusted("vis.list_sessions()")
        return search_rows(self.host.store, search)

    def read_session(self, session_id: str | None) -> dict[str, Any]:
        from vis_core.extension_host.sessions_api import resolve_session

        require_trusted("vis.read_session()")
        store = self.host.store
        return session_data(store, resolve_session(store, session_id, "vis.read_session()"))

    def sessions(self) -> Any:
        from vis_core.extension_host.sessions_api import Sessions

        return Sessions(self.host)

    def bound_session(self) -> Any:
        from vis_core.extension_host.sessions_api import Session

        call = current_call()
        if call is None or call.session_id is None:
            return super().bound_session()  # no bound session: Runtime says so
        return Session(self.host, call.session_id, call.owner)

    def council(self) -> Any:
        require_trusted("vis.council")
        call = current_call()
        if call is None or call.session_id is None:
            return super().council()  # no bound session: Runtime says so
        return self.host.council

    # -- attachments of the running block ------------------------------------------------------
    def attachment_add(
        self,
        data: bytes,
        filename: str,
        media_type: str,
        audience: str,
        commentable: bool,
        label: str,
    ) -> dict[str, Any]:
        args = (data, filename, media_type, audience, commentable, label)
        bound = attachments.block_call("vis.attach()")
        if bound is None:
            return super().attachment_add(*args)
        if bound[0].owner != "vis":  # an extension's: shown as an Activity, from the loop
            raise _served_on_loop("vis.attach() of an extension")
        return attachments.add(self.host, *bound, *args)

    async def attachment_add_on_loop(
        self,
        data: bytes,
        filename: str,
        media_type: str,
        audience: str,
        commentable: bool,
        label: str,
    ) -> dict[str, Any]:
        """:meth:`attachment_add` of an extension's call, shown as an Activity (on the loop)."""
        args = (data, filename, media_type, audience, commentable, label)
        bound = attachments.block_call("vis.attach()")
        if bound is None or bound[0].owner == "vis":
            return await asyncio.to_thread(self.attachment_add, *args)
        adding = partial(attachments.add, self.host, *bound, *args)
        return await attachments.add_shown(bound[0], filename, label, adding)

    def attachment_list(self, filename: str | None) -> list[dict[str, Any]]:
        bound = attachments.block_call("vis.list_attachments()")
        if bound is None:
            return super().attachment_list(filename)
        rows = self.host.store.list_attachments(bound[1], filename)
        return [attachments.stored(row).descriptor() for row in rows]

    def attachment_find(self, key: str, version: int | None, what: str) -> Stored:
        bound = attachments.block_call(what)
        if bound is None:
            return super().attachment_find(key, version, what)
        row = self.host.store.get_attachment(bound[1], key, version)
        if row is None:
            raise missing(key, version, what)
        return attachments.stored(row)

    def attachment_show(self, key: str, version: int | None) -> dict[str, Any]:
        bound = attachments.block_call("vis.show_attachment()")
        if bound is None:
            return super().attachment_show(key, version)
        found = self.attachment_find(key, version, "vis.show_attachment()")
        check_shown(found)
        agent = self._agent(bound[1])
        if agent is None:
            raise RuntimeError(
                f"vis.show_attachment() found no open session {bound[1]!r} to show the image in"
            )
        agent.call_state.show(found.id)
        return found.descriptor()

    # -- vis.tools ---------------------------------------------------------------------------------
    def call_tool(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        raise _served_on_loop("vis.tools")

    # -- the running call: settings, MCP servers and the jail -----------------------------------
    def setting_value(self, setting_id: str, default: Any) -> Any:
        return self.deps.settings.value_for_callback(setting_id, default)

    def register_mcp_server(self, owner: str, server: McpServer) -> None:
        call = current_call()  # on the loop the call came from, else the host's
        loop = call.loop if call is not None and call.loop is not None else self.deps.loop
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(self.host.register_mcp_server, owner, server)

    def jail_terms(self) -> JailTerms:
        from vis_core.extension.fs import JailTerms

        call = current_call()
        space = self.deps.space
        jail, refusal = space.jail_policy(None if call is None else call.session_id)
        read: list[Path] = []
        write: list[Path] = []
        loaded = None if call is None else self.deps.catalog.loaded.get(call.owner)
        declaration = None if loaded is None else loaded.declaration
        for grant in () if declaration is None else declaration.grants:
            expanded = grant.expanded
            if expanded is not None:
                (write if str(grant.mode) == "read_write" else read).append(expanded)
        return JailTerms(
            jail,
            refusal,
            space.project_root,
            space.project_values(),
            tuple(read),
            tuple(write),
        )


def _at_once(operation: Callable[..., Any]) -> Callable[..., Awaitable[Any]]:
    """``operation`` (no IO, no wait) served on the loop as it is, with no thread."""

    async def served(*args: Any, **kwargs: Any) -> Any:
        return operation(*args, **kwargs)

    return served


def _served_on_loop(what: str) -> RuntimeError:
    """The error of an operation's synchronous face in the host: it waits on the host's loop,
    which serves it to extension code in its worker (:meth:`HostRuntime.on_loop`)."""
    return RuntimeError(
        f"{what} waits on Vis's event loop: the host serves it to extension code in its "
        "worker, and awaits it on the loop itself"
    )
