"""Plan mode: a session that reads and plans but changes nothing until the person approves."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
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
# Child sessions help a plan: while the parent plans they are read-only (a writer is refused).
CHILD_SESSIONS = frozenset({"run_session", "consult"})
REFUSED_TAGS = (SymbolTag.MUTATION, SymbolTag.EXTERNAL)
RUNS_COMMANDS = frozenset({"shell", "run_tests"})  # Vis's own tools that run the project's code
# The handle methods that change things yet stay allowed: stopping a command only ends work.
ALLOWED_HANDLE_METHODS = frozenset({"stop"})


class PlanModeRefusal(PermissionError):
    """A tool call refused because the session is in plan mode."""


class PlanMode:
    """Whether one session is in plan mode; the places that enforce it follow its changes."""

    def __init__(self, active: bool = False, save: Callable[[bool], None] | None = None) -> None:
        """``save``: keeps the state with the session (a resumed session still plans)."""
        self.active = active
        self._save = save
        self._followers: list[Callable[[bool], Awaitable[None] | None]] = []
        self._pending: list[Awaitable[None]] = []  # followers' work the next turn waits for
        self._left = False  # the next request says plan mode ended (once)

    def follow(self, follower: Callable[[bool], Awaitable[None] | None]) -> None:
        """Call ``follower(active)`` at each change (the sandbox stops its writable child);
        what it returns to wait for is done before the next turn begins."""
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
            pending = follower(active)
            if pending is not None:
                self._pending.append(pending)
        return True

    def refusal(self, name: str, tag: SymbolTag, owner: str) -> PlanModeRefusal | None:
        """Why the tool ``name`` may not run now; None when it may."""
        if not self.active:
            return None
        if owner == "vis" and (name in ALLOWED_CHANGES or name in CHILD_SESSIONS):
            return None
        if tag not in REFUSED_TAGS and not (owner == "vis" and name in RUNS_COMMANDS):
            return None
        what = "runs commands" if name in RUNS_COMMANDS else "may change things"
        return PlanModeRefusal(
            f"{name}: refused in plan mode ({name} {what}); the person asked for a plan "
            "first. Finish the plan in your answer; the person approves it to leave plan mode"
        )

    def handle_refusal(self, name: str, method: str, tag: SymbolTag) -> PlanModeRefusal | None:
        """Why the handle method ``name`` (``shell.type``) may not run now; None when it may. A
        command started before plan mode runs on with a writable workspace: typing into it
        (found again with ``shells()``) would write, so a changing method is refused."""
        if not self.active or method in ALLOWED_HANDLE_METHODS or tag not in REFUSED_TAGS:
            return None
        return PlanModeRefusal(
            f"{name}: refused in plan mode ({name} may change things); the person asked for "
            "a plan first. Reading its output (logs, wait) and stop() still work"
        )

    async def tell(self, session: AgentSession, turn_id: str) -> None:
        """Join the plan-mode note (or, once, the note that it ended) to turn ``turn_id``'s
        request, once what entering or leaving it started is done."""
        pending, self._pending = self._pending, []
        for work in pending:
            await work
        text = PLANNING_NOTE if self.active else LEFT_NOTE if self._left else None
        self._left = False
        if text is not None:
            await session.emit(
                UserContext(
                    session.id, turn_id=turn_id, origin=ContextOrigin.PLAN, title="plan", text=text
                )
            )
