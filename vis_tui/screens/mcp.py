"""``/mcp``: the MCP servers with state, tools, exposure and source; reconnect, enable, expose,
sign in and out."""

from __future__ import annotations

import re
from typing import Any

from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.events import Resize
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from vis_core.frontend import (
    ATTENTION,
    NO_SERVERS,
    Exposure,
    McpPanel,
    McpServerView,
    State,
    plural,
)
from vis_tui.keys import QUIT_KEY

STATE_STYLE = {
    State.CONNECTED: "$text-success",
    State.CONNECTING: "$text-accent",
    State.DISABLED: "$text-muted",
    State.DISCONNECTED: "$text-warning",
    State.FAILED: "$text-error",
    State.NEEDS_SIGN_IN: "$text-warning",
}
EXPOSURES = list(Exposure)


class McpChanged(Message):
    """A server connected, failed, changed its tools or was changed here."""


NAME_WIDTH = 18
MIN_NAME_WIDTH = 8
# the columns after the name, in the order a narrow list drops them from the end
COLUMN_WIDTHS = (14, 10, 10, 9)  # state, tools, exposure, source


def server_row(server: McpServerView, width: int = 80) -> Content:
    """One line of the list at ``width`` cells: a long name is cut with …, and columns that
    do not fit (source, then exposure, then tools) are left to the details."""
    tools = plural(len(server.tools), "tool") if server.state is State.CONNECTED else "-"
    mark = "!" if server.state in ATTENTION else " "
    fields = [
        (server.state.value, STATE_STYLE[server.state]),
        (tools, ""),
        (server.exposure.value, "$text-accent"),
        (server.source.value, "$text-muted"),
    ]
    room = width - 2 - MIN_NAME_WIDTH
    shown: list[tuple[str, str]] = []
    for (text, style), column in zip(fields, COLUMN_WIDTHS, strict=True):
        if column > room:
            break
        room -= column
        shown.append((text.ljust(column), style))
    name_width = min(NAME_WIDTH, MIN_NAME_WIDTH + room)
    name = server.name
    if len(name) >= name_width:
        name = name[: name_width - 2] + "…"
    return Content.assemble(
        (f"{mark} ", "bold $text-error"), (name.ljust(name_width), "bold"), *shown
    ).rstrip()


def wrap_path(text: str, width: int) -> str:
    """``text`` (a path, a command line) in lines of at most ``width`` cells, broken after a
    ``/`` or at a space; a longer piece is cut where the line ends."""
    lines: list[str] = []
    line = ""
    for piece in re.findall(r"[^/\s]*(?:/|\s+|$)", text):
        if line and len(line) + len(piece.rstrip()) > width:
            lines.append(line.rstrip())
            line = ""
        while len(piece.rstrip()) > width:
            lines.append(piece[:width])
            piece = piece[width:]
        line += piece
    lines.append(line.rstrip())
    return "\n".join(line for line in lines if line)


def server_details(server: McpServerView, width: int = 200) -> Content:
    parts: list[tuple[str, str] | str] = [
        (server.name, "bold"),
        (f"  {server.state.value}\n", STATE_STYLE[server.state]),
        (f"{server.exposure.value}\n", "$text-accent"),
        (f"{wrap_path(f'{server.source.value}: {server.origin}', width)}\n", "$text-muted"),
        (f"{wrap_path(f'{server.transport.value}: {server.target}', width)}\n", "$text-muted"),
    ]
    if server.about:
        parts.append(f"{server.about}\n")
    if server.error:
        parts += [("\nError\n", "bold $text-error"), f"{server.error}\n"]
    tail = server.stderr_tail.strip()
    if tail and server.state is not State.CONNECTED:
        parts += [("\nstderr (last lines)\n", "bold"), (f"{tail}\n", "$text-muted")]
    if server.tools:
        parts.append(("\nTools\n", "bold"))
        for name, exposure in server.tools:
            style = "$text-accent" if exposure is not server.exposure else "$text-muted"
            parts += [(f"{name}", ""), (f"  {exposure.value}\n", style)]
    return Content.assemble(*parts)


class McpScreen(ModalScreen[None]):
    """Servers first (attention first); the selected one's tools, error and stderr beside."""

    CSS_PATH = "mcp.tcss"
    BINDINGS = [
        Binding("escape,q", "close", "Close", show=False),
        QUIT_KEY,
        Binding("r", "reconnect", "Reconnect", show=False),
        Binding("e", "toggle_enabled", "Enable/disable", show=False),
        Binding("x", "cycle_exposure", "Exposure", show=False),
        Binding("s", "sign_in", "Sign in", show=False),
        Binding("o", "sign_out", "Sign out", show=False),
    ]

    def __init__(self, panel: McpPanel, sign_in: str | None = None) -> None:
        super().__init__()
        self.panel = panel
        self.note = ""
        self.sign_in_first = sign_in  # /mcp login NAME
        self._listener: Any = None  # the redirect listener of a sign-in under way
        self._unfollow: Any = None

    def compose(self) -> Any:
        with Vertical(id="mcp-box"):
            yield Static(Content.styled("MCP servers", "bold"), id="mcp-title")
            with Horizontal(id="mcp-body"):
                yield OptionList(id="mcp-list")
                with VerticalScroll(id="mcp-details-scroll"):
                    yield Static("", id="mcp-details")
            yield Static("", id="mcp-overridden")
            yield Static("", id="mcp-problems")
            yield Static("", id="mcp-note")
            yield Input(
                placeholder="Browser on another machine? Paste the address it was sent to here",
                id="mcp-paste",
            )
            yield Static(
                Content.styled(
                    "r reconnect · s sign in · o sign out · e enable/disable · "
                    "x change exposure · Esc closes",
                    "$text-muted",
                ),
                id="mcp-keys",
            )

    def on_mount(self) -> None:
        self._unfollow = self.panel.follow(self._changed)
        self.query_one("#mcp-paste", Input).display = False
        self._fill()
        self.query_one(OptionList).focus()
        if self.sign_in_first:
            self._start_sign_in(self.sign_in_first)

    def on_resize(self, _event: Resize) -> None:
        self.call_after_refresh(self._fill)  # rows and paths fit the new width

    def on_unmount(self) -> None:
        if self._unfollow is not None:
            self._unfollow()

    def _changed(self) -> None:
        self.post_message(McpChanged())

    def on_mcp_changed(self, _message: McpChanged) -> None:
        self._fill()

    def _fill(self) -> None:
        listing = self.query_one(OptionList)
        chosen = self._selected()
        keep = chosen.name if chosen else None
        listing.clear_options()
        conns = self.panel.servers()
        width = listing.scrollable_content_region.width or 80  # before the first layout
        for conn in conns:
            listing.add_option(Option(server_row(conn, width), id=conn.name))
        problems = [f"invalid: {problem}" for problem in self.panel.problems()]
        if not conns and not problems:  # an unreadable file is said below, not "add one"
            listing.add_option(Option(Content.styled(NO_SERVERS, "$text-muted"), disabled=True))
        overridden = self.panel.overridden()
        shown = self.query_one("#mcp-overridden", Static)
        shown.update(Content.styled("\n".join(overridden), "$text-muted"))
        shown.display = bool(overridden)
        self.query_one("#mcp-problems", Static).update(
            Content.styled("\n".join(problems), "$text-error")
        )
        names = [c.name for c in conns]
        if names:
            listing.highlighted = names.index(keep) if keep in names else 0
        self._show()

    def _selected(self) -> McpServerView | None:
        listing = self.query_one(OptionList)
        if listing.highlighted is None or listing.option_count == 0:
            return None
        option = listing.get_option_at_index(listing.highlighted)
        return self.panel.server(option.id) if option.id else None

    def _show(self) -> None:
        conn = self._selected()
        details = self.query_one("#mcp-details", Static)
        width = details.content_region.width or 200
        details.update(server_details(conn, width) if conn else "")
        self.query_one("#mcp-note", Static).update(Content.styled(self.note, "$text-accent"))

    def on_option_list_option_highlighted(self, _event: OptionList.OptionHighlighted) -> None:
        self._show()

    def on_option_list_option_selected(self, _event: OptionList.OptionSelected) -> None:
        self.query_one("#mcp-details-scroll").focus()

    async def _act(self, work: Any) -> None:
        try:
            self.note = await work
        except Exception as exc:  # a failed save or reconnect is shown, not raised
            self.note = f"{type(exc).__name__}: {exc}"
        self._fill()

    async def action_reconnect(self) -> None:
        conn = self._selected()
        if conn is not None:
            self.note = f"reconnecting {conn.name}…"
            self._show()
            await self._act(self.panel.reconnect(conn.name))

    async def action_toggle_enabled(self) -> None:
        conn = self._selected()
        if conn is not None:
            await self._act(self.panel.set_enabled(conn.name, not conn.enabled))

    async def action_cycle_exposure(self) -> None:
        conn = self._selected()
        if conn is not None:
            following = EXPOSURES[(EXPOSURES.index(conn.exposure) + 1) % len(EXPOSURES)]
            await self._act(self.panel.set_exposure(conn.name, following))

    def action_sign_in(self) -> None:
        conn = self._selected()
        if conn is not None:
            self._start_sign_in(conn.name)

    def _start_sign_in(self, name: str) -> None:
        if self._listener is not None:
            self.note = "a sign-in is under way; finish it or close /mcp to cancel it"
            self._show()
            return
        self.note = f"signing in to {name}…"
        self._show()
        self.run_worker(self._sign_in(name), group="sign-in", exclusive=True)

    async def _sign_in(self, name: str) -> None:
        paste = self.query_one("#mcp-paste", Input)

        def show(url: str, opened: bool) -> None:
            where = "Your browser should open this page" if opened else "Open this page"
            self.note = f"{where} to sign in to {name}, then approve:\n{url}"
            paste.display = True
            self._show()

        def listening(listener: Any) -> None:
            self._listener = listener

        try:
            await self._act(self.panel.sign_in(name, show=show, listening=listening))
        finally:
            self._listener = None
            paste.value = ""
            paste.display = False

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id != "mcp-paste" or self._listener is None:
            return
        problem = self._listener.offer(event.value)
        event.input.value = ""
        if problem:
            self.note = problem
            self._show()

    async def action_sign_out(self) -> None:
        conn = self._selected()
        if conn is not None:
            await self._act(self.panel.sign_out(conn.name))

    def action_close(self) -> None:
        self.dismiss(None)
