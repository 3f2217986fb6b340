"""What a running block printed: committed a stretch at a time, then shown, so a killed Vis
keeps what its row showed."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import replace

from vis_core.agent.deps import BlockRunner
from vis_core.events import BlockPrinted, Event
from vis_core.sandbox.output import TailBuffer

log = logging.getLogger(__name__)

PRINTED_EVERY = 0.25  # seconds between two commits of what a running block printed
PRINTED_MOST = 4096  # characters of one stretch committed: all a running row draws from
# once a block committed this many characters, it commits every PRINTED_SLOW_EVERY seconds: a
# block printing without pause for 30 minutes stores about 3.9 MB, not 29 MB
PRINTED_BUDGET = 256 * 1024
PRINTED_SLOW_EVERY = 2.0


def printed_pause(committed: int) -> float:
    """Seconds to the next look at what a block printed, having committed ``committed``
    characters of it: a quick pace while it is short, a slow one once it is long (the row
    still moves; the store grows by at most ``PRINTED_MOST`` a slow look)."""
    return PRINTED_EVERY if committed < PRINTED_BUDGET else PRINTED_SLOW_EVERY


class PrintedOutput:
    """Every ``PRINTED_EVERY`` seconds while a block runs (slower once it printed much: see
    :func:`printed_pause`), what it printed since the last look becomes a
    :class:`BlockPrinted` event (its last ``PRINTED_MOST`` characters: a fast printer costs a
    few kilobytes a look, not a commit a line); :meth:`tail` shows only what was committed, as
    every event is shown."""

    def __init__(self, sandbox: BlockRunner, emit: Callable[[Event], Awaitable[None]]) -> None:
        self._sandbox = sandbox
        self._emit = emit
        self._shown: TailBuffer | None = None  # what was committed of the running block

    def tail(self, lines: int) -> str:
        """The last ``lines`` lines of what the running block printed and was committed."""
        return "" if self._shown is None else self._shown.tail(lines, PRINTED_MOST)

    @contextlib.asynccontextmanager
    async def following(self, printed: BlockPrinted) -> AsyncIterator[None]:
        """Commit what the block runs inside prints, as ``printed`` (its ids; no text)."""
        shown = self._shown = TailBuffer(PRINTED_MOST)
        task = asyncio.ensure_future(self._follow(printed, shown))
        try:
            yield
        finally:
            task.cancel()  # a commit under way goes on (the bus shields it)
            if self._shown is shown:
                self._shown = None

    async def _follow(self, printed: BlockPrinted, shown: TailBuffer) -> None:
        mark = committed = 0
        while True:
            await asyncio.sleep(printed_pause(committed))
            text, mark = self._sandbox.printed_since(mark, PRINTED_MOST)
            if not text:
                continue
            try:
                await self._emit(replace(printed, text=text))
            except Exception:  # not saved, so not shown; the block goes on
                log.exception("what block %s printed was not saved", printed.iteration_id)
                continue
            committed += len(text)
            shown.add(text)
