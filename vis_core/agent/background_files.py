"""What the session's background commands change after a turn's last block listed the files.

A command a block left running may write after its turn ended, or while a later turn runs.
Vis cannot tell its changes from the person's, so the rule is one of time: the files that
change after a turn's last block while one of the session's commands runs (it did when the
last listing was made) are listed again with the same file watch, against that listing, and
told as :class:`BackgroundFilesChanged`: when the last of them ends between turns (or the
turn ends), when the next turn takes its checkpoint (before its first block), before
``/undo``, and as the session closes (its commands stopped first); within a turn, before the
request that follows a block which left them running. They count as that turn's for ``/undo``: its
checkpoint stays while they run, and records them. What changes while none runs is the
person's, left to the next turn's checkpoint as before.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING

from vis_core.events import BackgroundFilesChanged, Event
from vis_core.model.notes import PREVIEW
from vis_core.text_limits import one_line

if TYPE_CHECKING:
    from vis_core.agent.deps import FileWatch, ToolFiles, TurnCheckpoints
    from vis_core.model.block import FileChange
    from vis_core.model.undo import Scan

log = logging.getLogger(__name__)

NAMED_COMMANDS = 5  # commands a listing names (each cut to a line); the others are counted


class BackgroundFiles:
    """Follows the files after a turn while the session's commands run (one per session)."""

    def __init__(
        self,
        session_id: str,
        checkpoints: TurnCheckpoints,
        commands: ToolFiles,
        emit: Callable[[Event], Awaitable[None]],
    ) -> None:
        self.session_id = session_id
        self.checkpoints = checkpoints
        self.commands = commands
        self.emit = emit
        self._watch: FileWatch | None = None  # the last listed turn's, while commands run
        self._position = 0  # that turn's
        self._ran: tuple[str, ...] = ()  # the commands that ran since its last listing
        self._lock = asyncio.Lock()  # one listing at a time: a turn's waits for one between

    def follow(self, watch: FileWatch, position: int, ran: list[str]) -> bool:
        """At the end of turn ``position``, whose last listing was ``watch``'s: whether the
        commands that ran at that listing (``ran``) or still run make it go on (then the
        turn's checkpoint stays until they are listed)."""
        ran = [*ran, *self.commands.running_commands()]
        if not ran:
            return False
        self._watch, self._position = watch, position
        self._ran = tuple(dict.fromkeys([*self._ran, *ran]))
        return True

    def keep_following(self) -> None:
        """A turn that ran no block ended: the commands running now ran since the listing."""
        if self._watch is not None:
            self._ran = tuple(dict.fromkeys([*self._ran, *self.commands.running_commands()]))

    @property
    def following(self) -> bool:
        return self._watch is not None

    async def list(self, turn_id: str = "", *, end: bool = False) -> Scan | None:
        """List what changed since the last listing, and tell it (``turn_id``: the turn about
        to take its checkpoint, which ends the following, from the scan this returns: what a
        command writes after it is that turn's). Between turns it goes on while a command
        still runs, unless ``end``: the session closes, or ``/undo`` is about to put files
        back (what they change after it is not listed: no turn's checkpoint holds the files
        as /undo leaves them)."""
        async with self._lock:
            watch = self._watch
            if watch is None:
                return None
            files = await _finished(watch)
            running = self.commands.running_commands()
            ran = tuple(dict.fromkeys([*self._ran, *running]))
            going_on = bool(running) and not turn_id and not end
            self._watch = watch if going_on else None
            self._ran = tuple(running) if going_on else ()
            undo_with = 0
            try:
                await asyncio.to_thread(
                    self.checkpoints.drop_if_unchanged, watch.turn_id, watch.seen, keep=going_on
                )
                if self.checkpoints.last_of(watch.turn_id) is not None:
                    undo_with = self._position
            except OSError as exc:
                log.warning("checkpoint of turn %s not checked: %s", watch.turn_id, exc)
            if files:
                await self._tell(turn_id, undo_with, ran, files)
            return watch.scan

    async def list_in_turn(
        self, watch: FileWatch, turn_id: str, position: int, ran: Sequence[str]
    ) -> None:
        """Before a request of turn ``position``, whose last block (listed by ``watch``) left
        ``ran`` running: what changed since that listing, told now rather than as the next
        block's changes (what changes while a block runs is that block's: no listing can
        tell)."""
        async with self._lock:
            files = await _finished(watch)
            if files:
                undo_with = position if self.checkpoints.last_of(turn_id) is not None else 0
                await self._tell(turn_id, undo_with, tuple(dict.fromkeys(ran)), files)

    async def _tell(
        self, turn_id: str, undo_with: int, ran: tuple[str, ...], files: tuple[FileChange, ...]
    ) -> None:
        """Tell ``files`` with the first :data:`NAMED_COMMANDS` of ``ran``, each one line, and
        how many more: a block may start thousands, each as long as a shell takes (stored,
        shown and sent to the model with every listing)."""
        named = tuple(one_line(command, PREVIEW) for command in ran[:NAMED_COMMANDS])
        changed = BackgroundFilesChanged(
            self.session_id,
            turn_id=turn_id,
            undo_with=undo_with,
            commands=named,
            files=files,
            more=len(ran) - len(named),
        )
        await self.emit(changed)


async def _finished(watch: FileWatch) -> tuple[FileChange, ...]:
    """What changed since ``watch`` last listed (nothing when it could not be read)."""
    try:
        return await asyncio.to_thread(watch.finish)
    except OSError as exc:
        log.warning("files changed in the background not read: %s", exc)
        return ()
