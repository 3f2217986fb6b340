"""The key help screen: every binding of the app, from one table."""

from __future__ import annotations

from typing import Any

from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static

from vis_tui.keys import KEYS


class HelpScreen(ModalScreen[None]):
    """Lists every key; Esc or q closes it."""

    CSS_PATH = "help.tcss"
    BINDINGS = [
        Binding("escape,q,f1", "dismiss", "Close", show=False),
    ]

    def compose(self) -> Any:
        with VerticalScroll(id="help-box"):
            yield Static(Content.styled("Keys", "bold"), id="help-title")
            width = max(len(k.keys) for k in KEYS) + 2
            for key in KEYS:
                yield Static(
                    Content.assemble(
                        (f"{key.keys:<{width}}", "bold $text-accent"),
                        key.what,
                        (f"  ({key.where})" if key.where != "anywhere" else "", "$text-muted"),
                    ),
                    classes="key-row",
                )
            yield Static(Content.styled("Esc closes this list.", "$text-muted"), id="help-foot")

    async def action_dismiss(self, result: Any = None) -> None:
        self.dismiss(None)
