"""A streamed answer: Markdown that coalesces deltas and re-renders at most ~20 times a second,
less often when drawing it gets slow, so keys never wait behind a backlog of re-renders."""

from __future__ import annotations

import time
from typing import Any

from rich.markdown import Markdown as RichMarkdown
from textual.widgets import Markdown, Static

FLUSH_SECONDS = 0.05  # the shortest pause between two re-renders
PACE = 3  # a re-render that took t seconds (to its frame) is followed by a pause of PACE * t


class AnswerView(Markdown):
    """Answer text of one model response; ``text`` is the truth, the Markdown catches up."""

    DEFAULT_CSS = """
    AnswerView { margin: 1 0; padding: 0; }
    AnswerView > MarkdownBlock:last-child { margin-bottom: 0; }
    """

    def __init__(self, text: str = "") -> None:
        super().__init__(text, classes="answer")
        self.text = text
        self._shown = len(text)
        self._rewrite = False
        self._timer: Any = None
        self._ready = False
        self._rendering = False  # a re-render is on its way to the screen
        self._pause = FLUSH_SECONDS
        self._complete = False  # the response ended: the rest goes out without a pause

    def on_mount(self) -> None:
        self._ready = True
        self._schedule()

    def add_delta(self, text: str) -> None:
        self.text += text
        self._schedule()

    def set_text(self, text: str) -> None:
        """The final text of the response (replaces what streamed when they differ)."""
        if text != self.text:
            self.text = text
            self._rewrite = True
            self._schedule()

    def complete(self) -> None:
        """The response is over: show what is left now, not after the pacing pause."""
        self._complete = True
        self._pause = 0.0
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        self._schedule()

    def _schedule(self) -> None:
        pending = self._rewrite or self._shown != len(self.text)
        if self._ready and pending and self._timer is None and not self._rendering:
            self._timer = self.set_timer(max(self._pause, 0.001), self._flush)

    async def _flush(self) -> None:
        self._timer = None
        self._rendering = True
        started = time.perf_counter()
        text = self.text
        if self._rewrite or len(text) < self._shown:
            self._rewrite = False
            await self.update(text)
        elif len(text) > self._shown:
            await self.append(text[self._shown :])
        self._shown = len(text)
        self.call_after_refresh(self._rendered, started)

    def _rendered(self, started: float) -> None:
        """The re-render is on screen: pause in proportion to what it cost, then go on."""
        self._rendering = False
        if not self._complete:
            self._pause = max(FLUSH_SECONDS, PACE * (time.perf_counter() - started))
        self._schedule()


class StoredAnswer(Static):
    """A finished answer loaded from the store, rendered as one widget."""

    DEFAULT_CSS = "StoredAnswer { margin: 1 0; padding: 0; }"

    def __init__(self, text: str) -> None:
        super().__init__(RichMarkdown(text), classes="answer stored-answer")
        self.text = text
