"""Plan mode: a session that reads and plans but changes nothing until the person approves."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from vis_core.events import UserContext
from vis_core.model.activity import SymbolTag
from vis_core.model.turn import ContextOrigin

if TYPE_CHECKING:
    from vis_core.agent.session import AgentSession

STATE_KEY = "vis.plan"  # the store's state of a session in plan mode (kept for a resume)
# What the model reads with each request of a turn in plan mode: in the conversation, not in
# the system prompt, so the prompt (the cached prefix of every request) never changes.
PLANNING_NOTE = (
    "[Vis: plan mode is on. The person wants a plan before any change. Read, search and run "
    "Python that only looks; change nothing: patch, shell, run_tests and every tool that "
    "changes things are refused, and your blocks cannot write the workspace (scratch files go "
    "to /tmp). End your answer with the plan: the steps, the files each one changes and how "
    "to check the result. The person then approves it or asks for changes.]"
)
LEFT_NOTE = "[Vis: plan mode is off: you may change files and run commands again.]"
APPROVED = (
    "[Vis: the person approved the plan; plan mode is off.] Carry out the plan you wrote "
    "above, step by step, and check the result as it says:\n\n{plan}"
)
# The tools that change only what the model reads (its context, the attachment store).
ALLOWED_CHANGES = frozenset({"fold_session", "attach"})
REFUSED_TAGS = (SymbolTag.MUTATION, SymbolTag.EXTERNAL)
RUNS_COMMANDS = frozenset({"shell", "run_tests"})  # Vis's own tools that run the project's code


class PlanModeRefusal(PermissionError):
    """A tool call refused because the session is in plan mode."""


class PlanMode:
    """Whether one session is in plan mode; the places that enforce it follow its changes."""

    def __init__(self, active: bool = False, save: Callable[[bool], None] | None = None) -> None:
        """``save``: keeps the state with the session (a resumed session still plans)."""
        self.active = active
        self._save = save
        self._followers: list[Callable[[bool], None]] = []
        self._left = False  # the next request says plan mode ended (once)

    def follow(self, follower: Callable[[bool], None]) -> None:
        """Call ``follower(active)`` at each change (the sandbox restarts read-only)."""
        self._followers.append(follower)

    def set(self, active: bool, *, told: bool = False) -> bool:
        """Enter or leave plan mode; whether that changed anything. ``told``: the next request
        says itself that plan mode ended (an approved plan)."""
        if active == self.active:
            return False
        self.active = active
        self._left = not active and not told
        if self._save is not None:
            self._save(active)
        for follower in self._followers:
            follower(active)
        return True

    def refusal(self, name: str, tag: SymbolTag, owner: str) -> PlanModeRefusal | None:
        """Why the tool ``name`` may not run now; None when it may."""
        if not self.active:
            return None
        if owner == "vis" and name in ALLOWED_CHANGES:
            return None
        if tag not in REFUSED_TAGS and not (owner == "vis" and name in RUNS_COMMANDS):
            return None
        what = "runs commands" if name in RUNS_COMMANDS else "may change things"
        return PlanModeRefusal(
            f"{name}: refused in plan mode ({name} {what}); the person asked for a plan "
            "first. Finish the plan in your answer; the person approves it to leave plan mode"
        )

    async def tell(self, session: AgentSession, turn_id: str) -> None:
        """Join the plan-mode note (or, once, the note that it ended) to turn ``turn_id``'s
        request."""
        text = PLANNING_NOTE if self.active else LEFT_NOTE if self._left else None
        self._left = False
        if text is not None:
            await session.emit(
                UserContext(
                    session.id, turn_id=turn_id, origin=ContextOrigin.PLAN, title="plan", text=text
                )
            )
