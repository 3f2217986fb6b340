"""The scrolling transcript: turns in order, system messages, and older pages loaded on scroll."""

from __future__ import annotations

import asyncio
import re
from typing import TYPE_CHECKING, TypeVar

from textual.binding import Binding
from textual.geometry import Size
from textual.layout import DockArrangeResult
from textual.message import Message
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Static

from vis_tui.widgets.steady_scroll import SteadyScroll

# The rows of turns are imported where first used, not with this module: the app's first
# frame (an empty transcript) does not wait for them.
if TYPE_CHECKING:
    from textual.widget import AwaitMount
    from textual.worker import Worker

    from vis_tui.block_context import BlockContext
    from vis_tui.history import PageLoader, StoredTurn, TurnPage
    from vis_tui.widgets.stored_turn import StoredTurnView
    from vis_tui.widgets.system_message import SystemMessage
    from vis_tui.widgets.turn import TurnView

LOAD_MARGIN = 3
PAGE_TURNS = 4  # turns mounted per step while paging: a step costs well under a frame budget
# Drawing the next page ahead, one turn at a time, off the key path: it starts once the frames
# of a page mount are out, and pauses a little between turns so keys pass first.
PREDRAW_AFTER_MOUNT = 0.06  # seconds
PREDRAW_STEP = 0.01  # seconds
MAX_MOUNTED_TURNS = 45  # the newest page or two, plus older pages read on the way up
WidgetType = TypeVar("WidgetType", bound=Widget)
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]<>()#+!|~])")


def escape_markdown(text: str) -> str:
    """``text`` shown literally inside Markdown (file names like ``__init__.py``)."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", text)


class PlainMessage(Static):
    """Plain text from Vis whose line breaks matter (e.g. how to configure a model)."""

    DEFAULT_CSS = """
    PlainMessage {
        border-left: outer $primary; padding: 0 1; margin-bottom: 1; background: $boost;
    }
    PlainMessage.error { border-left: outer $error; }
    PlainMessage.no-model, PlainMessage.warning { border-left: outer $warning; }
    """

    def __init__(self, text: str, *, classes: str = "") -> None:
        super().__init__(text, markup=False, classes=classes)
        self.source = text


class Transcript(SteadyScroll, can_focus=False):
    """Every turn of the session; only recent pages are mounted until the person scrolls up.

    It follows new output while pinned to the bottom (Textual's ``anchor()``): scrolling up
    releases the pin, reaching the bottom again, End, Ctrl+End or a new turn restores it."""

    max_turns = MAX_MOUNTED_TURNS
    # Keys while a row of the transcript has focus: none of them can be text (the screen
    # sends every printable key to the prompt).
    BINDINGS = [
        Binding("up", "move(-1)", "Previous Activity", show=False),
        Binding("down", "move(1)", "Next Activity", show=False),
        Binding("escape", "leave", "Back to the prompt", show=False),
        Binding("end", "pin", "Follow the newest output", show=False),
    ]

    def __init__(self, context: BlockContext, *, id: str | None = None) -> None:
        self._pinned = False
        self._overflows = False
        super().__init__(id=id)
        self.context = context
        self.turns: dict[str, TurnView | StoredTurnView] = {}
        self.loader: PageLoader | None = None
        self.has_older = False
        self._oldest_position: int | None = None
        self._loading = False
        self._to_top = False  # Ctrl+Home pages up to the first turn
        self._store_has_older = False  # the store has turns before the oldest it gave
        # Stored turns of mounted views, and those unmounted above (oldest first) and below
        # (newest first): the turns nearest the mounted ones are last in both.
        self._stored: dict[str, StoredTurn] = {}
        self._above: list[StoredTurn] = []
        self._below: list[StoredTurn] = []
        self._fetching = False  # a thread reads the next older store page
        self._ready: dict[str, StoredTurnView] = {}  # the next older page, drawn ahead
        self._predraw_timer: Timer | None = None
        self._generation = 0  # bumped when paging restarts; a stale fetch is dropped
        # the newest page and what was mounted after it, hidden until its turns are drawn
        self._hidden: list[Widget] | None = None

    @property
    def has_newer(self) -> bool:
        """Newer turns were unmounted to keep the transcript light; scrolling down reloads them."""
        return bool(self._below)

    def on_mount(self) -> None:
        self.anchor()

    # Textual's compositor reads ``_anchored`` right after ``arrange``: a transcript shorter
    # than its window is not held to the bottom, so short content starts at the top. No
    # public API says "anchor once it overflows"; ``anchor()`` lifts a release itself.
    # Private to Textual: textual is pinned to the tested minor release in pyproject.toml and
    # tests/tui/test_textual_hooks.py fails when a release stops reading or setting it.
    @property
    def _anchored(self) -> bool:  # pyright: ignore[reportIncompatibleVariableOverride]
        return self._pinned and self._overflows

    @_anchored.setter
    def _anchored(self, value: bool) -> None:  # pyright: ignore[reportIncompatibleVariableOverride]
        self._pinned = value
        if value:  # anchor(): Textual's scroll_end lifts a release only while we overflow
            self._anchor_released = False

    @property
    def following(self) -> bool:
        """Whether the view follows the newest output: pinned to the end, and not released
        since by the person scrolling up (Textual keeps the pin through a release)."""
        return self._pinned and not self._anchor_released

    def release_anchor(self) -> None:
        """Scrolling up releases the pin; a transcript that fits its window has nothing to
        scroll, so a PageUp there leaves the next output followed."""
        if self._overflows:
            super().release_anchor()

    def arrange(self, size: Size, optimal: bool = False) -> DockArrangeResult:
        result = super().arrange(size, optimal)
        height = self.container_size.height - self.scrollbar_size_horizontal
        self._overflows = result.spatial_map.total_region.bottom > height
        return result

    # -- keys ----------------------------------------------------------------------------
    def stops(self) -> list[Widget]:
        """What ↑/↓ move between: Activities that open, folded pastes, and stored turns (they
        open on focus)."""
        return [
            widget
            for widget in self.query("ActivityRow, FoldRow, RequestLine, BlockRow, StoredTurnView")
            if widget.focusable and widget.display
        ]

    def action_move(self, step: int) -> None:
        from vis_tui.widgets.stored_turn import StoredTurnView

        stops = self.stops()
        if not stops:
            return
        focused = self.screen.focused
        chain = (focused, *focused.ancestors) if focused is not None else ()
        current = next((w for w in chain if isinstance(w, Widget) and w in stops), None)
        index = stops.index(current) + step if current is not None else 0
        if 0 <= index < len(stops):
            stop = stops[index]
            if isinstance(stop, StoredTurnView):
                stop.focused_going_back = step < 0
            stop.focus()

    def action_leave(self) -> None:
        self.post_message(self.Leave())

    def action_pin(self) -> None:
        self.show_newest()
        self.anchor()

    class Leave(Message):
        """The person left the transcript (Esc): the prompt takes the keyboard."""

    # -- building ------------------------------------------------------------------------
    def clear(self, keep: Widget | None = None) -> None:
        """Remove every row (but ``keep``, e.g. a welcome header painted before the session
        opened) and forget the pages read."""
        self._generation += 1
        self._hidden = None  # a page still being drawn is not shown; new turns show at once
        self.turns.clear()
        self.has_older = False
        self._oldest_position = None
        self._store_has_older = False
        self._stored.clear()
        self._above.clear()
        self._below.clear()
        self._ready.clear()
        self.remove_children([child for child in self.children if child is not keep])

    def add_turn(self, turn_id: str, position: int, request: str) -> TurnView:
        from vis_tui.widgets.turn import TurnView
        from vis_tui.widgets.welcome import WelcomeHeader

        self.show_newest(turn_id)  # a new turn goes after the newest: bring those back first
        self.query(WelcomeHeader).remove()  # the conversation takes its place
        view = TurnView(turn_id, position, request, self.context)
        self.turns[turn_id] = view
        if self._hidden is not None:  # after the newest page, shown with it
            view.display = False
            self._hidden.append(view)
        self.mount(view)
        self.anchor()  # a new turn follows its output again
        self._trim_oldest()
        return view

    def ended_position(self, turn_id: str) -> int | None:
        """The position of ended turn ``turn_id``, shown or paged away; None while it runs,
        or when the transcript does not have it."""
        view = self.turns.get(turn_id)
        if view is not None:
            return view.position if view.status is not None else None
        kept = (turn for turn in (*self._above, *self._below) if turn.turn_id == turn_id)
        return next((turn.position for turn in kept), None)

    def keep_ended(self, turn: StoredTurn) -> None:
        """The store's copy of ended turn ``turn``, read at its end or after a later change (a
        command it left running): paging unmounts a turn of this run and mounts it again
        from that copy, as it does a stored turn."""
        view = self.turns.get(turn.turn_id)
        if view is not None:
            if view.status is not None and view.parent is self:
                self._stored[turn.turn_id] = turn
            return
        self._ready.pop(turn.turn_id, None)  # drawn from the copy it replaces
        for kept in (self._above, self._below):
            for index, old in enumerate(kept):
                if old.turn_id == turn.turn_id:
                    kept[index] = turn

    def _trim_oldest(self) -> None:
        """Unmount the oldest turns past :attr:`max_turns` that the store can rebuild (kept
        above: scrolling up mounts them again), so a long run stays as light as a resumed
        one. Only as a new turn starts: the view follows it, far below them."""
        if self._loading or self._hidden is not None:
            return
        mounted = self._mounted_turns()
        excess = len(mounted) - self.max_turns
        oldest = self._trimmable(mounted)[:excess] if excess > 0 else []
        if not oldest:
            return
        self._above.extend(self._stored[view.turn_id] for view in oldest)
        self.has_older = True
        self._forget(oldest)
        self.remove_children(oldest)

    def shown_turn(self, turn_id: str) -> TurnView | None:
        """The view of ``turn_id`` for what was said of a turn that may have ended (a fold, a
        background command); None when its stored turn is paged away: the store has what was
        said, and the turn shows it when it comes back."""
        if turn_id not in self.turns and any(
            turn.turn_id == turn_id for turn in (*self._above, *self._below)
        ):
            return None
        return self.turn(turn_id)

    def turn(self, turn_id: str) -> TurnView:
        """The view of ``turn_id``; a turn whose start was not seen gets an empty request."""
        from vis_tui.widgets.stored_turn import StoredTurnView

        view = self.turns.get(turn_id)
        if isinstance(view, StoredTurnView):
            return self.open_stored(view)
        return view if view is not None else self.add_turn(turn_id, 0, "")

    def add_message(
        self, text: str, *, classes: str = "", plain: bool = False, unprompted: bool = False
    ) -> SystemMessage | PlainMessage:
        """Add text from Vis itself: Markdown, or ``plain`` text kept line for line.

        It goes after the newest turns and brings them into view, as a new turn does; an
        ``unprompted`` one (said by Vis on its own, not answering the person) leaves a
        person reading earlier turns where they are: it waits at the end."""
        all_classes = f"system-message {classes}".strip()
        message: SystemMessage | PlainMessage
        if plain:
            message = PlainMessage(text, classes=all_classes)
        else:
            from vis_tui.widgets.system_message import SystemMessage

            message = SystemMessage(text, classes=all_classes)
        return self.add_after_turns(message, unprompted=unprompted)

    def add_after_turns(self, widget: WidgetType, *, unprompted: bool = False) -> WidgetType:
        """Mount ``widget`` after the newest turns, as :meth:`add_message` places its text."""
        if unprompted and (self._below or not self.following) and self._hidden is None:
            self.mount(widget)
            return widget
        self.show_newest()
        if self._hidden is not None:  # shown with the newest page
            widget.display = False
            self._hidden.append(widget)
        self.mount(widget)
        self.anchor()
        self.scroll_end(animate=False, immediate=False)
        return widget

    def _stored_view(self, turn: StoredTurn) -> StoredTurnView | TurnView:
        # a turn and what /undo said after it, or a !command with its output shown: the
        # full turn, as it was shown live
        from vis_tui.widgets.stored_turn import StoredTurnView
        from vis_tui.widgets.turn import is_person_command

        if turn.notes_after or is_person_command(turn.request):
            self._ready.pop(turn.turn_id, None)
            self._stored[turn.turn_id] = turn
            return self._full_turn(turn)
        show_steps = self.context.show_steps()
        view = self._ready.pop(turn.turn_id, None)
        if view is None or view.show_steps != show_steps:
            view = StoredTurnView(turn, show_steps=show_steps)
        self.turns[turn.turn_id] = view
        self._stored[turn.turn_id] = turn
        return view

    def open_stored(self, view: StoredTurnView) -> TurnView:
        """Put a full :class:`TurnView` (rows that open, pressable paths) in place of ``view``."""
        full = self._full_turn(view.stored)
        if view.parent is self:
            self.mount(full, after=view)
            view.remove()
        return full

    def _full_turn(self, turn: StoredTurn) -> TurnView:
        from vis_core.model.turn import TurnStatus
        from vis_tui.history import PartKind
        from vis_tui.widgets.turn import TurnView

        full = TurnView(turn.turn_id, turn.position, turn.request, self.context)
        for part in turn.parts():  # in the order they were shown live
            if part.kind is PartKind.REPLY:
                full.add_stored_answer(part.text)
            elif part.kind is PartKind.NOTE:
                full.show_note(part.text, part.style)
            elif part.kind is PartKind.FOLD and part.fold is not None:
                full.show_fold(part.fold)
            elif part.kind is PartKind.BLOCK:
                if part.block is not None:
                    full.show_block(part.block)
            else:
                for record in part.activities:
                    full.show_activity(record)
        full.end(turn.status or TurnStatus.COMPLETED, turn.error)
        if turn.notes_after:
            from vis_tui.widgets.after_turn import (
                AfterTurnBackgroundFilesNote,
                AfterTurnBackgroundNote,
                AfterTurnFold,
            )
            from vis_tui.widgets.system_message import AfterTurnNote

            for note in turn.notes_after:
                if note.fold is not None:  # made by /compact after the turn
                    full.add_after(AfterTurnFold(note.fold))
                    continue
                if note.files:  # files changed while a command left running ran
                    full.add_after(AfterTurnBackgroundFilesNote(note.text, note.files))
                    continue
                if note.background:  # a command left running ended after the turn
                    full.add_after(AfterTurnBackgroundNote(note.text))
                    continue
                classes = "system-message error" if note.error else "system-message"
                full.add_after(AfterTurnNote(note.text, classes=classes))
        self.turns[turn.turn_id] = full
        return full

    async def on_stored_turn_view_open(self, message: StoredTurnView.Open) -> None:
        """A click on (or focus of) a stored turn: the full turn, its clicked row opened."""
        from vis_tui.widgets.activity import ActivityRow
        from vis_tui.widgets.fold_row import FoldRow
        from vis_tui.widgets.stored_turn import BLOCK_HIT, FOLD_HIT

        message.stop()
        view = message.view
        if self.turns.get(view.turn_id) is not view or view.parent is not self:
            return
        full = self._full_turn(view.stored)
        await self.mount(full, after=view)
        if (message.record_id or "").startswith(FOLD_HIT):
            folds = list(full.query(FoldRow))
            fold = folds[int(message.record_id[len(FOLD_HIT) :])]  # type: ignore[index]
            self.screen.set_focus(fold, scroll_visible=False)
            fold.action_open_close()
            await view.remove()
            return
        record_id = message.record_id or ""
        row: Widget | None = full.rows.get(record_id)
        if record_id.startswith(BLOCK_HIT):
            block = full.blocks.get(record_id[len(BLOCK_HIT) :])
            if block is not None:
                self.screen.set_focus(block, scroll_visible=False)
                block.action_open_close()
            await view.remove()
            return
        if row is None:  # reached by the keyboard: the first (or, going back, last) stop
            stops = [
                w for w in full.query("ActivityRow, FoldRow, BlockRow") if w.can_focus and w.display
            ]
            row = (stops[-1] if message.at_end else stops[0]) if stops else None
        if row is not None:
            self.screen.set_focus(row, scroll_visible=False)  # now: the view goes next
            if message.record_id is not None and isinstance(row, ActivityRow):
                row.action_open_close()
            else:
                self.call_after_refresh(row.scroll_visible, animate=False)
        await view.remove()

    def _mounted_turns(self) -> list[TurnView | StoredTurnView]:
        from vis_tui.widgets.stored_turn import StoredTurnView
        from vis_tui.widgets.turn import TurnView

        return [child for child in self.children if isinstance(child, (TurnView, StoredTurnView))]

    def _forget(self, views: list[TurnView | StoredTurnView]) -> None:
        """Drop ``views`` from the turns shown (the caller unmounts them)."""
        for view in views:
            self.turns.pop(view.turn_id, None)
            self._stored.pop(view.turn_id, None)

    def _trimmable(self, views: list[TurnView | StoredTurnView]) -> list[TurnView | StoredTurnView]:
        """The leading run of ``views`` that can be rebuilt from the store (ended, stored)."""
        run: list[TurnView | StoredTurnView] = []
        for view in views:
            if view.turn_id not in self._stored or view.status is None:
                break
            run.append(view)
        return run

    # -- paging --------------------------------------------------------------------------
    async def load_initial(self, loader: PageLoader) -> None:
        self.loader = loader
        page = await asyncio.to_thread(loader, None)  # SQLite: off the loop
        if page.notes_before:  # what commands said before the first turn, as it was shown
            from vis_tui.widgets.system_message import SystemMessage

            await self.mount_all(
                [
                    SystemMessage(note.text, classes="system-message" + " error" * note.error)
                    for note in page.notes_before
                    # a fold and a command's end need a turn before them: none is made here
                    if note.fold is None and not note.background
                ]
            )
        if page.turns:
            views = [self._stored_view(turn) for turn in page.turns]
            await self._mount_hidden(views)
            await self._show_drawn([*views])
            self._oldest_position = page.turns[0].position
        self._store_has_older = self.has_older = page.has_older
        self.scroll_end(animate=False, immediate=False)

    def _mount_hidden(
        self,
        views: list[StoredTurnView | TurnView],
        *,
        before: int | Widget | None = None,
        after: Widget | None = None,
    ) -> AwaitMount:
        """Mount ``views`` (after every child, unless ``before`` or ``after`` say where),
        styled (for their lines drawn ahead) but not placed yet: :meth:`_show_drawn` shows
        them."""
        for view in views:
            view.display = False
        return self.mount_all(views, before=before, after=after)

    async def _show_drawn(self, hidden: list[Widget]) -> None:
        """Show a newest page mounted hidden with its stored turns' lines drawn first, one
        turn per step of the loop (the newest first): keys and frames go on meanwhile, and the
        layout that shows them only places them. Drawn by that layout, they froze the app
        for as long as all of them took, twice: before the scrollbar showed, and after.
        ``hidden``: the page's views, then what is mounted after them meanwhile (a new turn,
        :meth:`add_turn` appends it), shown with them."""
        from vis_tui.widgets.stored_turn import StoredTurnView

        stored = [view for view in hidden if isinstance(view, StoredTurnView)]
        # their width once they fill the window: beside the scrollbar (shown now or not: the
        # turns a new page replaces had it, and the layout after their removal hides it)
        shown = self.scrollbar_size_vertical if self.show_vertical_scrollbar else 0
        bar = self.styles.scrollbar_size_vertical
        spare = stored[0].styles.gutter.width + stored[0].styles.margin.width if stored else 0
        width = self.scrollable_content_region.width + shown - bar - spare
        generation = self._generation
        self._hidden = hidden
        self._loading = True  # no paging meanwhile
        try:
            if stored and width > 0:
                painter, height = stored[-1], 0
                for view in reversed(stored):
                    height += view.height_at(width, painter) + view.styles.margin.bottom
                    await asyncio.sleep(0)  # keys and frames between two turns
                    if generation != self._generation:
                        return  # cleared meanwhile (another session shown)
                if height > self.container_size.height:
                    self.show_vertical_scrollbar = True  # the layout places them at that width
            for view in hidden:
                view.display = True
        finally:
            self._loading = False
            if self._hidden is hidden:
                self._hidden = None

    async def _older_page(self) -> list[StoredTurn]:
        if not self._above:  # not read ahead (:meth:`_prefetch`): read now, in a thread
            assert self.loader is not None
            before, generation = self._oldest_position, self._generation
            loaded = await asyncio.to_thread(self.loader, before)
            if generation != self._generation:
                return []  # cleared meanwhile (another session shown)
            if self._oldest_position == before:  # not taken by a prefetch meanwhile
                self._take(loaded)
        count = min(PAGE_TURNS, len(self._above))
        page = self._above[len(self._above) - count :]
        del self._above[len(self._above) - count :]
        return page

    def _take(self, loaded: TurnPage) -> None:
        """Keep an older store page's turns above, to be mounted by the next steps."""
        self._store_has_older = loaded.has_older
        if loaded.turns:
            self._oldest_position = loaded.turns[0].position
        self._above[:0] = loaded.turns  # older than every turn kept above

    def _prefetch(self) -> None:
        """Read the next older store page in a thread before paging needs it."""
        if (
            self._fetching
            or self.loader is None
            or len(self._above) >= 2 * PAGE_TURNS  # the next page, and the one after it
            or not self._store_has_older
        ):
            return
        self._fetching = True
        loader, before, generation = self.loader, self._oldest_position, self._generation

        def fetch() -> None:
            try:
                page = loader(before)
            except Exception:  # the next step reads it again, in the open
                page = None
            self.app.call_from_thread(done, page)

        def done(page: TurnPage | None) -> None:
            self._fetching = False
            if page is not None and generation == self._generation:
                if self._oldest_position == before:
                    self._take(page)
                    if self._predraw_timer is None:
                        self._schedule_predraw(PREDRAW_STEP)

        self.run_worker(fetch, thread=True, group="prefetch")

    async def load_older(self) -> int:
        """Mount the page of turns before the oldest mounted one; returns how many.

        Past :attr:`max_turns` mounted, the newest turns are unmounted (scrolling down
        mounts them again), so paging stays as fast at turn 2,000 as at turn 20."""
        if self.loader is None or not self.has_older or self._loading:
            return 0
        self._loading = True
        try:
            page = await self._older_page()
            self.has_older = bool(self._above) or self._store_has_older
            if not page:
                return 0
            mounted = self._mounted_turns()
            views = [self._stored_view(turn) for turn in page]
            excess = len(mounted) + len(views) - self.max_turns
            newest = self._trimmable(list(reversed(mounted)))[:excess] if excess > 0 else []
            self._below.extend(self._stored[view.turn_id] for view in newest)
            await self._repage(views, [], newest)
            self._prefetch()
            self._schedule_predraw(PREDRAW_AFTER_MOUNT)
            return len(views)
        finally:
            self._loading = False

    async def load_oldest(self) -> None:
        """Show the session's first turn (Ctrl+Home): the store's older pages are read off
        the loop, the first page is mounted in place of the turns shown (kept below, mounted
        again on the way down), then the view goes to the top. While a turn shown cannot be
        rebuilt from the store (one of this run), every page is mounted on the way up."""
        mounted = self._mounted_turns()
        if self.loader is not None and not self._loading and self._trimmable(mounted) == mounted:
            await self._jump_to_oldest(mounted)
        else:
            self._to_top = True  # the scroll of each step starts no paging of its own
            try:
                while self.has_older and await self.load_older():
                    pass
            finally:
                self._to_top = False
        self.scroll_home(animate=False)

    async def _jump_to_oldest(self, mounted: list[TurnView | StoredTurnView]) -> None:
        """Mount the first page in place of ``mounted`` (all rebuildable from the store)."""
        assert self.loader is not None
        self._loading = True
        try:
            generation = self._generation
            while self._store_has_older:
                before = self._oldest_position
                loaded = await asyncio.to_thread(self.loader, before)
                if generation != self._generation:
                    return  # cleared meanwhile (another session shown)
                if self._oldest_position == before:  # not taken by a prefetch meanwhile
                    self._take(loaded)
            if not self._above:
                return
            page, between = self._above[:PAGE_TURNS], self._above[PAGE_TURNS:]
            self._above = []
            self.has_older = False
            # kept below newest first: the turns shown, then those between them and the page
            self._below.extend(self._stored[view.turn_id] for view in reversed(mounted))
            self._below.extend(reversed(between))
            await self._repage([self._stored_view(turn) for turn in page], [], mounted)
            self._schedule_predraw(PREDRAW_AFTER_MOUNT)
        finally:
            self._loading = False

    async def load_newer(self) -> int:
        """Mount again the turns unmounted below; the oldest ones go above. Returns how many."""
        if not self._below or self._loading:
            return 0
        self._loading = True
        try:
            count = min(PAGE_TURNS, len(self._below))
            page = [self._stored_view(turn) for turn in reversed(self._below[-count:])]
            del self._below[-count:]
            mounted = self._mounted_turns()
            excess = len(mounted) + len(page) - self.max_turns
            oldest = self._trimmable(mounted)[:excess] if excess > 0 else []
            self._above.extend(self._stored[view.turn_id] for view in oldest)
            self.has_older = bool(self._above) or self._store_has_older
            await self._repage([], page, oldest)
            self._schedule_predraw(PREDRAW_AFTER_MOUNT)
            return len(page)
        finally:
            self._loading = False

    async def _repage(
        self,
        above: list[StoredTurnView | TurnView],
        below: list[StoredTurnView | TurnView],
        removed: list[TurnView | StoredTurnView],
    ) -> None:
        """Mount ``above`` first and ``below`` after the newest turn kept, unmount ``removed``:
        one layout, nothing in view moves."""
        kept = [view for view in self._mounted_turns() if view not in removed]
        self._forget(removed)
        painter = self._painter()

        from vis_tui.widgets.stored_turn import StoredTurnView

        def height_of(widget: Widget) -> int | None:
            if painter is None or not isinstance(widget, StoredTurnView):
                return None
            return widget.height_at(painter.content_size.width, painter)

        await self.swap_children(
            above, below, removed, after=kept[-1] if kept else None, height_of=height_of
        )

    def _painter(self) -> StoredTurnView | None:
        """A mounted stored turn in the plain style of stored turns (not focused or hovered)."""
        from vis_tui.widgets.stored_turn import StoredTurnView

        return next(
            (
                child
                for child in self.children
                if isinstance(child, StoredTurnView)
                and child.content_size.width
                and not child.has_focus
                and not child.mouse_hover
            ),
            None,
        )

    def _schedule_predraw(self, delay: float) -> None:
        """Draw ahead ``delay`` seconds from now (a later call moves it, never adds one)."""
        if self._predraw_timer is not None:
            self._predraw_timer.stop()
        waiting = self._above or self._below
        self._predraw_timer = self.set_timer(delay, self._predraw) if waiting else None

    def _predraw(self) -> None:
        """Draw the next older and newer pages' turns ahead, one per idle moment, so the
        layout that mounts them (on PageUp or PageDown) only places them."""
        self._predraw_timer = None
        painter = self._painter()
        nearest = [*self._below[-PAGE_TURNS:], *self._above[-PAGE_TURNS:]]  # nearest last
        page = {turn.turn_id: turn for turn in nearest}
        for turn_id in [t for t in self._ready if t not in page]:
            del self._ready[turn_id]
        if painter is None:
            return
        waiting = [turn for turn_id, turn in page.items() if turn_id not in self._ready]
        if waiting:
            from vis_tui.widgets.stored_turn import StoredTurnView

            turn = waiting[-1]  # the nearest first: the next page mounts it first
            view = StoredTurnView(turn, show_steps=self.context.show_steps())
            view.predraw(painter.content_size.width, painter)
            self._ready[turn.turn_id] = view
            self._schedule_predraw(PREDRAW_STEP)

    def show_newest(self, starting: str | None = None) -> Worker[None] | None:
        """Back to the newest page after paging far up (Ctrl+End, or a new turn starting):
        read in a thread, mounted where the turns it replaces were (a new turn mounted
        meanwhile stays after it), and shown once its turns are drawn (:meth:`_show_drawn`).
        ``starting``: the new turn's id; the store already has it, and its live view shows
        it. Returns the worker that shows it (None: the newest page shows already)."""
        if not self._below or self.loader is None:
            return None
        mounted = self._mounted_turns()
        children = list(self.children)
        first = children.index(mounted[0]) if mounted else len(children)
        # the page goes where the first of those turns was: after the row above it (a note
        # shown after the turns stays after them), or first
        above = children[first - 1] if first else None
        self._forget(mounted)
        self.remove_children(mounted)
        self._above.clear()
        self._below.clear()
        self._ready.clear()
        self._generation += 1
        loader, generation = self.loader, self._generation
        hidden: list[Widget] = []
        self._hidden = hidden  # a new turn (add_turn, next) shows with the page
        self._loading = True  # no paging from the scroll the removal resets

        async def show() -> None:
            try:
                page = await asyncio.to_thread(loader, None)  # SQLite: off the loop
                if generation != self._generation:
                    return  # cleared meanwhile (another session shown)
                views = [self._stored_view(turn) for turn in page.turns if turn.turn_id != starting]
                if above is not None and above.parent is self:
                    await self._mount_hidden(views, after=above)
                elif above is None and self.children:  # at the top, before what came since
                    await self._mount_hidden(views, before=0)
                else:  # its place went meanwhile: before a new turn, if any
                    await self._mount_hidden(views, before=hidden[0] if hidden else None)
                self._oldest_position = page.turns[0].position if page.turns else None
                self._store_has_older = self.has_older = page.has_older
                hidden[:0] = views
                await self._show_drawn(hidden)
            finally:
                self._loading = False
            self.scroll_end(animate=False, immediate=False)

        return self.run_worker(show(), group="newest")

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if self._loading or self._to_top:
            return
        if new_value < old_value and not self._above:
            self._prefetch()  # on the way up: the next older page is read and drawn ahead
        if new_value <= LOAD_MARGIN and new_value < old_value and self.has_older:
            self.run_worker(self.load_older(), group="page", exclusive=True)
        elif new_value >= self.max_scroll_y - LOAD_MARGIN and new_value > old_value and self._below:
            self.run_worker(self.load_newer(), group="page", exclusive=True)

    # -- reading -------------------------------------------------------------------------
    @property
    def last_answer(self) -> str:
        for view in reversed(self._mounted_turns()):
            if view.last_answer:
                return view.last_answer
        return ""

    def as_text(self) -> str:
        """The mounted transcript as plain text, for the clipboard."""
        from vis_tui.widgets.activity import ActivityRow
        from vis_tui.widgets.stored_turn import StoredTurnView
        from vis_tui.widgets.system_message import SystemMessage
        from vis_tui.widgets.turn import TurnView

        parts: list[str] = []
        for child in self.children:
            if isinstance(child, StoredTurnView):
                parts.append(f"> {child.request}")
                parts.extend(child.text_parts())
            elif isinstance(child, TurnView):
                parts.append(f"> {child.request}")
                for item in child.children:
                    if isinstance(item, ActivityRow):
                        parts.append(item.as_text())
                    elif isinstance(item, SystemMessage):  # a resumed turn's /undo note
                        parts.append(item.source)
                    elif isinstance(text := getattr(item, "text", None), str):
                        parts.append(text)
            elif isinstance(child, SystemMessage | PlainMessage):
                parts.append(child.source)
        return "\n\n".join(p for p in parts if p)
