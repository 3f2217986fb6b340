"""The scrolling transcript: turns in order, system messages, and older pages loaded on scroll."""

from __future__ import annotations

import re

from textual.containers import VerticalScroll
from textual.widget import Widget
from textual.widgets import Markdown, Static

from vis_core.events import TurnStatus
from vis_tui.history import PageLoader, StoredTurn
from vis_tui.widgets.activity import ActivityRow
from vis_tui.widgets.blocks import BlockContext
from vis_tui.widgets.plain import record_text
from vis_tui.widgets.turn import TurnView

LOAD_MARGIN = 3
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]<>()#+!|~])")


def escape_markdown(text: str) -> str:
    """``text`` shown literally inside Markdown (file names like ``__init__.py``)."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", text)


class SystemMessage(Markdown):
    """Text from Vis itself (command output, configuration help), not from the model."""


class PlainMessage(Static):
    """Plain text from Vis whose line breaks matter (e.g. how to configure a model)."""

    def __init__(self, text: str, *, classes: str = "") -> None:
        super().__init__(text, markup=False, classes=classes)
        self.source = text


class Transcript(VerticalScroll, can_focus=False):
    """Every turn of the session; only recent pages are mounted until the person scrolls up."""

    def __init__(self, context: BlockContext, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.context = context
        self.turns: dict[str, TurnView] = {}
        self.loader: PageLoader | None = None
        self.has_older = False
        self._oldest_position: int | None = None
        self._loading = False

    # -- building ------------------------------------------------------------------------
    def clear(self) -> None:
        self.turns.clear()
        self.has_older = False
        self._oldest_position = None
        self.remove_children()

    def add_turn(self, turn_id: str, position: int, request: str) -> TurnView:
        view = TurnView(turn_id, position, request, self.context)
        self.turns[turn_id] = view
        self.mount(view)
        self.scroll_end(animate=False, immediate=False)
        return view

    def turn(self, turn_id: str) -> TurnView:
        """The view of ``turn_id``; a turn whose start was not seen gets an empty request."""
        view = self.turns.get(turn_id)
        return view if view is not None else self.add_turn(turn_id, 0, "")

    def add_message(
        self, text: str, *, classes: str = "", plain: bool = False
    ) -> SystemMessage | PlainMessage:
        """Add text from Vis itself: Markdown, or ``plain`` text kept line for line."""
        all_classes = f"system-message {classes}".strip()
        message: SystemMessage | PlainMessage = (
            PlainMessage(text, classes=all_classes)
            if plain
            else SystemMessage(text, classes=all_classes)
        )
        self.mount(message)
        self.scroll_end(animate=False, immediate=False)
        return message

    def follow(self) -> None:
        """Keep the newest output in view while the person has not scrolled away."""
        if self.max_scroll_y - self.scroll_y <= 3:
            self.scroll_end(animate=False, immediate=False)

    def _stored_view(self, turn: StoredTurn) -> TurnView:
        view = TurnView(turn.turn_id, turn.position, turn.request, self.context)
        self.turns[turn.turn_id] = view
        return view

    async def _fill(self, view: TurnView, turn: StoredTurn) -> None:
        # The store keeps replies apart from Activities: earlier replies, the work, the last reply.
        replies = list(turn.replies)
        last = replies.pop() if replies and turn.activities else None
        for reply in replies:
            view.add_stored_answer(reply)
        for record in turn.activities:
            view.show_activity(record)
        if last is not None:
            view.add_stored_answer(last)
        view.end(turn.status or TurnStatus.COMPLETED, turn.error)

    # -- paging --------------------------------------------------------------------------
    async def load_initial(self, loader: PageLoader) -> None:
        self.loader = loader
        page = loader(None)
        views = [self._stored_view(turn) for turn in page.turns]
        if views:
            await self.mount_all(views)
            for view, turn in zip(views, page.turns, strict=True):
                await self._fill(view, turn)
            self._oldest_position = page.turns[0].position
        self.has_older = page.has_older
        self.scroll_end(animate=False, immediate=False)

    async def load_older(self) -> int:
        """Mount the page of turns before the oldest mounted one; returns how many."""
        if self.loader is None or not self.has_older or self._loading:
            return 0
        self._loading = True
        try:
            page = self.loader(self._oldest_position)
            if not page.turns:
                self.has_older = False
                return 0
            first: Widget | None = self.children[0] if self.children else None
            views = [self._stored_view(turn) for turn in page.turns]
            before_height = self.virtual_size.height
            old_y = self.scroll_y
            await self.mount_all(views, before=first) if first else await self.mount_all(views)
            for view, turn in zip(views, page.turns, strict=True):
                await self._fill(view, turn)
            self._oldest_position = page.turns[0].position
            self.has_older = page.has_older

            def keep_place() -> None:
                added = self.virtual_size.height - before_height
                self.scroll_to(y=old_y + added, animate=False, immediate=True)

            self.call_after_refresh(keep_place)
            return len(views)
        finally:
            self._loading = False

    def watch_scroll_y(self, old: float, new: float) -> None:
        super().watch_scroll_y(old, new)
        if new <= LOAD_MARGIN and new < old and self.has_older and not self._loading:
            self.run_worker(self.load_older(), group="page", exclusive=True)

    # -- reading -------------------------------------------------------------------------
    @property
    def last_answer(self) -> str:
        for view in reversed(list(self.query(TurnView))):
            if view.last_answer:
                return view.last_answer
        return ""

    def as_text(self) -> str:
        """The mounted transcript as plain text, for the clipboard."""
        parts: list[str] = []
        for child in self.children:
            if isinstance(child, TurnView):
                parts.append(f"> {child.request}")
                for item in child.children:
                    if isinstance(item, ActivityRow):
                        parts.append(item.as_text())
                    elif hasattr(item, "text") and isinstance(item.text, str):
                        parts.append(item.text)
            elif isinstance(child, SystemMessage | PlainMessage):
                parts.append(child.source)
        return "\n\n".join(p for p in parts if p)

    def activity_text(self, row: ActivityRow) -> str:
        return record_text(row.record)
