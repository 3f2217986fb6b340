"""One session's draft: entering and leaving it, and the roots that follow the session there.

The session's working copy is decided here and nowhere else: everything that acts on "the
workspace" (the sandbox, the host tools, the extension worker, checkpoints, the prompt) is
registered as a mover and moved when the session enters or leaves a draft.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar

from vis_core.drafts.errors import DraftError
from vis_core.drafts.hooks import NO_HOOKS, DraftHooks
from vis_core.drafts.service import Drafts
from vis_core.model.draft import Draft, DraftAction, DraftBackend, DraftReview
from vis_core.tools.display import plural

T = TypeVar("T")

Mover = Callable[[Path, Path], None]  # (workspace root, project root)
# (old workspace root, new one): what runs now (a block's sandbox) follows before the call returns
Follower = Callable[[Path, Path], Awaitable[None]]


class Announce(Protocol):
    """Emits the session's ``DraftChanged`` event; ``turn_id``: the turn it is a mark of,
    when no tool call of a turn is under way (the checks before a turn); ``commit``: an
    approval's commit."""

    async def __call__(
        self,
        action: DraftAction,
        draft: Draft,
        files: int,
        text: str,
        turn_id: str = "",
        commit: str = "",
    ) -> None: ...


async def _silent(
    action: DraftAction, draft: Draft, files: int, text: str, turn_id: str = "", commit: str = ""
) -> None:
    return None


def approved(result: dict[str, Any]) -> str:
    """What an approval did, for the person: "2 files committed to main"."""
    files = plural(len(result["files"]), "file")
    if result.get("target_branch"):
        return f"{files} committed to {result['target_branch']}"
    return f"{files} written to the workspace"


@dataclass(frozen=True)
class Roots:
    workspace: Path
    project_root: Path


def map_into(path: Path, live_top: Path, draft_top: Path) -> Path:
    """``path`` of the live tree at the same place in the draft (unchanged when outside)."""
    try:
        rel = path.resolve().relative_to(live_top.resolve())
    except ValueError:
        return path
    return draft_top / rel if rel.parts else draft_top


class SessionDrafts:
    """The draft ``session_id`` works in (at most one), and its roots."""

    def __init__(
        self,
        drafts: Drafts,
        session_id: str,
        workspace: Path,
        project_root: Path,
        announce: Announce = _silent,
        git_on_host: Callable[[], bool] = lambda: True,
    ) -> None:
        """``git_on_host``: whether a draft may be a git worktree (else a copy), asked at
        each :meth:`create`."""
        self.drafts = drafts
        self.git_on_host = git_on_host
        self.session_id = session_id
        self.live = Roots(workspace.resolve(), project_root.resolve())
        # the session's extension op hooks: given once its extension worker exists
        self.hooks: DraftHooks = NO_HOOKS
        self.announce = announce
        self._movers: list[Mover] = []
        self._followers: list[Follower] = []
        self._slot: tuple[str, Path] | None = None
        self._draft = self._resumable(drafts.of_session(session_id))
        self._shown: DraftReview | None = None
        # the draft's git steps take its index lock: two at once (the status bar's count of
        # its files beside a sync the person asked for) made one fail
        self._one_at_a_time = asyncio.Lock()

    async def _in_thread(self, function: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """``function`` of the drafts in a thread, after any other of this session's."""
        async with self._one_at_a_time:
            return await asyncio.to_thread(function, *args, **kwargs)

    @classmethod
    def alone(cls, drafts: Drafts, draft: Draft) -> SessionDrafts:
        """``draft`` without its session (deleted): acted on with no session's hooks."""
        workspace = Path(draft.workspace)
        made = cls(drafts, draft.session_id or "", workspace, workspace)
        made._draft = draft
        return made

    # -- where the session is ---------------------------------------------------------------

    @property
    def draft(self) -> Draft | None:
        return self._draft

    @property
    def own_draft(self) -> Draft | None:
        """The draft this session made and approves (not one it visits)."""
        return None if self._visiting else self._draft

    @property
    def _visiting(self) -> bool:
        """Whether the session works in another session's draft (:meth:`visit`)."""
        draft = self._draft
        return draft is not None and draft.session_id not in (None, self.session_id)

    def roots(self) -> Roots:
        """The session's working copy now: the draft's while in one, else the live one."""
        draft = self._draft
        if draft is None:
            return self.live
        live_top, draft_top = self._tops(draft)
        return Roots(
            Path(draft.root),
            map_into(self.live.project_root, live_top, draft_top),
        )

    def add_mover(self, mover: Mover) -> None:
        self._movers.append(mover)

    def add_follower(self, follower: Follower) -> None:
        """``follower`` runs when the session enters a draft, before the call returns."""
        self._followers.append(follower)

    def slot(self) -> Path | None:
        """The folder the session's next draft will be made in (``None`` in a draft)."""
        if self._draft is not None:
            return None
        if self._slot is None or not self._slot[1].is_dir():
            self._slot = self.drafts.reserve()
        return self._slot[1]

    def release_slot(self) -> None:
        """The session closes: its reserved folder goes, when no draft was made in it."""
        if self._slot is not None:
            self.drafts.release(self._slot[0])
            self._slot = None

    async def changed_files(self) -> list[str]:
        """The draft's files that approval would bring (git reads them: in a thread)."""
        draft = self._draft
        return [] if draft is None else await self._in_thread(self.drafts.changed_files, draft)

    async def review(self) -> DraftReview:
        """:meth:`changed_files` and the diff of what approval would bring."""
        draft = self._draft
        if draft is None:
            return DraftReview([], "", "")
        return await self._in_thread(self.drafts.review, draft)

    async def show(self) -> DraftReview:
        """:meth:`review`, as the person is shown it (``/draft``): what their approval lands
        (:attr:`shown`)."""
        self._shown = review = await self.review()
        return review

    @property
    def shown(self) -> DraftReview | None:
        """What :meth:`show` last showed of the current draft (None: nothing yet)."""
        return self._shown

    # -- the lifecycle ----------------------------------------------------------------------

    def draft_of(self, session_id: str) -> Draft | None:
        """The draft session ``session_id`` works in, when its folder is still there."""
        draft = self.drafts.of_session(session_id)
        return draft if draft is not None and Path(draft.root).is_dir() else None

    async def visit(self, draft: Draft) -> None:
        """Work in ``draft``, another session's (a child's in its parent's, a consulted
        session's fork in that session's): everything that acts on the workspace acts on it,
        and only its own session syncs, approves or discards it."""
        await self._move_into(draft, self.roots().workspace)

    async def create(self, label: str | None = None) -> Draft:
        if self._visiting:
            assert self._draft is not None
            raise DraftError(
                f"this session works in draft {self._draft.label} of session "
                f"{(self._draft.session_id or '')[:8]}: its changes land there"
            )
        slot = self._slot[0] if self._slot is not None else None
        before = self.roots().workspace
        draft = await self._in_thread(
            self.drafts.create,
            self.live.workspace,
            self.session_id,
            label,
            self.hooks,
            slot,
            git=self.git_on_host(),
        )
        self._slot = None
        await self._move_into(draft, before)
        text = f"Entered draft {draft.label} ({draft.backend}) at {draft.root}"
        await self.announce(DraftAction.ENTERED, draft, 0, text)
        return draft

    async def sync(self) -> list[str]:
        draft = self._need()
        files = await self._in_thread(self.drafts.sync, draft, self.hooks)
        text = f"Synced draft {draft.label}: {plural(len(files), 'file')} came in"
        await self.announce(DraftAction.SYNCED, draft, len(files), text)
        return files

    async def approve(self, message: str | None = None, reviewed: str = "") -> dict[str, Any]:
        """Approve the draft; ``reviewed``: the state the person was shown (refused when the
        draft changed since)."""
        draft = self._need()
        result = await self._in_thread(
            self.drafts.approve, draft, message, self.hooks, reviewed or None
        )
        self._enter(None)
        text = f"Approved draft {draft.label}: {approved(result)}"
        commit = str(result.get("commit") or "")  # kept: `vis replay` starts from before it
        await self.announce(DraftAction.APPROVED, draft, len(result["files"]), text, commit=commit)
        return result

    async def discard(self) -> None:
        draft = self._need()
        await self._in_thread(self.drafts.discard, draft, self.hooks)
        self._enter(None)
        text = f"Discarded draft {draft.label}; the live workspace is as it was"
        await self.announce(DraftAction.DISCARDED, draft, 0, text)

    async def refresh(self, turn_id: str = "") -> None:
        """Before turn ``turn_id``: a draft approved or discarded elsewhere (``vis drafts``,
        another Vis) is left, and the session works in the live workspace again; the mark
        saying so is that turn's."""
        draft = self._draft
        if draft is None:
            return
        owner = draft.session_id or self.session_id  # a visited draft's is another session
        if self.drafts.of_session(owner) == draft and Path(draft.root).is_dir():
            return
        self._enter(None)
        text = (
            f"Draft {draft.label} is gone (approved or discarded elsewhere); back in the workspace"
        )
        await self.announce(DraftAction.DISCARDED, draft, 0, text, turn_id)

    # -- helpers ----------------------------------------------------------------------------

    def _need(self) -> Draft:
        if self._draft is None:
            raise LookupError("this session is not in a draft; draft_create() makes one")
        if self._visiting:
            raise DraftError(
                f"draft {self._draft.label} is session {(self._draft.session_id or '')[:8]}'s: "
                "that session syncs, approves or discards it"
            )
        return self._draft

    async def _move_into(self, draft: Draft, before: Path) -> None:
        """Enter ``draft`` from the working copy ``before``; what runs now follows."""
        self._enter(draft)
        for follower in self._followers:
            await follower(before, Path(draft.root))

    def _enter(self, draft: Draft | None) -> None:
        self._draft = draft
        self._shown = None
        roots = self.roots()
        for mover in self._movers:
            mover(roots.workspace, roots.project_root)

    def _tops(self, draft: Draft) -> tuple[Path, Path]:
        tree = self.drafts.tree(draft)
        if draft.backend is DraftBackend.WORKTREE and draft.repo_root:
            return Path(draft.repo_root), tree
        return Path(draft.workspace), tree

    def _resumable(self, draft: Draft | None) -> Draft | None:
        """A resumed session is back in its draft, when its folder is still there."""
        if draft is None or not Path(draft.root).is_dir():
            return None
        if Path(draft.workspace).resolve() != self.live.workspace:
            return None  # a draft of another workspace: this Vis works elsewhere
        return draft
