"""The help screen: every binding of the app, from one table, then the slash commands."""

from __future__ import annotations

from typing import Any

from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static

from vis_tui.keys import KEYS


class HelpScreen(ModalScreen[None]):
    """Lists every key, then every slash command (built-in, extension, command file); Esc or
    q closes it."""

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
            yield Static(Content.styled("Commands", "bold"), id="help-commands-title")
            yield Static("", id="help-commands")
            yield Static(Content.styled("Esc closes this list.", "$text-muted"), id="help-foot")

    def on_screen_resume(self) -> None:
        """The commands as they are now (command files and extensions come and go)."""
        core = getattr(self.app, "core", None)
        infos = core.commands() if core is not None else []
        width = max((len(info.usage) for info in infos), default=0) + 2
        rows = [
            Content.assemble(
                (f"{info.usage:<{width}}", "bold $text-accent"),
                info.doc,
                ("" if info.owner == "vis" else f"  ({info.owner})", "$text-muted"),
            )
            for info in infos
        ]
        text = Content("\n").join(rows) if rows else Content.styled("(none yet)", "$text-muted")
        self.query_one("#help-commands", Static).update(text)

    async def action_dismiss(self, result: Any = None) -> None:
        self.dismiss(None)
