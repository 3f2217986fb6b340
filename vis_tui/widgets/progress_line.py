"""The line above the prompt while a turn runs: elapsed time, what it is doing, tokens so far."""

from __future__ import annotations

import time

from textual.content import Content
from textual.reactive import reactive
from textual.timer import Timer
from textual.widgets import Static

from vis_tui.widgets.spinner import SPINNER, is_frozen

TICK_SECONDS = 0.1
CHARS_PER_TOKEN = 4  # a streamed answer's tokens are estimated until the usage arrives


def elapsed_text(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 60}m {seconds % 60:02d}s" if seconds >= 60 else f"{seconds}s"


class ProgressLine(Static):
    """Hidden between turns; one line while a turn runs, ending with "Esc to interrupt"."""

    DEFAULT_CSS = "ProgressLine { height: 1; padding: 0 2; display: none; }"

    doing: reactive[str] = reactive("")

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("", id=id)
        self.started: float | None = None
        self.tokens = 0  # output tokens the model reported in this turn
        self.streamed = 0  # characters streamed since the last usage report
        self._timer: Timer | None = None

    def begin(self) -> None:
        self.started = time.monotonic()
        self.tokens = self.streamed = 0
        self.doing = "waiting for the model"
        self.display = True
        if self._timer is None and not is_frozen(self):
            self._timer = self.set_interval(TICK_SECONDS, self.refresh)
        self.refresh()

    def end(self) -> None:
        self.started = None
        self.display = False
        if self._timer is not None:
            self._timer.stop()
            self._timer = None

    def streamed_text(self, text: str) -> None:
        self.streamed += len(text)
        self.doing = "writing the answer"

    def add_output_tokens(self, count: int) -> None:
        self.tokens += count
        self.streamed = 0

    @property
    def running(self) -> bool:
        return self.started is not None

    def render(self) -> Content:
        if self.started is None:
            return Content("")
        frozen = is_frozen(self)
        elapsed = 0.0 if frozen else time.monotonic() - self.started
        frame = 0 if frozen else int(elapsed / TICK_SECONDS)
        tokens = self.tokens + self.streamed // CHARS_PER_TOKEN
        sep = ("  ·  ", "$text-muted")
        head = Content.assemble((SPINNER[frame % len(SPINNER)], "$text-accent"), " ")
        head += Content.styled(self.doing, "bold")
        tail = Content.assemble(sep, ("Esc to interrupt", "$text-muted"))
        # Where narrow, "Esc to interrupt" stays (cut at the end, it went first): the tokens
        # go, then the time, then what Vis is doing is cut short.
        figures = [(sep, elapsed_text(elapsed)), (sep, f"↓ {tokens:,} tokens")]
        width = self.content_size.width or 1_000
        while True:
            line = head + Content.assemble(*(part for pair in figures for part in pair)) + tail
            if line.cell_length <= width or not figures:
                break
            figures.pop()
        if line.cell_length > width:
            head = head.truncate(max(width - tail.cell_length, 3), ellipsis=True)
            line = head + tail
        return line
