"""The session registry: the open sessions of one workspace and what each runs on."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import shlex
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from vis_core.agent.session import HISTORY_EVENTS, AgentSession
from vis_core.events import Event, SessionCreated
from vis_core.extension_host.session_workers import SessionWorkers
from vis_core.interaction import Interaction
from vis_core.model.sessions import SessionRow
from vis_core.store import Store, StoreError
from vis_core.store.interrupted import cut_off_endings
from vis_core.store.session_lock import SessionInUse, SessionLocks

if TYPE_CHECKING:
    from vis_core.host.live_settings import ConfinedParts
    from vis_core.session_tools import SessionTools

log = logging.getLogger(__name__)
RELOADED = "the extensions were reloaded (/reload)"
# seconds after which an unused session no Vis holds open is deleted at the next start (its
# row is saved just before its Vis takes its lock: a younger one may be starting)
ABANDONED_AFTER = 60.0
# builds the open session ``session_id`` titled ``title`` with ``history`` replayed
Build = Callable[[str, str, list[Event]], AgentSession]


class SessionElsewhere(LookupError):
    """A stored session of another workspace: its turns run in its own folder (its files,
    checkpoints, trust and settings are that folder's), never in this one."""

    def __init__(self, session_id: str, workspace: str, here: Path) -> None:
        self.workspace = workspace
        gone = "" if Path(workspace).is_dir() else " (that folder is gone)"
        super().__init__(
            f"session {session_id[:8]} belongs to {workspace}{gone}, not to {here}: its "
            f"turns run in its own folder; resume it from there (cd {shlex.quote(workspace)})"
        )


def belongs_here(row: SessionRow, workspace: Path) -> bool:
    """Whether the stored session ``row`` is one of ``workspace``'s (resolved)."""
    stored = Path(row.workspace)
    return stored == workspace or stored.resolve() == workspace


class SessionRegistry:
    """The open sessions of a workspace (oldest first), their locks against another Vis,
    and the parts of each that the workspace reaches: its extension worker and tool set."""

    def __init__(
        self,
        store: Store,
        workspace: Path,
        project_root: Path,
        interaction: Interaction,
        locks: SessionLocks,
    ) -> None:
        self._store = store
        self._workspace = workspace
        self._project_root = project_root
        self._interaction = interaction
        self.locks = locks
        self.sessions: list[AgentSession] = []
        self.session_tools: dict[str, SessionTools] = {}  # by open session
        self.extension_workers: dict[str, SessionWorkers] = {}  # by open session
        self.confined: dict[str, ConfinedParts] = {}  # by open session
        self.closed_unused: set[str] = set()  # sessions closed with nothing in them: not kept
        # sessions opened for one command (`vis run "/context"`): kept only for what it
        # kept for them (a goal), not for what it showed
        self.for_a_command: set[str] = set()
        self._closing: dict[AgentSession, asyncio.Future[None]] = {}
        self._leaving: dict[AgentSession, asyncio.Task[None]] = {}  # closed once settled
        self._opening: dict[str, asyncio.Future[AgentSession]] = {}  # by session id

    def delete_abandoned(self) -> int:
        """Delete this workspace's sessions nobody used that no Vis has open, made over
        ``ABANDONED_AFTER`` seconds ago: left by a Vis that was killed, or made before an
        unused session was deleted on close. How many went (run on the store's writer)."""
        deleted = 0
        try:
            for session_id in self._store.unused_sessions(
                self._workspace, time.time() - ABANDONED_AFTER
            ):
                try:
                    self.locks.acquire(session_id)
                except SessionInUse:  # open in another Vis: deleted on its close if unused
                    continue
                try:
                    deleted += self._store.delete_if_unused(session_id)
                finally:
                    self.locks.release(session_id)
        except StoreError as exc:  # kept, then: empty rows in the list
            log.warning("unused sessions were not deleted: %s", exc)
        return deleted

    def latest_session_id(self) -> str | None:
        row = self._store.latest_session(self._workspace)
        return row.id if row else None

    async def new_session(self, build: Build, starting: Callable[[], None]) -> AgentSession:
        """A new session, built by ``build`` once its row is saved (by the store's writer,
        off the loop, in order with the events queued before) and ``starting`` ran."""
        store, workspace = self._store, self._workspace

        def create() -> SessionRow:
            row = store.create_session(workspace, self._project_root)
            store.append(SessionCreated(row.id, title=row.title, workspace=str(workspace)))
            return row

        row = await asyncio.wrap_future(store.writer.call(create))
        starting()
        return self._opened(row.id, row.title, [], build)

    async def open_session(
        self, session_id: str, build: Build, starting: Callable[[], None]
    ) -> AgentSession:
        """The session ``session_id``: the one open here if it is (a close it was left to
        is called off), else the stored one, opened with its history (``LookupError`` when
        there is none; ``SessionElsewhere`` when it is another workspace's; ``SessionInUse``
        when another Vis has it open); ``starting`` runs on the loop once it is found,
        ``build`` in a thread. A process has one live copy of a session: two would run turns
        into one history at once. One closing is waited for, then opened anew."""
        while True:
            closing = next((f for s, f in self._closing.items() if s.id == session_id), None)
            if closing is None:
                break
            with contextlib.suppress(Exception):  # its failure is logged by its closer
                await asyncio.shield(closing)
        live = self.live_session(session_id)
        if live is not None:
            leaving = self._leaving.pop(live, None)
            if leaving is not None:  # shown again: it stays open
                leaving.cancel()
                self.locks.mark_left(session_id, False)
            return live
        opening = self._opening.get(session_id)
        if opening is None:
            opening = asyncio.ensure_future(self._open(session_id, build, starting))
            self._opening[session_id] = opening
            opening.add_done_callback(lambda _: self._opening.pop(session_id, None))
        return await asyncio.shield(opening)

    async def _open(
        self, session_id: str, build: Build, starting: Callable[[], None]
    ) -> AgentSession:
        row = self._store.get_session(session_id)
        if row is None:
            raise LookupError(f"no session {session_id!r}; `vis sessions` lists them")
        if not belongs_here(row, self._workspace):
            raise SessionElsewhere(row.id, row.workspace, self._workspace)

        def restore() -> AgentSession:  # a long session reads for seconds; keep the loop free
            self._end_interrupted_turns(row.id)  # no live copy here or elsewhere runs them
            stored = self._store.events(row.id, types=HISTORY_EVENTS)
            return self._opened(row.id, row.title, [event.event for event in stored], build)

        self.locks.acquire(row.id)  # refuse before reading a long history
        try:
            starting()
            return await asyncio.to_thread(restore)
        finally:
            self.locks.release(row.id)

    def _end_interrupted_turns(self, session_id: str) -> None:
        """A turn still ``running`` when nobody holds the session was cut off (Vis was killed):
        it ends as cancelled, saying so, before the session is shown again, with what it
        showed: the answer it streamed, what its running block printed."""
        ending = cut_off_endings(self._store, session_id)
        if ending:
            self._store.append_many(ending)

    def _opened(
        self, session_id: str, title: str, history: list[Event], build: Build
    ) -> AgentSession:
        self.locks.acquire(session_id)  # SessionInUse when another Vis has it open
        try:
            session = build(session_id, title, history)
        except BaseException:
            self.locks.release(session_id)
            raise
        self.sessions.append(session)
        self._interaction.attach(session)
        return session

    async def close_session(self, session: AgentSession) -> None:
        """Close one open session and forget it (a child session whose turn ended); a close
        under way is waited for, not begun again."""
        closing = self._closing.get(session)
        if closing is None:
            closing = self._closing[session] = asyncio.ensure_future(self._close(session))
        await asyncio.shield(closing)

    async def _close(self, session: AgentSession) -> None:
        """Close ``session``; a session nobody used is not kept (after what it wrote)."""
        try:
            await session.close()
            store = self._store
            commands_keep = session.id not in self.for_a_command
            with contextlib.suppress(StoreError):  # kept, then: an empty row in the list
                deleted = store.writer.call(
                    lambda: store.delete_if_unused(session.id, commands_keep=commands_keep)
                )
                if await asyncio.wrap_future(deleted):
                    self.closed_unused.add(session.id)
        finally:
            self._interaction.detach(session)
            if session in self.sessions:
                self.sessions.remove(session)
            self._closing.pop(session, None)

    async def leave(self, session: AgentSession) -> None:
        """A front end shows another session instead of ``session``: it closes (another Vis
        may open it then) now when idle, else once its turn, its slash commands and the
        commands its blocks left running have ended, none cut short (its lock says so
        meanwhile). Opened again before, it stays open. A failure to close is logged."""
        if session not in self.sessions or session in self._leaving:
            return
        if session.settling:
            self.locks.mark_left(session.id, True)
            task = asyncio.get_running_loop().create_task(self._close_when_settled(session))
            self._leaving[session] = task

            def done(_: object) -> None:  # a leave called off and begun again is another task
                if self._leaving.get(session) is task:
                    del self._leaving[session]

            task.add_done_callback(done)
            return
        try:
            await self.close_session(session)
        except Exception:
            log.exception("session %s did not close", session.id)

    async def _close_when_settled(self, session: AgentSession) -> None:
        await session.settled()
        try:
            await self.close_session(session)
        except Exception:
            log.exception("session %s did not close", session.id)

    def live_session(self, session_id: str) -> AgentSession | None:
        """The open session ``session_id`` of this workspace (a call's session is found here;
        there is one at most: :meth:`open_session` gives the one open)."""
        return next((s for s in self.sessions if s.id == session_id), None)

    def keep_parts(
        self,
        session_id: str,
        worker: SessionWorkers,
        tools: SessionTools,
        confined: ConfinedParts,
    ) -> None:
        """What an open session runs on that the workspace reaches: its extension worker
        (stopped by /reload), its tool set (rebuilt after /reload or a setting change) and what
        the settings that confine its children shape (its sandbox, its tools' context)."""
        self.extension_workers[session_id] = worker
        self.session_tools[session_id] = tools
        self.confined[session_id] = confined

    def drop_parts(
        self,
        session_id: str,
        worker: SessionWorkers,
        tools: SessionTools,
        confined: ConfinedParts,
    ) -> None:
        """The session closed: forget its parts and let another Vis open it."""
        for parts, part in (
            (self.extension_workers, worker),
            (self.session_tools, tools),
            (self.confined, confined),
        ):
            if parts.get(session_id) is part:
                del parts[session_id]
        self.locks.release(session_id)

    def reset_tools(self) -> None:
        """Every open session builds its tools again before its next block."""
        for tools in list(self.session_tools.values()):
            tools.reset()

    def extensions_reloaded(self) -> None:
        """Stop every session's extension worker (the next call starts a new one, at once
        when each request calls into it) and rebuild their tools."""
        for worker in self.extension_workers.values():
            worker.stop(RELOADED)
            worker.prestart()  # those each request calls into: started now
        self.reset_tools()

    async def close(self) -> None:
        """Close every session, also those left to settle (their turn is cancelled)."""
        leaving = list(self._leaving.values())
        for task in leaving:
            task.cancel()
        await asyncio.gather(*leaving, return_exceptions=True)
        for session in list(self.sessions):
            await self.close_session(session)
        self.sessions.clear()
        self.locks.release_all()
