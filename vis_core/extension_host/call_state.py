"""What the calls of one open session share: the extensions waiting on its turn, the images
shown to its model with the running call's result."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterable, Iterator
from contextlib import contextmanager


class SessionCallState:
    """Per open session (its kit makes one; it goes with the session): who waits on its turn
    and which stored images go with the result of its running call.

    An extension's calls run one at a time, under its lock in its worker. A call that holds
    the lock and waits on Vis (``vis.tools``, a turn through ``vis.run``) must not be
    answered by a call back into the same extension: that call would wait on the lock
    forever. ``callers`` (of a call's
    context) names the extensions waiting on that call; :meth:`awaiting_turn` names those
    waiting on this session's turn.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._awaited: Counter[str] = Counter()
        self._shown: list[str] = []

    @contextmanager
    def awaiting_turn(self, owners: Iterable[str]) -> Iterator[None]:
        """Mark ``owners`` as waiting on this session's running turn for the body."""
        names = [name for name in dict.fromkeys(owners) if name and name != "vis"]
        with self._lock:
            self._awaited.update(names)
        try:
            yield
        finally:
            with self._lock:
                self._awaited.subtract(names)
                self._awaited = +self._awaited

    def refuse_waiting(self, owner: str, name: str) -> None:
        """Refuse a call of tool ``name`` of ``owner`` while ``owner`` waits on this session's
        turn; raise ``RuntimeError`` saying why."""
        with self._lock:
            waiting = self._awaited[owner] > 0
        if waiting:
            raise RuntimeError(
                f"{name} was refused: its extension {owner!r} waits for this session's turn to "
                "end (it started the turn with vis.run or Session.run), so a call back into it "
                "would never return. Answer without this tool"
            )

    def show(self, attachment_id: str) -> None:
        """Show a stored image of the session with the result of its running call (a direct
        tool's result is presented after its call ended, outside any call context)."""
        with self._lock:
            self._shown.append(attachment_id)

    def take_shown(self) -> list[str]:
        """The ids :meth:`show` queued since the last call (cleared)."""
        with self._lock:
            shown, self._shown = self._shown, []
        return shown
