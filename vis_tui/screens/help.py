"""The help screen: every binding of the app, from one table, what the status bar's signs say,
then the slash commands."""

from __future__ import annotations

import re
from typing import Any

from textual.binding import Binding
from textual.containers import Grid, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static

from vis_tui.keys import KEYS, QUIT_KEY
from vis_tui.widgets.status import SIGNS


class HelpScreen(ModalScreen[None]):
    """Lists every key, the status bar's signs, then every slash command (built-in,
    extension, command file); Esc or q closes it."""

    CSS_PATH = "help.tcss"
    BINDINGS = [
        Binding("escape,q,f1", "dismiss", "Close", show=False),
        QUIT_KEY,
    ]

    def compose(self) -> Any:
        with VerticalScroll(id="help-box"):
            yield Static(Content.styled("Keys", "bold"), id="help-title")
            with Grid(classes="help-table", id="help-keys"):
                for key in KEYS:
                    where = f"  ({key.where})" if key.where != "anywhere" else ""
                    yield from _row(key.keys, Content.assemble(key.what, (where, "$text-muted")))
            yield Static(Content.styled("Status bar", "bold"), id="help-signs-title")
            with Grid(classes="help-table", id="help-signs"):
                for sign, what in SIGNS:
                    yield from _row(sign, Content(what))
            yield Static(Content.styled("Commands", "bold"), id="help-commands-title")
            yield Grid(classes="help-table", id="help-commands")
            yield Static(Content.styled("Esc closes this list.", "$text-muted"), id="help-foot")

    async def on_screen_resume(self) -> None:
        """The commands as they are now (command files and extensions come and go)."""
        core = getattr(self.app, "core", None)
        infos = core.commands() if core is not None else []
        table = self.query_one("#help-commands", Grid)
        await table.remove_children()
        if not infos:
            await table.mount(Static(Content.styled("(none yet)", "$text-muted")))
            return
        owned = ("" if info.owner == "vis" else f"  ({info.owner})" for info in infos)
        await table.mount_all(
            cell
            for info, owner in zip(infos, owned, strict=True)
            for cell in _row(
                _spaced(info.usage), Content.assemble(info.doc, (owner, "$text-muted"))
            )
        )

    async def action_dismiss(self, result: Any = None) -> None:
        self.dismiss(None)


def _spaced(usage: str) -> str:
    """``usage`` with a space each side of its ``|``: a narrow column wraps between the
    choices (``login|logout`` broke as ``lo`` / ``gin`` at 80 columns)."""
    return re.sub(r"\s*\|\s*", " | ", usage)


def _row(name: str, what: Content) -> tuple[Static, Static]:
    """A key or command and what it does: two cells, each wrapping in its own column."""
    return Static(name, classes="help-name", markup=False), Static(what, classes="help-what")
