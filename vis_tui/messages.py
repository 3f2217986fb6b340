"""Messages that carry the core's events and the screens' requests to the app."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.message import Message

if TYPE_CHECKING:
    from vis_core.events import Event
    from vis_core.frontend import CommandResult
    from vis_core.model.command import CommandAction


class CoreEvent(Message):
    """An event the session published; posted from the core, handled on the main screen."""

    def __init__(self, event: Event) -> None:
        super().__init__()
        self.event = event
        self.more: list[str] = []  # text of later deltas of the same turn, while not handled
        self.taken = False  # handled: later deltas need a message of their own

    def take(self) -> Event:
        """The event, with the deltas that joined it while it waited in the queue."""
        self.taken = True
        if not self.more:
            return self.event
        from dataclasses import replace

        text = "".join([getattr(self.event, "text", ""), *self.more])
        self.more = []
        return replace(self.event, text=text)  # type: ignore[type-var]


class TurnDone(Message):
    """The turn worker saw ``submit`` return: every event of the turn was posted before it.
    ``session_id``: the session the turn ran in (the screen may show another one now)."""

    def __init__(self, session_id: str) -> None:
        super().__init__()
        self.session_id = session_id


class CommandActionRequested(Message):
    """A slash command asks the app to act (``/new``, ``/sessions``, ``/quit``…)."""

    def __init__(self, action: CommandAction, result: CommandResult) -> None:
        super().__init__()
        self.action = action
        self.result = result
