"""Form field widgets (one per field type) and the layout that holds them, for forms and views."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rich.text import Text
from textual import events, on
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.markup import escape
from textual.message import Message
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import Checkbox, Input, Select, SelectionList, Static, TextArea

from vis_core.frontend import Field, FieldType, Group, Heading, Paragraph

ValueChanged = Callable[[str, Any], None]


class RangeInput(Widget, can_focus=True):
    """A slider: ←/→ (or -/+) move by ``step``, Home/End jump to the ends."""

    DEFAULT_CSS = """
    RangeInput { height: 1; width: 1fr; }
    RangeInput:focus { text-style: bold; }
    """
    BINDINGS = [
        Binding("left,minus", "move(-1)", "Less", show=False),
        Binding("right,plus,equals_sign", "move(1)", "More", show=False),
        Binding("home", "jump(0)", "Minimum", show=False),
        Binding("end", "jump(1)", "Maximum", show=False),
    ]
    value: reactive[float] = reactive(0.0)

    class Changed(Message):
        def __init__(self, widget: RangeInput, value: float) -> None:
            super().__init__()
            self.widget = widget
            self.value = value

    def __init__(self, field: Field, value: float, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.field = field
        self.set_reactive(RangeInput.value, value)

    def action_move(self, direction: int) -> None:
        new = self.value + direction * self.field.step
        self.value = min(self.field.max, max(self.field.min, new))

    def action_jump(self, end: int) -> None:
        self.value = self.field.max if end else self.field.min

    def watch_value(self, value: float) -> None:
        self.post_message(self.Changed(self, value))

    def on_click(self, event: events.Click) -> None:
        width = max(1, self.size.width - 10)
        share = min(1.0, max(0.0, (event.x - 1) / width))
        steps = round(share * (self.field.max - self.field.min) / self.field.step)
        self.value = self.field.min + steps * self.field.step

    def render(self) -> Content:
        width = max(4, self.size.width - 10)
        share = (self.value - self.field.min) / (self.field.max - self.field.min)
        filled = round(share * (width - 1))
        shown = self.field.coerce(self.value)
        return Content.assemble(
            ("━" * filled, "$accent"),
            ("●", "bold $accent"),
            ("─" * (width - 1 - filled), "$text-muted"),
            (f" {shown}", "bold"),
        )


class FieldWidget(Vertical):
    """Label, description, the input for one field, and its error line."""

    DEFAULT_CSS = """
    FieldWidget { height: auto; margin: 0 0 1 0; }
    FieldWidget > .field-label { text-style: bold; }
    FieldWidget > .field-description { color: $text-muted; }
    FieldWidget > .field-error { color: $text-error; display: none; }
    FieldWidget.-invalid > .field-error { display: block; }
    FieldWidget.-invalid > Input, FieldWidget.-invalid > TextArea,
    FieldWidget.-invalid > SelectionList, FieldWidget.-invalid > Select > SelectCurrent {
        border: tall $error;
    }
    FieldWidget > TextArea { height: 5; }
    FieldWidget > SelectionList { height: auto; max-height: 8; }
    """

    def __init__(
        self, field: Field, value: Any = None, on_change: ValueChanged | None = None
    ) -> None:
        super().__init__()
        self.field = field
        self.start = field.initial() if value is None else value
        self.on_change = on_change
        self.input: Widget = self._make_input()

    def _make_input(self) -> Widget:
        f, value = self.field, self.start
        placeholder = f.placeholder or ""
        if f.type is FieldType.MULTILINE:
            return TextArea(str(value or ""), soft_wrap=True, placeholder=placeholder)
        if f.type is FieldType.PASSWORD:
            return Input(str(value or ""), placeholder, password=True)
        if f.type is FieldType.OTP:
            return Input(
                str(value or ""),
                placeholder or "0" * f.length,
                password=True,
                restrict="[0-9]*",  # ASCII digits only: \d takes any script's digits
                max_length=f.length,
            )
        if f.type is FieldType.SELECT:
            # labels as Text: not read as markup, and still found by the list's type-to-search
            options = [(Text(o.label), o.value) for o in f.options]
            return Select(
                options,
                prompt=escape(placeholder) or "Choose…",  # Select reads its prompt as markup
                value=Select.NULL if value is None else value,
            )
        if f.type is FieldType.MULTISELECT:
            chosen = set(value or [])
            return SelectionList(
                *[(Content(o.label), o.value, o.value in chosen) for o in f.options]
            )
        if f.type is FieldType.CHECKBOX:
            return Checkbox(Content(f.label), bool(value))
        if f.type is FieldType.RANGE:
            return RangeInput(f, float(value))
        return Input(str(value or ""), placeholder)

    def compose(self) -> Any:
        required = " *" if self.field.is_required else ""
        if self.field.type is not FieldType.CHECKBOX:
            yield Static(
                Content.assemble(self.field.label, (required, "$text-error")), classes="field-label"
            )
        if self.field.description:
            yield Static(self.field.description, classes="field-description", markup=False)
        yield self.input
        yield Static("", classes="field-error", markup=False)

    # -- values -------------------------------------------------------------------------
    @property
    def value(self) -> Any:
        widget = self.input
        if isinstance(widget, TextArea):
            return widget.text
        if isinstance(widget, Input):
            return widget.value
        if isinstance(widget, Select):
            return None if widget.is_blank() else widget.value
        if isinstance(widget, SelectionList):
            return list(widget.selected)
        if isinstance(widget, Checkbox):
            return widget.value
        if isinstance(widget, RangeInput):
            return self.field.coerce(widget.value)
        return None

    def show_error(self, message: str | None) -> None:
        self.set_class(bool(message), "-invalid")
        self.query_one(".field-error", Static).update(f"✗ {message}" if message else "")

    def _changed(self) -> None:
        if self.has_class("-invalid"):
            self.show_error(None)
        if self.on_change is not None:
            self.on_change(self.field.name, self.value)

    @on(Input.Changed)
    @on(TextArea.Changed)
    @on(Select.Changed)
    @on(SelectionList.SelectedChanged)
    @on(Checkbox.Changed)
    @on(RangeInput.Changed)
    def _input_changed(self, event: Message) -> None:
        event.stop()
        self._changed()


def layout_widget(node: Any, build: Callable[[Any], Widget | None]) -> Widget | None:
    """The widget of a layout node (heading, paragraph, row/column group) or None."""
    if isinstance(node, Heading):
        style = "bold $text-accent" if node.level <= 2 else "bold"
        return Static(Content.styled(node.text, style), classes=f"heading level-{node.level}")
    if isinstance(node, Paragraph):
        return Static(node.text, classes="paragraph", markup=False)
    if isinstance(node, Group):
        children = [w for w in (build(child) for child in node.fields) if w is not None]
        box: Widget = (Horizontal if node.direction == "row" else Vertical)(
            *children, classes=f"group group-{node.direction}"
        )
        if node.label:
            box.border_title = Content(node.label)  # text, never markup
        return box
    return None


class FormBody(Vertical):
    """Every node of a form: fields keep what was typed while errors are shown."""

    DEFAULT_CSS = """
    FormBody { height: auto; }
    FormBody .group { height: auto; }
    FormBody .group-row > * { width: 1fr; margin-right: 1; }
    FormBody .paragraph { margin: 0 0 1 0; }
    FormBody .heading { margin: 0 0 1 0; }
    """

    def __init__(
        self,
        nodes: tuple[Any, ...],
        values: dict[str, Any] | None = None,
        on_change: ValueChanged | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.nodes = nodes
        self.start = values or {}
        self.on_change = on_change
        self.fields: dict[str, FieldWidget] = {}
        self.parts = [w for w in (self.build(node) for node in nodes) if w is not None]

    def compose(self) -> Any:
        yield from self.parts

    def build(self, node: Any) -> Widget | None:
        if isinstance(node, Field):
            widget = FieldWidget(node, self.start.get(node.name), self.on_change)
            self.fields[node.name] = widget
            return widget
        return layout_widget(node, self.build)

    def values(self) -> dict[str, Any]:
        return {name: widget.value for name, widget in self.fields.items()}

    def show_errors(self, errors: dict[str, str]) -> None:
        for name, widget in self.fields.items():
            widget.show_error(errors.get(name))

    def focus_field(self, name: str) -> None:
        widget = self.fields.get(name)
        if widget is not None:
            widget.input.focus()
            widget.scroll_visible(animate=False)
