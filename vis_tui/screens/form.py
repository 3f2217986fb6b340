"""The ``vis.ask`` form screen and the presenter that shows forms in the app."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from textual import on
from textual.app import App
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Static

from vis_core.frontend import Form
from vis_tui.keys import QUIT_KEY
from vis_tui.widgets import live as _live_views  # noqa: F401 - registers live view events
from vis_tui.widgets.form import FormBody

if TYPE_CHECKING:
    from vis_core.frontend import FormRequest, Frontend


class FormScreen(ModalScreen[dict[str, Any] | None]):
    """A form from an extension; dismissed with the values, or None when cancelled."""

    CSS_PATH = "form.tcss"
    BINDINGS = [
        Binding("escape", "cancel", "Cancel", show=False),
        Binding("ctrl+s", "submit", "Submit", show=False, priority=True),
        QUIT_KEY,
    ]

    def __init__(self, form: Form, owner: str = "") -> None:
        super().__init__()
        self.form = form
        self.owner = owner
        self.errors: dict[str, str] = {}
        self.dismissed = False

    def compose(self) -> Any:
        with Vertical(id="form-dialog") as dialog:
            dialog.border_title = Content(self.form.title)  # text, never markup
            if self.owner:
                dialog.border_subtitle = Content(f"asked by {self.owner}")
            if self.form.description:
                yield Static(self.form.description, id="form-description", markup=False)
            with VerticalScroll(id="form-scroll"):
                self.body = FormBody(self.form.nodes, self.form.initial_values(), id="form-body")
                yield self.body
            yield Static("", id="form-summary", markup=False)
            with Horizontal(id="form-buttons"):
                keys = "Ctrl+S submit" + (" · Esc cancel" if self.form.is_cancellable else "")
                yield Static(keys, id="form-keys", markup=False)
                # the extension's words, as text (a str label is read as markup)
                submit = Content(self.form.submit_label)
                yield Button(submit, variant="primary", id="form-submit")
                if self.form.is_cancellable:
                    yield Button(Content(self.form.cancel_label), id="form-cancel")

    def on_mount(self) -> None:
        self.query_one("#form-summary").display = False
        first = next(iter(self.body.fields), None)
        if first is not None:
            self.body.focus_field(first)

    @on(Button.Pressed, "#form-submit")
    def _submit_pressed(self) -> None:
        self.action_submit()

    @on(Button.Pressed, "#form-cancel")
    def _cancel_pressed(self) -> None:
        self.action_cancel()

    @on(Input.Submitted)
    def _enter(self, event: Input.Submitted) -> None:
        """Enter in a field moves to the next field; in the last one it submits the form
        (a 30-field form is not sent by the first Enter)."""
        event.stop()
        names = list(self.body.fields)
        here = next(
            (i for i, name in enumerate(names) if self.body.fields[name].input is event.input),
            None,
        )
        if here is None or here == len(names) - 1:
            self.action_submit()
        else:
            self.body.focus_field(names[here + 1])

    def action_submit(self) -> None:
        """Check every field; a wrong one is named, and everything typed stays."""
        values = self.body.values()
        self.errors = self.form.check(values)
        self.body.show_errors(self.errors)
        summary = self.query_one("#form-summary", Static)
        if self.errors:
            labels = {f.name: f.label for f in self.form.fields()}
            names = ", ".join(labels[name] for name in self.errors)
            count = len(self.errors)
            summary.update(
                f"Check {'this field' if count == 1 else f'these {count} fields'}: {names}"
            )
            summary.display = True
            self.body.focus_field(next(iter(self.errors)))
            return
        self.dismissed = True
        self.dismiss(values)

    def action_cancel(self) -> None:
        if self.form.is_cancellable:
            self.dismissed = True
            self.dismiss(None)
        else:
            self.app.notify(
                "This form cannot be cancelled; fill it in and submit it.", severity="warning"
            )


class TuiFormPresenter:
    """Shows each ``vis.ask`` as a :class:`FormScreen` over whatever screen is active."""

    def __init__(self, app: App[Any]) -> None:
        self.app = app

    async def present(self, request: FormRequest) -> dict[str, Any] | None:
        loop = asyncio.get_running_loop()
        answer: asyncio.Future[dict[str, Any] | None] = loop.create_future()

        def done(values: dict[str, Any] | None) -> None:
            if not answer.done():
                answer.set_result(values)

        def show() -> None:
            if not answer.done():  # not given up before it could show
                self.app.push_screen(screen, done)

        screen = FormScreen(request.form, request.owner)
        # pushed from the app's own context: the caller's (an extension's call, served from a
        # worker's pipe) may not know the app, and the screen's compose needs it
        self.app.call_later(show)
        try:
            return await answer
        finally:
            if screen in self.app.screen_stack and not screen.dismissed:  # timeout, turn ended
                screen.dismissed = True
                if self.app.screen is screen:
                    screen.dismiss(None)
                else:  # another screen is above it: take it out of the stack when it shows
                    screen.call_later(screen.dismiss, None)


def attach_forms(app: App[Any], core: Frontend) -> Callable[[], None]:
    """Let ``core``'s extensions ask the person through ``app``; returns the detacher."""
    return core.present_forms(TuiFormPresenter(app))
