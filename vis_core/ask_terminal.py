"""``vis run``: ``vis.ask`` as prompt-toolkit prompts on a terminal; no terminal, no prompts."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from vis_core.terminal import terminal_text

if TYPE_CHECKING:  # forms load with the first form asked, not with every ``vis run``
    from prompt_toolkit.input import Input
    from prompt_toolkit.output import Output

    from vis_core.extension.forms import Field
    from vis_core.interaction import FormRequest, Interaction


class TerminalPresenter:
    """Asks field by field; a wrong value is explained and asked again (Ctrl+C cancels)."""

    def __init__(self, input: Input | None = None, output: Output | None = None) -> None:
        self.input = input
        self.output = output

    def _say(self, text: str) -> None:
        from prompt_toolkit import print_formatted_text

        print_formatted_text(terminal_text(text), output=self.output)  # an extension's text

    async def present(self, request: FormRequest) -> dict[str, Any] | None:
        from prompt_toolkit import PromptSession

        from vis_core.extension.forms import Field, Heading, Paragraph
        from vis_core.extension.live_nodes import walk

        form = request.form
        session: PromptSession[str] = PromptSession(input=self.input, output=self.output)
        self._say(f"\n{form.title}" + (f" (asked by {request.owner})" if request.owner else ""))
        if form.description:
            self._say(form.description)
        values: dict[str, Any] = {}
        try:
            for node in walk(form.nodes):
                if isinstance(node, Heading | Paragraph):
                    self._say(node.text)
                elif isinstance(node, Field):
                    values[node.name] = await self._ask_field(session, node)
        except (KeyboardInterrupt, EOFError):
            if form.is_cancellable:
                self._say("(cancelled)")
                return None
            self._say("This form cannot be cancelled; it was left unanswered.")
            return None
        return values

    async def _ask_field(self, session: Any, field: Field) -> Any:
        from vis_core.extension.forms import FieldType

        while True:
            text = await session.prompt_async(
                self._label(field),
                is_password=field.is_secret,
                multiline=field.type is FieldType.MULTILINE,
                default="" if field.is_secret or field.default is None else _as_text(field),
            )
            value, problem = _parse(field, text)
            if problem is None:
                problem = field.check(value)
            if problem is None:
                return value
            self._say(f"  ✗ {field.label}: {problem}")

    def _label(self, field: Field) -> str:
        from vis_core.extension.forms import FieldType

        hint = ""
        if field.type in (FieldType.SELECT, FieldType.MULTISELECT):
            for number, item in enumerate(field.options, 1):
                self._say(f"  {number}. {item.label}")
            hint = " (number)" if field.type is FieldType.SELECT else " (numbers, comma-separated)"
        elif field.type is FieldType.CHECKBOX:
            hint = " [y/n]"
        elif field.type is FieldType.RANGE:
            hint = f" ({field.min:g}–{field.max:g}, step {field.step:g})"
        elif field.type is FieldType.MULTILINE:
            hint = " (Esc then Enter to finish)"
        elif field.type is FieldType.OTP:
            hint = f" ({field.length} digits)"
        required = " *" if field.is_required else ""
        if field.description:
            self._say(f"  {field.description}")
        return terminal_text(f"{field.label}{required}{hint}: ")


def _as_text(field: Field) -> str:
    from vis_core.extension.forms import FieldType

    value = field.initial()
    if field.type is FieldType.CHECKBOX:
        return "y" if value else "n"
    if field.type is FieldType.SELECT:
        values = [o.value for o in field.options]
        return str(values.index(value) + 1) if value in values else ""
    if field.type is FieldType.MULTISELECT:
        values = [o.value for o in field.options]
        return ",".join(str(values.index(v) + 1) for v in value if v in values)
    if field.type is FieldType.RANGE:
        return f"{field.coerce(value)}"
    return str(value or "")


def _parse(field: Field, text: str) -> tuple[Any, str | None]:
    """The typed text as the field's value, or a message saying what to type."""
    from vis_core.extension.forms import FieldType

    kind, text = field.type, text if field.type is FieldType.MULTILINE else text.strip()
    if kind is FieldType.CHECKBOX:
        if text.lower() in ("y", "yes", "n", "no", ""):
            return text.lower() in ("y", "yes"), None
        return None, "Type y or n."
    if kind is FieldType.RANGE:
        if not text:
            return field.coerce(field.initial()), None
        try:
            return field.coerce(float(text)), None
        except ValueError:
            return None, "Type a number."
    if kind in (FieldType.SELECT, FieldType.MULTISELECT):
        picks = [p.strip() for p in text.split(",") if p.strip()]
        if kind is FieldType.SELECT and len(picks) > 1:
            return None, "Choose one number."
        chosen = []
        for pick in picks:
            if not pick.isdigit() or not 1 <= int(pick) <= len(field.options):
                return None, f"Type a number from 1 to {len(field.options)}."
            chosen.append(field.options[int(pick) - 1].value)
        if kind is FieldType.SELECT:
            return (chosen[0] if chosen else None), None
        return chosen, None
    return text, None


def install_terminal_asker(
    interaction: Interaction, *, stdin: Any = None, stdout: Any = None
) -> bool:
    """Ask ``vis.ask`` forms of ``interaction`` on the terminal when there is one; returns
    whether it did.
    Without a terminal nothing is installed, so forms are answered at once as undeliverable."""
    stdin = stdin if stdin is not None else sys.stdin
    stdout = stdout if stdout is not None else sys.stdout
    if not (stdin.isatty() and stdout.isatty()):
        return False
    interaction.add_presenter(TerminalPresenter())
    return True
