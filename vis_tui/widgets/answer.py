"""A model's answer drawn as lines (:mod:`~vis_tui.widgets.answer_lines`): streamed deltas are
coalesced and shown at most ~20 times a second, less often when drawing gets slow, so keys
never wait behind a backlog of re-renders; a stored answer is the same widget, shown whole."""

from __future__ import annotations

import time
from typing import Any

from textual.geometry import Size
from textual.selection import Selection
from textual.strip import Strip
from textual.widget import Widget

from vis_tui.block_context import DEFAULT_PACING, AnswerPacing
from vis_tui.widgets.answer_lines import AnswerLines

IDLE_SECONDS = 0.05  # blocks above the view are drawn this long after a layout …
IDLE_BLOCKS = 8  # … this many at a time


class AnswerView(Widget):
    """Answer text of one model response; ``text`` is the truth, the lines catch up."""

    DEFAULT_CSS = "AnswerView { height: auto; margin: 1 0; padding: 0; }"

    def __init__(self, text: str = "", pacing: AnswerPacing = DEFAULT_PACING) -> None:
        super().__init__(classes="answer")
        self.text = text
        self.pacing = pacing
        self.lines = AnswerLines()
        self.lines.show(text)
        self._timer: Any = None
        self._idle_timer: Any = None
        self._ready = False
        self._rendering = False  # a re-render is on its way to the screen
        self._pause = pacing.flush_seconds
        self._complete = False  # the response ended: the rest goes out without a pause

    @property
    def source(self) -> str:
        """The text drawn so far."""
        return self.lines.shown

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
        pending = self.lines.shown != self.text
        if self._ready and pending and self._timer is None and not self._rendering:
            self._timer = self.set_timer(max(self._pause, 0.001), self._flush)

    def _flush(self) -> None:
        self._timer = None
        self._rendering = True
        started = time.perf_counter()
        text, shown = self.text, self.lines.shown
        most = self.pacing.slice
        if text.startswith(shown) and len(text) - len(shown) > most:
            cut = text.rfind("\n\n", len(shown), len(shown) + most)
            if cut > 0:
                text = text[: cut + 2]  # the rest in the next re-render
        self.lines.show(text)
        self.refresh(layout=True)
        self.call_after_refresh(self._rendered, started)

    def _rendered(self, started: float) -> None:
        """The re-render is on screen: pause in proportion to what it cost, then go on."""
        self._rendering = False
        if not self._complete:
            spent = time.perf_counter() - started
            self._pause = max(self.pacing.flush_seconds, self.pacing.pace * spent)
        elif self.lines.shown != self.text:
            self._pause = 0.0  # the rest of the backlog, slice by slice
        self._schedule()

    # -- drawing -------------------------------------------------------------------------
    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        if width <= 0:
            return 0
        # the end is drawn (a pinned view shows it); the blocks above are drawn when idle
        rows = viewport.height
        height = self.lines.height(width, self, self.visual_style, exact_rows=rows)
        self._draw_later()
        return height

    def render_line(self, y: int) -> Strip:
        width = self.content_size.width
        strip, resized = self.lines.line(y, width, self, self.visual_style)
        if resized:  # a block above the view was drawn at last and differs from its estimate
            self.call_later(self.refresh, layout=True)
        selection = self.text_selection
        span = selection.get_span(y) if selection is not None else None
        if span is not None:  # the mouse selection, highlighted as Textual's widgets do
            start, end = span
            end = strip.cell_length if end == -1 else min(end, strip.cell_length)
            if start < end:
                before, chosen, after = strip.divide([start, end, strip.cell_length])
                style = self.screen.get_component_rich_style("screen--selection")
                strip = Strip.join([before, chosen.apply_style(style), after])
        return strip.apply_offsets(0, y)  # where the mouse is, for a selection

    def get_selection(self, selection: Selection) -> tuple[str, str] | None:
        """The selected text: the answer's lines as drawn."""
        lines = self.lines.strips(self.content_size.width, self, self.visual_style)
        return selection.extract("\n".join(line.text.rstrip() for line in lines)), "\n"

    def selection_updated(self, selection: Selection | None) -> None:
        self.refresh()

    def _draw_later(self) -> None:
        if not self.lines.complete and self._idle_timer is None:
            self._idle_timer = self.set_timer(IDLE_SECONDS, self._draw_idle)

    def _draw_idle(self) -> None:
        """Draw a few blocks not drawn yet (between re-renders of the stream: it goes first)."""
        self._idle_timer = None
        width = self.content_size.width
        if width <= 0:
            return  # not shown: the next layout asks again
        if self._timer is not None or self._rendering:
            self._draw_later()
            return
        if self.lines.draw_some(IDLE_BLOCKS, width, self, self.visual_style):
            self.refresh(layout=True)
