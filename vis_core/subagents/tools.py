"""``run_session`` and ``consult`` for the model, and the tool set of a read-only session."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from vis_core.extension.context import current_call
from vis_core.model.activity import (
    Activity,
    ActivityMarkdown,
    ActivityPresentation,
    RenderPhase,
    SymbolTag,
)
from vis_core.subagents.service import CallSite, SubagentError, Subagents, failure
from vis_core.text_limits import one_line
from vis_core.tools.registry import HostTool, ToolRegistry

if TYPE_CHECKING:
    from vis_core.agent.session import AgentSession

# Tools a read-only session keeps although they are tagged as changes: they change only the
# session itself (its context, its attachments) or start read-only children.
KEPT_WHEN_READ_ONLY = frozenset({"fold_session", "attach", "run_session", "consult"})
REFUSED_TAGS = frozenset({SymbolTag.MUTATION, SymbolTag.VERIFICATION})


class ReadOnlyError(PermissionError):
    """A read-only session called a tool that changes files or runs commands."""


def _render(label: str, asked_name: str, asked_at: int) -> Any:
    """The Activity of a child session call; ``asked_name``/``asked_at``: the argument that
    holds what the child is asked, shown when the row opens."""

    def render(
        *, phase: str, args: Any = (), kwargs: Any = None, result: Any = None, error: Any = None
    ) -> ActivityPresentation:
        given = [_shown(a) for a in (*(args or ()), *(kwargs or {}).values())]
        target = one_line(" ".join(given), 100)
        if phase == RenderPhase.FAILURE:
            return ActivityPresentation(label, one_line(f"{target}: {error}", 200))
        if phase == RenderPhase.SUCCESS:
            answer = result.get("answer", "") if isinstance(result, dict) else str(result)
            title = result.get("title") if isinstance(result, dict) else None
            summary = f"{title or 'untitled'} · {target}" if title is not None else target
            summary += f" → {one_line(answer, 80)}" if answer else ""
            return ActivityPresentation(
                label, one_line(summary, 200), (ActivityMarkdown(answer),) if answer else ()
            )
        given_args = tuple(args or ())
        asked = (kwargs or {}).get(asked_name)
        if asked is None and len(given_args) > asked_at:
            asked = given_args[asked_at]
        content = (ActivityMarkdown(str(asked)),) if asked else ()
        return ActivityPresentation(label, target, content)  # opens to show the request

    return render


def _shown(value: Any) -> str:
    """An argument as the Activity names it (a ``list_sessions()`` row by its title)."""
    if isinstance(value, dict):
        return str(value.get("title") or value.get("id") or value)
    return str(value)


def _parent(what: str) -> tuple[AgentSession, CallSite]:
    call = current_call()
    session = call.session if call is not None else None
    if call is None or session is None:
        raise SubagentError(f"{what} runs only in a block of a session")
    site = CallSite(call.turn_id, call.iteration_id, call.activity_id)
    return session, site  # type: ignore[return-value]


def subagent_tools(subagents: Subagents, workspace: str | None) -> list[HostTool]:
    """The model's ``run_session`` and ``consult``; ``workspace``: the sessions ``consult``
    reaches (``None``: every workspace's, as ``sessions_scope = "all"``)."""

    async def run_session(request: str, model: str | None = None, read_only: bool = True) -> str:
        """A new child session answers `request` in one turn; `asyncio.gather` runs several.

        Returns the child's answer. Several run at once with
        `await asyncio.gather(run_session(a), run_session(b))`. `model`: 'provider/model'
        of this session's provider, or one setting subagent_models allows (default: this
        session's model). The child is read-only; `read_only=False` lets it change
        files in a draft of its own (the answer names it; the person approves it). Limits:
        settings subagent_depth and subagent_concurrency (SubagentLimitError)."""
        parent, site = _parent("run_session()")
        answer = await subagents.run(
            parent, request, model=model, read_only=read_only is not False, site=site
        )
        if answer.status.value != "completed":
            raise SubagentError(failure("run_session()", answer))
        return answer.text()

    async def consult(session: Any, question: str) -> dict[str, Any]:
        """Ask another stored session `question`; it answers in a read-only fork of itself.

        `session`: an id, a prefix or a `list_sessions()` row. The original session never
        changes. Returns `session_id`, `title` (the consulted session's), `answer` and
        `fork_id`."""
        parent, site = _parent("consult()")
        return await subagents.consult(parent, session, question, site=site, workspace=workspace)

    return [
        HostTool(
            "run_session",
            run_session,
            SymbolTag.EXTERNAL,
            Activity("Child session", render=_render("Child session", "request", 0)),
        ),
        HostTool(
            "consult",
            consult,
            SymbolTag.OBSERVATION,
            Activity("Consult session", render=_render("Consult session", "question", 1)),
        ),
    ]


def read_only_registry(registry: ToolRegistry) -> ToolRegistry:
    """``registry`` with every tool that changes files or runs commands (tagged mutation or
    verification: ``patch``, ``shell``, ``run_tests``, an extension's writes) refusing."""
    kept = []
    for tool in registry:
        if tool.tag not in REFUSED_TAGS or tool.name in KEPT_WHEN_READ_ONLY:
            kept.append(tool)
            continue
        kept.append(
            HostTool(
                tool.name,
                _refuser(tool.name),
                tool.tag,
                Activity(tool.activity.label if tool.activity else tool.name),
                owner="vis",
                is_hidden=tool.is_hidden,
                aliases=tool.aliases,
            )
        )
    return ToolRegistry(kept)


def _refuser(name: str) -> Any:
    def refuse(*args: Any, **kwargs: Any) -> None:
        """Refused: this session is read-only."""
        raise ReadOnlyError(
            f"{name} is refused: this is a read-only child session, which may read but not "
            "change files or run commands. Report what should change in your answer instead"
        )

    return refuse
