"""Live views (``vis.live``): one widget per node kind, the view, the side panel, Esc to stop."""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from typing import Any

from rich.table import Table as RichTable
from rich.text import Text
from textual import on
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Button as TextualButton
from textual.widgets import Collapsible, Rule, Static

from vis_core.events import LiveClosed, LiveOpened, LiveUpdated
from vis_core.frontend import (
    Button,
    Code,
    Disclosure,
    Divider,
    Field,
    Group,
    Heading,
    Links,
    LiveEvent,
    LiveEventKind,
    LiveOp,
    LiveUpdate,
    Output,
    Progress,
    Spinner,
    SpinnerVariant,
    Stat,
    Status,
    Steps,
    Table,
    Tone,
    apply,
    find,
    from_plain,
    node_id,
    plural,
)
from vis_tui.event_map import handles
from vis_tui.keys import QUIT_KEY
from vis_tui.widgets.form import FieldWidget, layout_widget
from vis_tui.widgets.spinner import is_frozen

Send = Callable[[LiveEvent], None]
TONE_STYLE = {
    Tone.IDLE: "$text-muted",
    Tone.RUNNING: "$text-accent",
    Tone.OK: "$text-success",
    Tone.WARN: "$text-warning",
    Tone.ERROR: "$text-error",
    None: "",
}
TONE_MARK = {Tone.IDLE: "○", Tone.RUNNING: "●", Tone.OK: "✓", Tone.WARN: "!", Tone.ERROR: "✗"}
SPINNER_FRAMES = {
    SpinnerVariant.BRAILLE: "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏",
    SpinnerVariant.DOTS: "⣾⣽⣻⢿⡿⣟⣯⣷",
    SpinnerVariant.LINE: "-\\|/",
    SpinnerVariant.PULSE: "·•●•",
}
OUTPUT_SHOWN = 200


def _tone(tone: Tone | None) -> str:
    return TONE_STYLE.get(tone, "")


class NodeView(Static):
    """A node drawn as text; ``show(node)`` redraws it after an update."""

    frame = 0  # spinners turn it

    def __init__(self, node: Any) -> None:
        super().__init__(classes=f"live-node live-{type(node).__name__.lower()}")
        self.show(node)  # drawn now, so the first frame that holds the widget shows it

    def show(self, node: Any) -> None:
        self.node = node
        self.update(self.draw(node))

    def draw(self, node: Any) -> Any:
        if isinstance(node, Status):
            parts = [(f"{TONE_MARK[node.tone]} ", _tone(node.tone)), (node.text, "bold")]
            if node.detail:
                parts.append((f"  {node.detail}", "$text-muted"))
            return Content.assemble(*parts)
        if isinstance(node, Progress):
            return _progress(node, max(10, (self.size.width or 60) - 24))
        if isinstance(node, Stat):
            cells: list[Any] = []
            for i, item in enumerate(node.items):
                cells += [
                    (" · " if i else "", "$text-muted"),
                    (f"{item.label} ", "$text-muted"),
                    (str(item.value), "bold"),
                ]
            return Content.assemble(*cells)
        if isinstance(node, Steps):
            lines = []
            for item in node.items:
                line = Content.assemble(
                    (f"{TONE_MARK[item.tone]} ", _tone(item.tone)),
                    item.label,
                    (f"  {item.detail}" if item.detail else "", "$text-muted"),
                )
                lines.append(line)
            return Content("\n").join(lines)
        if isinstance(node, Table):
            return _table(node)
        if isinstance(node, Links):
            return Content("  ").join(
                Content.styled(link.label, f"underline $text-accent link {link.url!r}")
                for link in node.links
            )
        if isinstance(node, Code):
            from rich.syntax import Syntax  # Pygments: with the first code shown, not at start

            return Syntax(
                node.text,
                node.language or "text",
                theme="ansi_dark",
                background_color="default",
                word_wrap=True,
            )
        return Content(str(node))


def _progress(node: Progress, width: int) -> Content:
    label = f"{node.label} " if node.label else ""
    if node.total is None:
        state = "done" if node.done else f"{node.value:g}"
        return Content.assemble(
            label,
            (
                "━" * width if node.done else "╌" * width,
                "$text-success" if node.done else "$text-muted",
            ),
            f" {state}",
        )
    share = 1.0 if node.done else min(1.0, max(0.0, node.value / node.total))
    filled = round(share * width)
    colour = "$text-success" if node.done else "$accent"
    return Content.assemble(
        label,
        ("━" * filled, colour),
        ("━" * (width - filled), "$panel-lighten-2"),
        (f" {share:>4.0%}", "bold"),
        (f"  {node.value:g}/{node.total:g}", "$text-muted"),
    )


def _table(node: Table) -> RichTable:
    """The table, every column, cell and group label as ``Text``: they are the extension's data,
    and Rich reads a plain string as markup ('lint [/]' raised and ended the app)."""
    table = RichTable(
        box=None, expand=False, pad_edge=False, header_style="bold", padding=(0, 2, 0, 0)
    )
    for column in node.columns:
        table.add_column(Text(column))
    styles = {
        Tone.OK: "green",
        Tone.WARN: "yellow",
        Tone.ERROR: "red",
        Tone.RUNNING: "cyan",
        Tone.IDLE: "dim",
    }

    def add(rows: list[Any], depth: int = 0) -> None:
        for row in rows:
            cells = [str(c) for c in row.cells] + [""] * (len(node.columns) - len(row.cells))
            if depth and cells:
                cells[0] = "  " * (depth - 1) + "└ " + cells[0]
            style = styles.get(row.tone, "") if row.tone else ""
            if row.id == node.selected:
                style = f"{style} reverse".strip()
            table.add_row(*map(Text, cells), style=style or None)
            add([r for r in node.rows if r.parent == row.id], depth + 1)

    top = [r for r in node.rows if r.parent is None]
    for group in node.groups:
        members = [r for r in top if r.group == group.id]
        if members:
            table.add_row(Text.assemble((group.label, "bold")))
            add(members, 1)
    add([r for r in top if r.group is None or all(g.id != r.group for g in node.groups)])
    return table


class SpinnerView(NodeView):
    """A spinner that turns while active (still when the app freezes animations). Its timer
    runs only then: a closed view's spinner, one of many in a long session, woke the app ten
    times a second for good."""

    _turning: Timer | None = None

    def on_mount(self) -> None:
        self._turn()

    def show(self, node: Any) -> None:
        super().show(node)
        if self.is_mounted:
            self._turn()

    def _turn(self) -> None:
        if self.node.is_active and self._turning is None and not is_frozen(self):
            self._turning = self.set_interval(0.1, self._tick)
        elif not self.node.is_active and self._turning is not None:
            self._turning.stop()
            self._turning = None

    def _tick(self) -> None:
        self.frame += 1
        self.update(self.draw(self.node), layout=False)  # a mark for a mark: the same size

    def draw(self, node: Spinner) -> Content:
        frames = SPINNER_FRAMES[node.variant]
        mark = frames[self.frame % len(frames)] if node.is_active else "✓"
        return Content.assemble((mark, "$text-accent"), f" {node.label or ''}")


class OutputView(Collapsible):
    """A log behind a disclosure; the newest lines are shown. Its title is Content (text, not
    markup), set by ``show``."""

    def __init__(self, node: Output) -> None:
        self.lines = Static("", classes="live-output-lines")
        super().__init__(
            self.lines,
            collapsed=not node.default_expanded,
            classes="live-node live-output",
        )
        self.node = node

    def on_mount(self) -> None:
        self.show(self.node)

    def show(self, node: Output) -> None:
        self.node = node
        count = len(node.lines) + node.dropped
        self.title = Content(f"{node.label} ({plural(count, 'line')})")
        shown = node.lines[-OUTPUT_SHOWN:]
        hidden = len(node.lines) - len(shown) + node.dropped
        parts: list[Content] = []
        if hidden:
            parts.append(Content.styled(f"… {plural(hidden, 'earlier line')}", "$text-muted"))
        parts += [Content.styled(line.text, _tone(line.tone)) for line in shown]
        self.lines.update(Content("\n").join(parts))


class ButtonView(TextualButton):
    def __init__(self, node: Button) -> None:
        super().__init__(
            Content(node.label),
            disabled=node.is_disabled,
            compact=True,
            classes="live-node live-button",
        )
        self.node = node

    def show(self, node: Button) -> None:
        self.node = node
        self.label = Content(node.label)
        self.disabled = node.is_disabled


class DisclosureView(Collapsible):
    def __init__(self, node: Disclosure, children: list[Widget]) -> None:
        super().__init__(
            *children,
            title=Content(node.label),  # pyright: ignore[reportArgumentType] - text, not markup
            collapsed=not node.is_expanded,
            classes="live-node live-disclosure",
        )
        self.node = node

    def show(self, node: Disclosure) -> None:
        self.node = node
        self.title = Content(node.label)
        self.collapsed = not node.is_expanded


class LayoutView(Static):
    """Paragraph and heading nodes with an id: redrawn on ``.set``."""

    def __init__(self, node: Any) -> None:
        super().__init__(classes="live-node")
        self.node = node

    def on_mount(self) -> None:
        self.show(self.node)

    def show(self, node: Any) -> None:
        self.node = node
        if isinstance(node, Heading):
            style = "bold $text-accent" if node.level <= 2 else "bold"
            self.update(Content.styled(node.text, style))
        else:
            self.update(Content(str(getattr(node, "text", ""))))


class ConfirmStop(ModalScreen[bool]):
    """Asks before a live view is told to stop."""

    DEFAULT_CSS = """
    ConfirmStop { align: center middle; background: $background 50%; }
    ConfirmStop > Vertical { width: 56; height: auto; border: round $warning;
        background: $surface; padding: 1 2; }
    ConfirmStop Horizontal { height: auto; align-horizontal: right; margin-top: 1; }
    ConfirmStop Button { margin-left: 2; }
    """
    BINDINGS = [
        Binding("escape", "keep", "Keep running", show=False),
        QUIT_KEY,
        Binding("y", "stop", "Stop", show=False),
        Binding("n", "keep", "Keep", show=False),
    ]

    def __init__(self, title: str) -> None:
        super().__init__()
        self.view_title = title

    def compose(self) -> Any:
        with Vertical():
            yield Static(Content.assemble("Stop ", (self.view_title, "bold"), "?"))
            yield Static("The extension is asked to stop its work.", classes="muted")
            with Horizontal():
                yield TextualButton("Stop (y)", variant="warning", id="stop")
                yield TextualButton("Keep running (n)", id="keep")

    @on(TextualButton.Pressed, "#stop")
    def action_stop(self) -> None:
        self.dismiss(True)

    @on(TextualButton.Pressed, "#keep")
    def action_keep(self) -> None:
        self.dismiss(False)


class ViewState(StrEnum):
    """Where a live view is: open, stopping (Esc confirmed, the extension not yet done), closed."""

    OPEN = "open"
    STOPPING = "stopping"
    CLOSED = "closed"


class LiveViewWidget(Vertical, can_focus=True):
    """One ``vis.live`` view; updates arrive as plain ``LiveUpdate`` data."""

    DEFAULT_CSS = """
    LiveViewWidget { height: auto; border: round $panel-lighten-2; padding: 0 1;
        margin: 0 0 1 2; border-title-style: bold; border-subtitle-color: $text-muted; }
    LiveViewWidget:focus-within, LiveViewWidget:focus { border: round $accent; }
    LiveViewWidget.-closed { border: round $panel; }
    LiveViewWidget.-failed { border: round $error; }
    LiveViewWidget .live-body { height: auto; }
    LiveViewWidget .live-node { height: auto; }
    LiveViewWidget Collapsible { padding: 0; border: none; }
    LiveViewWidget .group { height: auto; }
    LiveViewWidget .group-row > * { width: auto; margin-right: 2; }
    LiveViewWidget Rule.live-divider { margin: 0; }
    LiveViewWidget .live-footer { height: auto; }
    LiveViewWidget.live-panel { margin: 0 0 1 0; }
    """
    BINDINGS = [Binding("escape", "stop", "Stop the view", show=False)]

    def __init__(
        self,
        view_id: str,
        title: str,
        nodes: tuple[Any, ...],
        *,
        placement: str = "inline",
        key: str | None = None,
        owner: str = "",
        send: Send | None = None,
    ) -> None:
        super().__init__(classes=f"live-view live-{placement}")
        self.view_id = view_id
        self.view_title = title
        self.nodes = nodes
        self.placement = placement
        self.key = key
        self.owner = owner
        self.send = send
        self.widgets: dict[str, Widget] = {}
        self.state = ViewState.OPEN
        self.summary: str | None = None
        self.border_title = Content(title)  # text, never markup

    @classmethod
    def from_plain(
        cls, view_id: str, title: str, nodes: list[Any], **kwargs: Any
    ) -> LiveViewWidget:
        return cls(view_id, title, tuple(from_plain(nodes)), **kwargs)

    def compose(self) -> Any:
        self.body = Vertical(*self._build_all(), classes="live-body")
        yield self.body
        yield Static("", classes="live-footer")

    def on_mount(self) -> None:
        if self.query(".live-footer"):  # else removed (the app quit) before it was composed
            self._show_state()

    # -- building --------------------------------------------------------------------------
    def _build_all(self) -> list[Widget]:
        self.widgets = {}
        return [w for w in (self._build(n) for n in self.nodes) if w is not None]

    def _build(self, node: Any) -> Widget | None:
        widget: Widget | None
        if isinstance(node, Field):
            widget = FieldWidget(node, None, self._input_changed)
        elif isinstance(node, Output):
            widget = OutputView(node)
        elif isinstance(node, Spinner):
            widget = SpinnerView(node)
        elif isinstance(node, Button):
            widget = ButtonView(node)
        elif isinstance(node, Divider):
            widget = Rule(classes="live-divider")
        elif isinstance(node, Disclosure):
            widget = DisclosureView(node, [w for w in map(self._build, node.nodes) if w])
        elif isinstance(node, Group):
            widget = layout_widget(node, self._build)
        elif node_id(node) is not None and not isinstance(
            node, Status | Progress | Stat | Steps | Table | Links | Code
        ):
            widget = LayoutView(node)
        elif isinstance(node, Status | Progress | Stat | Steps | Table | Links | Code):
            widget = NodeView(node)
        else:
            widget = layout_widget(node, self._build)
        ident = node_id(node)
        if ident is not None and widget is not None:
            self.widgets[ident] = widget
        return widget

    # -- updates ---------------------------------------------------------------------------
    def apply_updates(self, updates: list[dict[str, Any]]) -> None:
        """Apply a batch of ``LiveUpdate.to_plain`` dicts; changed nodes are redrawn."""
        rebuild = False
        changed: list[str] = []
        for data in updates:
            update = LiveUpdate.from_plain(data)
            try:
                self.nodes = apply(self.nodes, update)
            except ValueError as exc:  # the core checked it; a stale replay is skipped
                self.app.log.warning(f"live view {self.view_title!r}: {exc}")
                continue
            if update.op in (LiveOp.ADD_NODE, LiveOp.DROP_NODE):
                rebuild = True
            elif update.node_id is not None:
                changed.append(update.node_id)
        if rebuild:
            self.body.remove_children()
            self.body.mount_all(self._build_all())
            return
        for ident in dict.fromkeys(changed):
            widget = self.widgets.get(ident)
            node = find(self.nodes, ident)
            show = getattr(widget, "show", None)
            if show is not None and node is not None:
                show(node)

    def close_view(self, reason: str | None, summary: str | None) -> None:
        self.state = ViewState.CLOSED
        self.summary = summary or (reason if reason not in (None, "ended", "done") else None)
        for button in self.query(ButtonView):
            button.disabled = True
        for spinner in self.query(SpinnerView):
            spinner.show(Spinner(spinner.node.id, spinner.node.variant, False, spinner.node.label))
        self.set_class(reason in ("cancelled", "error", "failed"), "-failed")
        self._show_state()

    def _show_state(self) -> None:
        footer = self.query_one(".live-footer", Static)
        if self.state is ViewState.OPEN:
            footer.display = False
            self.border_subtitle = "Esc to stop" if self.has_focus_within else ""
            return
        footer.display = bool(self.summary) or self.state is ViewState.STOPPING
        if self.state is ViewState.STOPPING:
            footer.update(Content.styled("Stopping… waiting for the extension", "$text-warning"))
            self.border_subtitle = "stopping"
        else:
            footer.update(Content.styled(self.summary or "", "$text-muted"))
            self.border_subtitle = "closed"
        self.set_class(self.state is ViewState.CLOSED, "-closed")

    def on_descendant_focus(self) -> None:
        self._show_state()

    def on_descendant_blur(self) -> None:
        self._show_state()

    def on_focus(self) -> None:
        self._show_state()

    def on_blur(self) -> None:
        self._show_state()

    # -- the person ------------------------------------------------------------------------
    def _emit(self, event: LiveEvent) -> None:
        if self.send is not None and self.state is not ViewState.CLOSED:
            self.send(event)

    def _input_changed(self, name: str, value: Any) -> None:
        self._emit(LiveEvent(LiveEventKind.INPUT, self.view_id, name, value))

    @on(TextualButton.Pressed, ".live-button")
    def _pressed(self, event: TextualButton.Pressed) -> None:
        event.stop()
        button = event.button
        if isinstance(button, ButtonView):
            self._emit(LiveEvent(LiveEventKind.BUTTON, self.view_id, button.node.id))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "stop":
            return self.state is ViewState.OPEN
        return True

    def action_stop(self) -> None:
        """Esc: confirm, then tell the extension to stop."""

        def decided(stop: bool | None) -> None:
            if stop and self.state is ViewState.OPEN:
                self.state = ViewState.STOPPING
                self._emit(LiveEvent(LiveEventKind.STOP, self.view_id))
                self._show_state()

        self.app.push_screen(ConfirmStop(self.view_title), decided)


class LivePanel(VerticalScroll):
    """The session's side panel: views opened with ``placement="panel"``, one per key."""

    DEFAULT_CSS = """
    LivePanel {
        dock: right; width: 36%; min-width: 28; max-width: 44;  /* the transcript keeps most */
        border-left: vkey $panel; padding: 0 1;
    }
    """

    def show_view(self, widget: LiveViewWidget) -> None:
        for old in self.query(LiveViewWidget):
            if widget.key is not None and old.key == widget.key:
                self.mount(widget, before=old)
                old.remove()
                return
        self.mount(widget)


# -- core events -> widgets -------------------------------------------------------------------


def _views(target: Any) -> list[LiveViewWidget]:
    return (
        list(target.transcript.screen.query(LiveViewWidget))
        if target.transcript.is_attached
        else []
    )


def find_view(target: Any, view_id: str) -> LiveViewWidget | None:
    return next((w for w in _views(target) if w.view_id == view_id), None)


@handles(LiveOpened)
def _opened(target: Any, event: LiveOpened) -> None:
    core = getattr(target, "core", None)
    send: Send | None = None
    if core is not None:

        def send_to_core(live_event: LiveEvent) -> None:
            core.live_event(live_event)

        send = send_to_core

    widget = LiveViewWidget.from_plain(
        event.view_id,
        event.title,
        event.nodes,
        placement=event.placement,
        key=event.key,
        owner=event.owner,
        send=send,
    )
    if event.placement == "panel":
        screen = target.transcript.screen
        panels = list(screen.query(LivePanel))
        panel = panels[0] if panels else LivePanel(id="live-panel")
        if not panels:
            screen.mount(panel)
        elif not panel.display:  # the person closed it: a new view is announced, not forced
            screen.app.notify(
                f"New live view in the side panel: {event.title} (F3 shows it)", markup=False
            )
        panel.show_view(widget)
        return
    from vis_tui.widgets.stored_turn import StoredTurnView

    transcript = target.transcript
    turn = transcript.turns.get(event.turn_id or "")
    if isinstance(turn, StoredTurnView):  # a turn shown as stored: opened, as its rows are
        turn = transcript.open_stored(turn)
    if turn is None:
        transcript.mount(widget)
    else:
        row = turn.rows.get(event.activity_id or "")
        footers = list(turn.query(".turn-footer"))
        if row is not None and row.parent is turn:
            turn.mount(widget, after=_last_view_after(turn, row))
        elif footers:
            turn.mount(widget, before=footers[0])
        else:
            turn.mount(widget)


def _last_view_after(turn: Widget, row: Widget) -> Widget:
    """The row, or the last live view already shown right under it."""
    siblings = list(turn.children)
    anchor = row
    for sibling in siblings[siblings.index(row) + 1 :]:
        if not isinstance(sibling, LiveViewWidget):
            break
        anchor = sibling
    return anchor


@handles(LiveUpdated)
def _updated(target: Any, event: LiveUpdated) -> None:
    widget = find_view(target, event.view_id)
    if widget is not None:
        widget.apply_updates(event.updates)


@handles(LiveClosed)
def _closed(target: Any, event: LiveClosed) -> None:
    widget = find_view(target, event.view_id)
    if widget is not None:
        widget.close_view(event.reason, event.summary)
