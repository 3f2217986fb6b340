"""Garbage collection on the person's time: full collections wait for a pause in their input
and in the answer streaming in.

A full collection of a long session's widgets takes tens of milliseconds. Python runs one
whenever enough objects have survived, which is often in the middle of a key press (PageUp
through a long transcript). The app instead runs young collections as usual, runs the full
one once input has paused, and keeps Python's own trigger only as a distant backstop.
"""

from __future__ import annotations

import gc
import time

IDLE_AFTER = 1.0  # seconds without input before a pending full collection runs
CHECK_EVERY = 0.5  # seconds between looks
BACKSTOP = 1000  # middle-generation collections before Python runs a full one regardless


class IdleCollector:
    """Defers full collections to moments without input; :meth:`close` restores Python's."""

    def __init__(self, idle_after: float = IDLE_AFTER) -> None:
        self.idle_after = idle_after
        self.last_input = time.monotonic()
        self._thresholds = gc.get_threshold()
        self._active = False

    @property
    def pending(self) -> bool:
        """Python would have run a full collection by now (its own third threshold)."""
        return gc.get_count()[2] >= self._thresholds[2]

    def start(self) -> None:
        """Move what exists now (the restored session) out of the collector's way."""
        gc.freeze()
        young, middle, _ = self._thresholds
        gc.set_threshold(young, middle, BACKSTOP)
        self._active = True

    def touch(self) -> None:
        """Input or answer text arrived: the person is waiting on the app or watching it."""
        self.last_input = time.monotonic()

    def tick(self) -> bool:
        """Run the pending full collection if input has paused; returns whether it ran.

        It covers what was set aside too (a session shown earlier and since closed would
        otherwise stay), then sets aside what survives."""
        if self._active and self.pending and time.monotonic() - self.last_input >= self.idle_after:
            gc.unfreeze()
            gc.collect()
            gc.freeze()
            return True
        return False

    def close(self) -> None:
        if self._active:
            self._active = False
            gc.set_threshold(*self._thresholds)
            gc.unfreeze()


def resume_after_start() -> None:
    """Turn the collector on again: ``vis`` starts the app with it off (vis_core/cli.py), as
    what the imports and the Host make lives as long as the app. That is set aside first
    (a later full collection at idle still covers it)."""
    gc.freeze()
    gc.enable()
