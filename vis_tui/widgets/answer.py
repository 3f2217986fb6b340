"""A streamed answer: Markdown that coalesces deltas and re-renders at most ~20 times a second."""

from __future__ import annotations

from textual.widgets import Markdown

FLUSH_SECONDS = 0.05


class AnswerView(Markdown):
    """Answer text of one model response; deltas are buffered and flushed on a timer."""

    def __init__(self, text: str = "") -> None:
        super().__init__(text, classes="answer")
        self.text = text
        self._pending: list[str] = []
        self._flush_timer: object | None = None
        self._ready = False

    def add_delta(self, text: str) -> None:
        self.text += text
        self._pending.append(text)
        if self._flush_timer is None and self._ready:
            self._flush_timer = self.set_timer(FLUSH_SECONDS, self._flush)

    def on_mount(self) -> None:
        self._ready = True
        if self._pending and self._flush_timer is None:
            self._flush_timer = self.set_timer(FLUSH_SECONDS, self._flush)

    async def _flush(self) -> None:
        self._flush_timer = None
        if not self._pending:
            return
        chunk = "".join(self._pending)
        self._pending.clear()
        await self.append(chunk)

    def set_text(self, text: str) -> None:
        """The final text of the response (replaces what streamed when they differ)."""
        if text == self.text and not self._pending:
            return
        self.text = text
        self._pending.clear()
        self.update(text)
