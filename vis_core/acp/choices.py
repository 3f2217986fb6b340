"""What a client can pick for a session: modes (plan mode), models, slash commands."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from acp.schema import (
    AvailableCommand,
    AvailableCommandInput,
    SessionConfigOptionSelect,
    SessionConfigSelectOption,
    SessionMode,
    SessionModeState,
    UnstructuredCommandInput,
)

from vis_core.frontend import SCREEN_ONLY

if TYPE_CHECKING:
    from vis_core.frontend import Frontend, Session

DEFAULT_MODE, PLAN_MODE = "default", "plan"
MODEL_OPTION = "model"
MAX_MODELS = 40


def modes(session: Session) -> SessionModeState:
    """Vis's modes: working, or plan mode (reads and plans, changes nothing)."""
    return SessionModeState(
        current_mode_id=PLAN_MODE if session.plan.active else DEFAULT_MODE,
        available_modes=[
            SessionMode(id=DEFAULT_MODE, name="Default", description="Read, change and run."),
            SessionMode(
                id=PLAN_MODE,
                name="Plan",
                description="Read and plan; nothing changes until you approve (/plan approve).",
            ),
        ],
    )


def model_options(core: Frontend, session: Session) -> list[Any]:
    """The model picker: the session's model, recent and configured ones, the known models
    of providers with a key."""
    current = session.model.label
    entries = [e for e in core.model_entries(current=current) if e.ready or e.id == current]
    values = list(dict.fromkeys([current, *(e.id for e in entries)]))[:MAX_MODELS]
    return [
        SessionConfigOptionSelect(
            id=MODEL_OPTION,
            name="Model",
            category="model",
            type="select",
            current_value=current,
            options=[SessionConfigSelectOption(value=v, name=v) for v in values],
        )
    ]


def commands(core: Frontend) -> list[AvailableCommand]:
    """The slash commands a prompt may start with (those that need the app's screens are
    left out, as in ``vis run``)."""
    shown = []
    for info in core.commands():
        if info.name in SCREEN_ONLY:
            continue
        hint = info.usage.partition(" ")[2].strip() if info.usage else ""
        shown.append(
            AvailableCommand(
                name=info.name,
                description=(info.doc or info.usage or info.name).splitlines()[0],
                input=AvailableCommandInput(root=UnstructuredCommandInput(hint=hint))
                if hint
                else None,
            )
        )
    return shown
