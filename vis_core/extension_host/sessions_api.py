"""The host side of ``vis.sessions`` and ``vis.session``: handles that find, start and drive
sessions, under the gateway's rules, and the lookup by id ``vis.read_session`` shares. What
changes or waits is a coroutine, served on the host's loop."""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vis_core.events import Notification
from vis_core.extension.context import current_call
from vis_core.extension.place import require_trusted
from vis_core.extension_host.gateway import (
    GatewayCode,
    GatewayError,
    require_change,
    shown_change,
)
from vis_core.extension_host.session_changes import check_change, fork_stored, models, renamed
from vis_core.model.notify import NotifyKind
from vis_core.providers.base import ModelChoice
from vis_core.store.session_data import ORIGIN_STATE, resolve_any, search_rows, session_data
from vis_core.store.stored_session import SNAPSHOT_FORMAT, snapshot
from vis_core.tools.display import plural

if TYPE_CHECKING:
    from vis_core.events import TurnEnded
    from vis_core.extension_host.host_port import HostPort
    from vis_core.model.sessions import SessionRow
    from vis_core.store import Store

RESTORE_KEYS = "vis.session_restore_keys"
FIRST_PAGE = 50


def resolve_session(store: Store, session_id: str | None, what: str) -> SessionRow:
    """The session for a bare id, unambiguous prefix or marker; the bound session for None."""
    if session_id is None:
        call = current_call()
        if call is None or call.session_id is None:
            raise RuntimeError(
                f"{what} without an id reads the session that called your extension, and no "
                "session did; pass a session id"
            )
        session_id = call.session_id
    return resolve_any(store, session_id, what)


def _turn_dict(session_id: str, ended: TurnEnded) -> dict[str, Any]:
    return {
        "id": ended.turn_id,
        "session_id": session_id,
        "status": str(ended.status),
        "content": ended.content,
        "error": ended.error,
        "cost": ended.cost,
    }


class Turn:
    """A turn started with :meth:`Session.send`: ``wait(timeout)`` for its dict, ``cancel()``."""

    def __init__(self, session: Session, task: asyncio.Future[TurnEnded]) -> None:
        self.session = session
        self._task = task

    @property
    def done(self) -> bool:
        return self._task.done()

    async def wait(self, timeout: float | None = None) -> dict[str, Any]:
        """The finished turn (``id``, ``status``, ``content``, ``error``); TimeoutError if not.

        Waiting in a callback parks that call: the extension's lock is released until the turn
        ends, so the turn can still use the extension's prompt, ``ctx`` and op hooks, while a
        tool call back into the waiting extension is refused (it would never return).
        """
        try:
            with _parked(self.session._home, self.session.id):
                ended = await asyncio.wait_for(asyncio.shield(self._task), timeout)
        except TimeoutError:
            raise TimeoutError(
                f"the turn in session {self.session.id} is still running after {timeout:g}s; "
                "wait again or cancel() it"
            ) from None
        return _turn_dict(self.session.id, ended)

    async def cancel(self) -> None:
        """Cancel the running turn (a callback, or a thread in a session your extension made)."""
        self.session._check_drive("Turn.cancel()")
        agent = self.session._host.live_session(self.session.id)
        if agent is not None:
            async with shown_change(current_call(), "Turn.cancel", "Cancelled turn") as shown:
                agent.cancel()
                shown.summary = self.session.id[:8]


@contextlib.contextmanager
def _parked(host: HostPort, session_id: str) -> Iterator[None]:
    """Mark the calling extension (and those waiting on it) as waiting on ``session_id``'s turn:
    that session's calls into them are refused meanwhile (they would never return)."""
    call = current_call()
    if call is None or call.owner == "vis":
        yield
        return
    agent = host.live_session(session_id)  # its invoker refuses calls into those waiting on it
    if agent is None:
        yield
        return
    with agent.call_state.awaiting_turn((*call.callers, call.owner)):
        yield


class Session:
    """A handle on one stored session; reads work anywhere, changes follow the thread rules."""

    def __init__(
        self,
        host: HostPort,
        session_id: str,
        owner: str | None,
        home: HostPort | None = None,
    ) -> None:
        """``home``: the Vis whose extension holds the handle, when ``host`` is the Vis of
        another root (its extension's lock is released while a turn is waited for)."""
        self._host = host
        self._home = host if home is None else home
        self._owner = owner
        self.id = session_id

    def __repr__(self) -> str:
        return f"<vis Session {self.id}>"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Session) and other.id == self.id

    def __hash__(self) -> int:
        return hash(self.id)

    @property
    def title(self) -> str:
        row = self._host.store.get_session(self.id)
        return row.title if row else ""

    @property
    def origin(self) -> str | None:
        """The extension that created this session, or None for a person's session."""
        return self._host.store.state_get(ORIGIN_STATE, self.id)

    def read(self) -> dict[str, Any]:
        """The same dict as ``vis.read_session(id)``."""
        row = resolve_session(self._host.store, self.id, "Session.read()")
        return session_data(self._host.store, row)

    def turns(self) -> list[dict[str, Any]]:
        """The transcript's turns, oldest first."""
        return self.read()["transcript"]["turns"]

    def _check_drive(self, what: str) -> None:
        if current_call() is not None:  # a callback: the rules of every change
            check_change(self, what)
        elif self._owner is None or self.origin != self._owner:  # a thread: its own sessions
            raise GatewayError(
                GatewayCode.FORBIDDEN_ROUTE,
                f"{what} from a thread of your extension works only in sessions that your "
                "extension created; use a callback",
            )

    async def send(self, request: str) -> Turn:
        """Start a turn with ``request`` and return its :class:`Turn` at once."""
        if not isinstance(request, str) or not request.strip():
            raise ValueError("Session.send(): the request must be nonblank text")
        self._check_drive("Session.send()")
        async with shown_change(current_call(), "Session.send", "Sent request") as shown:
            agent = self._host.live_session(self.id) or await self._host.open_session(self.id)
            if agent.running:  # refused now, not later on Turn.wait()
                raise RuntimeError(
                    f"Session.send(): session {self.id[:8]} is busy with a turn (a tool call of "
                    "that turn cannot start another one in it); send after the turn ends, or "
                    "start the work in a new session with vis.sessions.create()"
                )
            task = asyncio.ensure_future(agent.submit(request))
            shown.summary = f"{self.id[:8]} · {request}"
        return Turn(self, task)

    async def run(self, request: str, timeout: float | None = None) -> dict[str, Any]:
        """Send ``request`` and wait up to ``timeout`` seconds for the finished turn."""
        return await (await self.send(request)).wait(timeout)

    async def fork(self, turn: int | str | None = None) -> Session:
        """A new session holding this one's history up to and including ``turn`` (a position
        or a turn id; None: the latest settled turn) and what followed it before the next
        turn began (a ``/compact``'s fold, a draft left), with new ids; ``forked_from``
        records the source, and your extension is its origin. Folds made by then are copied
        too. The sandbox's variables are not: the fork's sandbox starts empty."""
        what = "Session.fork()"
        call, host = check_change(self, what)
        async with shown_change(call, "Session.fork", "Forked session") as shown:
            row = await asyncio.wrap_future(fork_stored(host.store, self.id, turn, what))
            host.store.state_set(ORIGIN_STATE, row.id, call.owner)
            shown.summary = f"{self.id[:8]} → {row.id[:8]} · {plural(row.turn_count, 'turn')}"
        return Session(host, row.id, call.owner)

    async def set_model(self, model: str) -> None:
        """Use ``provider/model`` in this session from its next request (saved as the
        session's ``model`` setting, so reopening keeps it). A model Vis cannot use (unknown
        provider, missing key) raises ValueError and changes nothing."""
        what = "Session.set_model()"
        if not isinstance(model, str):
            raise TypeError(f"{what}: model must be text like 'anthropic/claude-sonnet-4-6'")
        choice = ModelChoice.parse(model.strip())
        call, host = check_change(self, what)
        async with shown_change(call, "Session.set_model", "Changed model") as shown:
            chosen = host.session_model(choice, session_id=self.id)
            if chosen.provider is None:
                raise ValueError(f"{what}: cannot use {chosen.label}: {chosen.problem}")
            await host.save_model(self.id, chosen.label)
            agent = host.live_session(self.id)
            if agent is not None:
                await agent.switch_model(chosen)
            shown.summary = f"{self.id[:8]} · {chosen.label}"

    async def publish(self, text: str, kind: str = "info") -> None:
        """Post ``text`` into this session for the person following it (a notification of
        ``kind`` info, success, warn or error, saved with the session). The model does not
        read it."""
        what = "Session.publish()"
        if not isinstance(text, str) or not text.strip():
            raise ValueError(f"{what}: the text must be nonblank")
        try:
            notify_kind = NotifyKind(kind)
        except ValueError:
            kinds = ", ".join(k.value for k in NotifyKind)
            raise ValueError(f"{what}: kind must be one of {kinds}, not {kind!r}") from None
        call, host = check_change(self, what)
        event = Notification(self.id, text=text, kind=notify_kind)
        async with shown_change(call, "Session.publish", "Published to session") as shown:
            agent = host.live_session(self.id)
            if agent is not None:
                await agent.emit(event)  # saved, then shown where the session is open
            else:
                host.store.append(event)
            shown.summary = f"{self.id[:8]} · {text}"


class Sessions:
    """``vis.sessions`` of one workspace's Vis: create, get, list, export and restore."""

    def __init__(self, host: HostPort) -> None:
        self._host = host

    def get(self, session_id: str) -> Session:
        """A handle on a session (id, prefix or marker), without sending anything."""
        require_trusted("vis.sessions.get()")
        row = resolve_session(self._host.store, session_id, "vis.sessions.get()")
        call = current_call()
        return Session(self._host, row.id, call.owner if call else None)

    def models(self) -> list[dict[str, Any]]:
        """The models Vis knows, with prices ($ per million tokens) and limits: ``id``
        (``provider/model``), ``provider``, ``model``, ``input_limit`` (None when unknown),
        ``auto_compress_above``, ``input_price``, ``output_price``, ``cache_read_price``,
        ``cache_write_price`` and ``current`` (the bound session's model)."""
        return models(self._host)

    def list(self, search: str | None = None) -> list[dict[str, Any]]:
        """The sessions of the first page, newest first, or the ranked matches of ``search``."""
        require_trusted("vis.sessions.list()")
        return search_rows(self._host.store, search, limit=FIRST_PAGE)

    async def create(
        self,
        provider: str | None = None,
        model: str | None = None,
        *,
        root: str | os.PathLike[str] | None = None,
        title: str = "",
        group: str | None = None,
        script: str | os.PathLike[str] | None = None,
    ) -> Session:
        """A new independent session, recorded as created by your extension (no parent)."""
        call, host = require_change("vis.sessions.create()"), self._host
        session_model = _model(host, provider, model, script)
        async with shown_change(call, "vis.sessions.create", "Created session") as shown:
            # another root: a session of the Vis there, with that root's trust and settings
            target = host if root is None else await host.host_at(Path(root))
            agent = await target.new_session()
            if title:
                agent.title = title
                target.store.set_title(agent.id, title)
            if session_model is not None:
                await agent.switch_model(session_model)
            if group is not None:  # the group's values reach it as a save's would
                await target.move_to_group(agent.id, group)
            target.store.state_set(ORIGIN_STATE, agent.id, call.owner)
            shown.summary = f"{title or 'untitled'} · {agent.id[:8]}"
        return Session(target, agent.id, call.owner, home=host)

    def export(self, session_id: str | None = None) -> dict[str, Any]:
        """A snapshot of the bound session or of ``session_id``: its row and its event log."""
        require_trusted("vis.sessions.export()")
        row = resolve_session(self._host.store, session_id, "vis.sessions.export()")
        return snapshot(self._host.store, row)

    async def restore(
        self,
        data: dict[str, Any],
        *,
        root: str | os.PathLike[str] | None = None,
        group_id: str | None = None,
        key: str | None = None,
    ) -> Session:
        """A new session rebuilt from an ``export()`` snapshot; ``key`` makes it idempotent."""
        call, host = require_change("vis.sessions.restore()"), self._host
        if not isinstance(data, dict) or data.get("format") != SNAPSHOT_FORMAT:
            raise ValueError(
                f"vis.sessions.restore(): data is not a session snapshot (format "
                f"{SNAPSHOT_FORMAT!r}); pass what vis.sessions.export() returned"
            )
        if key is not None:
            known = host.store.state_get(RESTORE_KEYS, key)
            if known and host.store.get_session(known) is not None:
                return Session(host, known, call.owner)
        _check_root(host, root)
        source = data.get("session") or {}

        def stored() -> tuple[SessionRow, int]:
            row = host.store.create_session(
                host.workspace,
                host.project_root,
                title=str(source.get("title") or ""),
                group=group_id if group_id is not None else source.get("group"),
            )
            events = renamed(data.get("events") or [], row.id)
            host.store.append_many(events)
            host.store.state_set(ORIGIN_STATE, row.id, call.owner)
            if key is not None:
                host.store.state_set(RESTORE_KEYS, key, row.id)
            return row, len(events)

        async with shown_change(call, "vis.sessions.restore", "Restored session") as shown:
            row, count = await asyncio.to_thread(stored)  # a snapshot may hold many events
            shown.summary = f"{row.title or 'untitled'} · {row.id[:8]} · {plural(count, 'event')}"
        return Session(host, row.id, call.owner)


def _check_root(host: HostPort, root: str | os.PathLike[str] | None) -> None:
    if root is not None and Path(root).expanduser().resolve() != host.workspace:
        raise ValueError(
            f"root {root} is not this Vis's workspace {host.workspace}; a session in another "
            "root needs a Vis started there"
        )


def _model(
    host: HostPort,
    provider: str | None,
    model: str | None,
    script: str | os.PathLike[str] | None,
) -> Any:
    if provider is None and model is None and script is None:
        return None
    if provider == "scripted" or (provider is None and script is not None):
        choice = ModelChoice("scripted", model or "script")
    else:
        text = model or ""
        if provider and "/" not in text:
            text = f"{provider}/{text}" if text else ""
        if not text:
            raise ValueError(
                "vis.sessions.create(): give model='provider/model' (or provider= and model=)"
            )
        choice = ModelChoice.parse(text)
    chosen = host.session_model(choice, script=Path(script) if script is not None else None)
    if chosen.provider is None:
        raise ValueError(f"vis.sessions.create(): cannot use {chosen.label}: {chosen.problem}")
    return chosen
