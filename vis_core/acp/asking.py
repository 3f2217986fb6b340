"""``vis.ask`` forms (the draft approval among them) as ACP permission requests."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from acp import start_tool_call, text_block, tool_content, update_tool_call
from acp.schema import AllowedOutcome, PermissionOption, ToolCallUpdate

from vis_core.acp.markdown import literal, literal_line
from vis_core.frontend import Field, FieldType, Heading, Paragraph, iter_fields, walk

if TYPE_CHECKING:
    from vis_core.frontend import Answer, Form, FormRequest

SUBMIT, CANCEL = "submit", "cancel"


def form_text(form: Form, owner: str) -> str:
    """What the form says, for the client's permission prompt: its text as the app shows it
    (a file name the model chose in the draft approval is text, never Markdown), a heading
    in bold."""
    lines = [literal(form.title + (f" (asked by {owner})" if owner and owner != "vis" else ""))]
    if form.description:
        lines.append(literal(form.description))
    for node in walk(form.nodes):
        if isinstance(node, Heading):
            lines.append(f"**{literal_line(node.text)}**")
        elif isinstance(node, Paragraph):
            lines.append(literal(node.text))
    return "\n\n".join(lines)


def choices(form: Form) -> tuple[list[PermissionOption], dict[str, dict[str, Any]]] | None:
    """The options a client can pick from for ``form``, each with the values it submits:
    a confirmation, one choice, or the form as its defaults fill it; None when the person
    would have to type (a field without a default)."""
    fields = list(iter_fields(form.nodes))
    cancel = PermissionOption(option_id=CANCEL, name=form.cancel_label, kind="reject_once")
    if not fields:  # a confirmation: the draft approval, "continue?"
        submit = PermissionOption(option_id=SUBMIT, name=form.submit_label, kind="allow_once")
        return [submit, cancel], {SUBMIT: {}}
    if len(fields) == 1 and fields[0].type in (FieldType.SELECT, FieldType.CHECKBOX):
        field = fields[0]
        pairs = (
            [
                (f"{SUBMIT}:{n}", o.label or str(o.value), o.value)
                for n, o in enumerate(field.options)
            ]
            if field.type is FieldType.SELECT
            else [
                (f"{SUBMIT}:yes", f"{field.label}: yes", True),
                (f"{SUBMIT}:no", f"{field.label}: no", False),
            ]
        )
        options = [
            PermissionOption(option_id=i, name=name, kind="allow_once") for i, name, _ in pairs
        ]
        return [*options, cancel], {i: {field.name: value} for i, _, value in pairs}
    typed = [f for f in fields if f.type is not FieldType.CHECKBOX and f.default is None]
    initial = form.initial_values()
    if typed or form.check(initial):  # the person would have to type: not through options
        return None
    shown = ", ".join(f"{f.label or f.name}: {_shown(f, initial.get(f.name))}" for f in fields)
    submit = PermissionOption(
        option_id=SUBMIT, name=f"{form.submit_label} ({shown})"[:200], kind="allow_once"
    )
    return [submit, cancel], {SUBMIT: initial}


def _shown(field: Field, value: Any) -> str:
    return "•••" if field.is_secret else str(value)


class PermissionPresenter:
    """Shows each form as a permission request of session ``request.session_id``."""

    def __init__(self, connection: Any) -> None:
        self.connection = connection  # the AgentSideConnection to the client

    async def present(self, request: FormRequest) -> Mapping[str, Any] | Answer | None:
        from vis_core.frontend import Answer, AnswerReason

        form = request.form
        picked = choices(form)
        if picked is None or request.session_id is None:
            return Answer(reason=AnswerReason.UNDELIVERABLE)
        options, values = picked
        call_id = f"form-{request.id}"
        text = form_text(form, request.owner)
        await self.connection.session_update(
            request.session_id,
            start_tool_call(
                call_id,
                literal_line(form.title),
                kind="other",
                status="pending",
                content=[tool_content(text_block(text))],
            ),
        )
        outcome_status = "failed"
        try:
            response = await self.connection.request_permission(
                session_id=request.session_id,
                tool_call=ToolCallUpdate(tool_call_id=call_id, title=literal_line(form.title)),
                options=options,
            )
            outcome = response.outcome
            if isinstance(outcome, AllowedOutcome) and outcome.option_id in values:
                outcome_status = "completed"
                return dict(values[outcome.option_id])
            return None
        finally:
            await self.connection.session_update(
                request.session_id,
                update_tool_call(call_id, status=outcome_status),  # type: ignore[arg-type]
            )
