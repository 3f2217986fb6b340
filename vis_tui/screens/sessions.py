"""The sessions picker: this workspace's sessions, searchable; Enter opens one."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from textual import work
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from vis_core.frontend import ago, plural
from vis_core.model.sessions import SessionRow, snippet_parts
from vis_tui.keys import QUIT_KEY

if TYPE_CHECKING:
    from vis_core.frontend import Frontend


def _snippet(snippet: str) -> list[tuple[str, str]]:
    """A search hit's snippet on its own line, italic, each match in bold (not between the
    ``**`` the model reads)."""
    if not snippet:
        return []
    parts = [(text, "bold italic" if match else "italic") for text, match in snippet_parts(snippet)]
    return [("\n  ", ""), *parts]


class SessionsScreen(ModalScreen[str | None]):
    """Dismisses with the chosen session id, or None; ``current``: the session shown now,
    marked in the list."""

    CSS_PATH = "sessions.tcss"
    BINDINGS = [
        Binding("escape", "cancel", "Close", show=False),
        Binding("down", "focus_list", "Sessions", show=False),
        QUIT_KEY,
    ]

    def __init__(
        self, core: Frontend, *, now: float | None = None, current: str | None = None
    ) -> None:
        super().__init__()
        self.core = core
        self.now = now
        self.current = current
        self._shown: str | None = None  # the query the list shows the result of
        self._open_when_shown = False  # Enter was pressed before that result came

    def compose(self) -> Any:
        with Vertical(id="sessions-box"):
            yield Static(Content.styled("Sessions", "bold"), id="sessions-title")
            yield Input(placeholder="Search titles, requests and replies…", id="session-search")
            yield OptionList(id="session-list")
            yield Static(Content.styled("Enter opens · Esc closes", "$text-muted"))

    def on_mount(self) -> None:
        self._show("", self._listing())
        self.query_one(Input).focus()

    def _listing(self) -> list[tuple[SessionRow, str, int]]:
        """This workspace's sessions; a child session (run_session, consult) under the session
        that started it."""
        return [(row, "", depth) for row, depth in self.core.sessions()]

    @work(thread=True, exclusive=True, group="search", exit_on_error=False)
    def _search(self, query: str) -> None:
        """Search the stored sessions in a thread: over months of sessions a search takes
        0.1-0.3 s, which on the loop held every key typed meanwhile."""
        try:
            found = [(hit.session, hit.snippet, 0) for hit in self.core.search_sessions(query)]
        except Exception as exc:  # an unreadable store: said in the list, the app goes on
            self.app.call_from_thread(self._show, query, [], f"The search failed: {exc}")
            return
        self.app.call_from_thread(self._show, query, found)

    def _query(self) -> str:
        return self.query_one(Input).value.strip()

    def _show(self, query: str, rows: list[tuple[SessionRow, str, int]], problem: str = "") -> None:
        """Fill the list with ``rows`` found for ``query``, unless the person typed on."""
        if not self.is_attached or query != self._query():
            return
        self._shown = query
        now = self.now if self.now is not None else time.time()
        listing = self.query_one(OptionList)
        listing.clear_options()
        for row, snippet, depth in rows:
            parent = f" · child of {row.parent_id[:8]}" if row.parent_id and not depth else ""
            label = Content.assemble(
                ("  " * (depth - 1) + "↳ " if depth else "", "$text-muted"),
                (row.title or "untitled", "bold"),
                (
                    f"  {plural(row.turn_count, 'turn')} · {ago(row.modified, now)}"
                    f" · {row.id[:8]}{parent}",
                    "$text-muted",
                ),
                ("  ● open now" if row.id == self.current else "", "$text-accent"),
                *_snippet(snippet),
            )
            listing.add_option(Option(label, id=row.id))
        if not rows:
            text = problem or "No sessions match."
            listing.add_option(Option(Content.styled(text, "$text-muted"), disabled=True))
        else:
            listing.highlighted = 0
        if self._open_when_shown:
            self._open_when_shown = False
            self._open_highlighted()

    def on_input_changed(self, event: Input.Changed) -> None:
        query = event.value.strip()
        if query:
            self._search(query)
        else:
            self._show("", self._listing())

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if self._shown != self._query():  # its result is on the way: opened when it comes
            self._open_when_shown = True
        else:
            self._open_highlighted()

    def _open_highlighted(self) -> None:
        listing = self.query_one(OptionList)
        if listing.highlighted is not None:
            option = listing.get_option_at_index(listing.highlighted)
            if option.id:
                self.dismiss(option.id)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        if event.option.id:
            self.dismiss(event.option.id)

    def action_focus_list(self) -> None:
        self.query_one(OptionList).focus()

    def action_cancel(self) -> None:
        self.dismiss(None)
