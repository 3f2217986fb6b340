"""``draft_create``, ``draft_sync``, ``draft_approve`` and ``draft_discard``: the sandbox's
functions over the session's draft, with a transcript mark for each change."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from vis_core.drafts import guarded
from vis_core.drafts.errors import DraftError
from vis_core.drafts.session import SessionDrafts
from vis_core.model.activity import Activity, ActivityPresentation, RenderPhase, SymbolTag
from vis_core.model.draft import Draft, DraftReview
from vis_core.text_limits import one_line
from vis_core.tools.registry import HostTool

# (draft, what approval would bring) -> None when the approval may go on, else why not
Approver = Callable[[Draft, DraftReview], Awaitable[str | None]]


def draft_tools(drafts: SessionDrafts, approver: Approver) -> list[HostTool]:
    """The four draft functions of one session."""

    async def draft_create(label: str | None = None) -> dict[str, Any]:
        """Work in a new draft: an isolated copy of the workspace (git: branch
        vis/draft/<label>) that the person approves or discards; the workspace stays as is.
        The rest of the block already works in the draft"""
        draft = await drafts.create(label)
        return {**drafts.drafts.receipt(draft), "cwd": draft.root}

    async def draft_sync() -> dict[str, Any]:
        """Bring the target branch's new commits into the draft; a conflict names the files."""
        draft = _current(drafts)
        files = await drafts.sync()
        return {"label": draft.label, "files": files}

    async def draft_approve(message: str | None = None) -> dict[str, Any]:
        """Ask the person to approve the draft: its changes committed to the branch and
        written to the workspace; then leave it."""
        draft = _current(drafts)
        review = await drafts.review()
        roots = drafts.drafts.landing_roots(draft)
        guarded.refuse_repository(draft.label, review.files, roots)  # before the person is asked
        refusal = await approver(draft, review)
        if refusal is not None:
            raise PermissionError(refusal)
        result = await drafts.approve(message, review.state)  # what the person was shown
        return {**result, "label": draft.label, "cwd": str(drafts.roots().workspace)}

    async def draft_discard() -> dict[str, Any]:
        """Leave and delete the draft; the workspace is untouched."""
        draft = _current(drafts)
        await drafts.discard()
        return {"label": draft.label, "discarded": True, "cwd": str(drafts.roots().workspace)}

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
        if phase == RenderPhase.FAILURE:
            return ActivityPresentation("Draft", f"{verb}: {one_line(str(error), 200)}")
        if isinstance(result, dict) and result.get("label"):
            return ActivityPresentation("Draft", f"{verb} {result['label']}")
        return ActivityPresentation("Draft", verb)

    return render
