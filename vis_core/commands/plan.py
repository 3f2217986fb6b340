"""``/plan``: enter plan mode (read-only until the person approves a plan), approve, leave."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from vis_core.agent.plan import APPROVED
from vis_core.commands import CommandResult, PromptToSend, err, ok, send_prompt
from vis_core.extension.declarations import SlashCommand
from vis_core.model.turn import TurnStatus

if TYPE_CHECKING:
    from vis_core.agent.session import AgentSession
    from vis_core.command_host import CommandDeps
    from vis_core.extension.forms import Form

USAGE = "/plan [REQUEST | approve [NOTES] | off]"
HOW_TO_LEAVE = (
    "`/plan approve [NOTES]` leaves plan mode and sends the model's plan as the next request; "
    "`/plan off` leaves it without running anything."
)


def entered_text(deps: CommandDeps, session_id: str) -> str:
    """What plan mode holds back in this session, with the jail on or off."""
    jail, _ = deps.space.jail_mode(session_id)
    held = (
        "The jail shows the workspace read-only to the model's blocks (only /tmp takes writes)."
        if jail
        else "The jail is off: tools refuse changes, but a block's plain Python can still "
        "write files (and start programs) as you can."
    )
    return f"Vis refuses patch, shell, run_tests and tools that change things. {held} "


def last_plan(deps: CommandDeps, session: AgentSession) -> str | None:
    """The answer the model ended its latest turn with (the plan), if it ended with one."""
    turns = deps.store.turns_page(session.id, limit=1)
    turn = turns[-1] if turns else None
    if turn is None or turn.status is not TurnStatus.COMPLETED or not turn.content.strip():
        return None
    return turn.content.strip()


def approve(deps: CommandDeps, session: AgentSession, notes: str) -> CommandResult:
    """Leave plan mode and send the latest plan (with the person's ``notes``) as a request."""
    plan = last_plan(deps, session)
    if plan is None:
        return err(
            "No plan to approve",
            "The latest turn did not end with an answer. Ask the model for its plan first, "
            "or leave plan mode with `/plan off`.",
        )
    session.plan.set(False, told=True)
    text = APPROVED.format(plan=plan) + (f"\n\nThe person adds: {notes}" if notes else "")
    return send_prompt("Plan approved", PromptToSend(text, label="/plan approve"))


def plan_command(deps: CommandDeps) -> SlashCommand:
    """The built-in ``/plan``."""

    def run(ctx: dict[str, Any]) -> CommandResult:
        session: AgentSession | None = ctx.get("session")
        if session is None:
            return err("No session", "Open a session first.")
        raw = ctx["raw"].strip()
        word, _, rest = raw.partition(" ")
        if session.running:
            return err("/plan waits for the turn", "Try again when the turn has ended.")
        if word == "approve":
            return approve(deps, session, rest.strip())
        if word == "off" and not rest:
            if not session.plan.set(False):
                return ok("Not in plan mode", f"`{USAGE}`")
            return ok("Plan mode off", "The model may change files and run commands again.")
        entered = session.plan.set(True)
        if raw:
            return send_prompt("Plan mode on", PromptToSend(raw, label="/plan"))
        title = "Plan mode on" if entered else "Already in plan mode"
        return ok(title, entered_text(deps, session.id) + HOW_TO_LEAVE)

    return SlashCommand(
        "plan", run, "Plan first: the model reads but changes nothing until you approve", USAGE
    )


def approval_form() -> Form:
    """What the app asks after a turn in plan mode: approve the plan (with notes) or plan on."""
    from vis_core.extension.forms import Form, multiline, paragraph

    return Form(
        "Approve the plan?",
        (
            paragraph(
                "Approve: Vis leaves plan mode and sends the model's plan as your next request. "
                "Keep planning: the session stays read-only; write what to change."
            ),
            multiline("notes", "Notes for the model (optional)"),
        ),
        submit_label="Approve and run",
        cancel_label="Keep planning",
        timeout_ms=0,
    )
