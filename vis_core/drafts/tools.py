"""``draft_create``, ``draft_sync``, ``draft_approve`` and ``draft_discard``: the sandbox's
functions over the session's draft, with a transcript mark for each change."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from vis_core.drafts.errors import DraftError
from vis_core.drafts.session import SessionDrafts
from vis_core.model.activity import Activity, ActivityPresentation, SymbolTag
from vis_core.model.draft import Draft
from vis_core.tools.display import one_line
from vis_core.tools.registry import HostTool

# (draft, files, diff) -> None when the approval may go on, else why not
Approver = Callable[[Draft, list[str], str], Awaitable[str | None]]


def draft_tools(drafts: SessionDrafts, approver: Approver) -> list[HostTool]:
    """The four draft functions of one session."""

    async def draft_create(label: str | None = None) -> dict[str, Any]:
        """Enter a new draft: an isolated copy of the workspace (a git worktree on branch
        `vis/draft/<label>` carrying the uncommitted changes, a copy outside git) where every
        later tool call, shell command and block works, while the live workspace stays as it
        is. The person approves or discards it. From the next block on, plain Python runs in
        the draft too; end this block after the call. Returns the receipt (label, backend,
        root)."""
        draft = await drafts.create(label)
        return drafts.drafts.receipt(draft)

    async def draft_sync() -> dict[str, Any]:
        """Bring the target branch's new commits (outside git: the live workspace's changes)
        into the draft. A conflict fails the call, names the files and leaves the draft as
        it was."""
        draft = _current(drafts)
        files = await drafts.sync()
        return {"label": draft.label, "files": files}

    async def draft_approve(message: str | None = None) -> dict[str, Any]:
        """Ask the person to approve the draft: its changes are committed (`message`), merged
        into the target branch and the live workspace, and the session leaves the draft. A
        conflict, or a file the person changed since, refuses with the files."""
        draft = _current(drafts)
        files = drafts.changed_files()
        refusal = await approver(draft, files, drafts.drafts.diff(draft))
        if refusal is not None:
            raise PermissionError(refusal)
        return await drafts.approve(message)

    async def draft_discard() -> dict[str, Any]:
        """Leave and delete the draft; the live workspace is untouched."""
        draft = _current(drafts)
        await drafts.discard()
        return {"label": draft.label, "discarded": True}

    functions: list[Callable[..., Any]] = [draft_create, draft_sync, draft_approve, draft_discard]
    return [
        HostTool(
            name=fn.__name__,
            fn=fn,
            tag=SymbolTag.MUTATION,
            activity=Activity("Draft", render=_render(fn.__name__)),
        )
        for fn in functions
    ]


def _current(drafts: SessionDrafts) -> Draft:
    draft = drafts.draft
    if draft is None:
        raise DraftError("this session is not in a draft; draft_create() makes one")
    return draft


def _render(name: str) -> Callable[..., ActivityPresentation]:
    verb = name.removeprefix("draft_")

    def render(
        *, phase: str, args: Any = (), kwargs: Any = None, result: Any = None, error: Any = None
    ) -> ActivityPresentation:
        if phase == "failure":
            return ActivityPresentation("Draft", f"{verb}: {one_line(str(error), 200)}")
        if isinstance(result, dict) and result.get("label"):
            return ActivityPresentation("Draft", f"{verb} {result['label']}")
        return ActivityPresentation("Draft", verb)

    return render
