"""Inline editors under a setting row: a text field (masked for secrets) and a choice list."""

from __future__ import annotations

from typing import Any

from textual.binding import Binding
from textual.content import Content
from textual.widgets import Input, OptionList
from textual.widgets.option_list import Option


class InlineTextEditor(Input):
    """Edits one string setting in place; Enter saves, Esc cancels."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", show=False)]

    def __init__(self, setting_id: str, value: str, *, secret: bool = False, **kw: Any) -> None:
        placeholder = "Type the secret; Enter saves, Esc cancels" if secret else "Enter saves"
        super().__init__(value, placeholder=placeholder, password=secret, **kw)
        self.setting_id = setting_id
        self.secret = secret

    def action_cancel(self) -> None:
        self.remove()


class InlineChoices(OptionList):
    """The choices of one enum setting; Enter picks, Esc cancels."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", show=False)]

    def __init__(self, setting_id: str, choices: tuple[str, ...], current: str, **kw: Any):
        # an extension's choices, drawn as text (a str prompt is read as markup)
        super().__init__(*[Option(Content(choice), id=choice) for choice in choices], **kw)
        self.setting_id = setting_id
        self._current = current

    def on_mount(self) -> None:
        options = [self.get_option_at_index(i).id for i in range(self.option_count)]
        if self._current in options:
            self.highlighted = options.index(self._current)

    def action_cancel(self) -> None:
        self.remove()
