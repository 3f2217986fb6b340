"""Drafts: create, sync, approve and discard the isolated working copies of sessions.

A draft lives in Vis's data folder (``drafts/<id>/``), never in the person's tree or index,
and its row in the store outlives the session and a killed Vis: it is listed until the
person approves or discards it, and never merged on its own.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from vis_core.drafts import files as draft_files
from vis_core.drafts import folder, guarded, landing, worktree
from vis_core.drafts.errors import DraftChanged, DraftError
from vis_core.drafts.hooks import NO_HOOKS, DraftHooks, DraftOp
from vis_core.model.draft import Draft, DraftBackend, DraftReview
from vis_core.model.lines import on_one_line
from vis_core.paths import VisPaths, private_dir
from vis_core.store import Store
from vis_core.tools.beneath import Escape

_LABEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,39}$")
MANIFEST = "base.json"


def new_label() -> str:
    return time.strftime("%m%d-") + os.urandom(2).hex()


def file_line(name: str, change: str) -> str:
    """One file of a review's summary: its name on one line (a line break in it escaped, so
    it cannot pass for another line) and what changed."""
    return f"{on_one_line(name)}  ({change})"


def _counted(counts: tuple[int, int] | None) -> str:
    return "binary" if counts is None else f"+{counts[0]} -{counts[1]}"


def check_label(label: str) -> str:
    """``label`` as a draft's (its branch is ``vis/draft/<label>``), or a :class:`DraftError`
    that says which labels are (not a str was re's "expected string or bytes-like object")."""
    if (
        not isinstance(label, str)
        or not _LABEL.fullmatch(label)
        or label.endswith(".lock")
        or ".." in label
    ):
        raise DraftError(
            f"draft label {label!r} is not usable: use up to 40 letters, digits, '.', '_' or "
            "'-', starting with a letter or digit"
        )
    return label


class Drafts:
    """The drafts of one Vis data folder; every call is synchronous (run it in a thread)."""

    def __init__(self, store: Store, data_dir: Path) -> None:
        self.store = store
        self.folder = data_dir / "drafts"
        self.data_dir = data_dir

    # -- reading ------------------------------------------------------------------------

    def of_session(self, session_id: str) -> Draft | None:
        return self.store.draft_of_session(session_id)

    def listed(self, workspace: Path | None = None) -> list[Draft]:
        return self.store.drafts(None if workspace is None else str(workspace))

    def find(self, key: str) -> Draft:
        """A draft by id, label or session id."""
        for draft in self.store.drafts():
            if key in (draft.id, draft.label, draft.session_id):
                return draft
        raise DraftError(f"no draft {key!r}; `vis drafts` lists them")

    def changed_files(self, draft: Draft) -> list[str]:
        """What approval would bring to the target: the files the draft changed."""
        if draft.backend is DraftBackend.COPY:
            return folder.changed(self.tree(draft), folder.load_manifest(self._manifest(draft)))
        return self._proposal(draft)[2]

    def review(self, draft: Draft) -> DraftReview:
        """What approval would bring (:meth:`changed_files`) and its diff (text, for the
        person): the change approval's commit makes on the target branch."""
        if draft.backend is DraftBackend.COPY:
            base = folder.load_manifest(self._manifest(draft))
            found = folder.changes(self.tree(draft), base)
            names = sorted(found)
            stat = tuple(
                file_line(n, "removed" if found[n] is None else "changed" if n in base else "new")
                for n in names
            )
            return DraftReview(names, "\n".join(stat), folder.state(found), stat)
        mine = worktree.staged_tree(self.tree(draft))
        old, new, names = self._proposal(draft, mine)
        if not names:
            return DraftReview(names, "", mine)
        live = Path(draft.repo_root or draft.workspace)  # the live attributes, not the draft's
        out = worktree.git(
            ["diff", "--no-color", "--no-ext-diff", "--no-textconv", "--stat", "-p", old, new], live
        )
        counts = worktree.line_counts(live, old, new)
        stat = tuple(file_line(n, _counted(counts.get(n))) for n in names)
        return DraftReview(names, out.stdout.decode("utf-8", "replace"), mine, stat)

    def _proposal(self, draft: Draft, mine: str | None = None) -> tuple[str, str, list[str]]:
        """(from, to, files) of a git draft whose working copy's tree is ``mine`` (read now
        when not given): the target branch's head, the tree approval would commit on it and
        the files that differ; where the draft's change does not apply (a conflict, no
        target branch), its change from its base."""
        mine = mine or worktree.staged_tree(self.tree(draft))
        assert draft.repo_root is not None
        top = Path(draft.repo_root)
        target = draft.target_branch
        if target and worktree.branch_exists(top, target):
            try:
                change = worktree.draft_change(top, target, draft.base, mine)
            except DraftError:  # a conflict, or a merge git cannot make without a driver
                pass
            else:
                return change.head, change.tree, change.files
        return draft.base, mine, worktree.tree_files(top, draft.base, mine)

    # -- the lifecycle ------------------------------------------------------------------

    def create(
        self,
        workspace: Path,
        session_id: str | None,
        label: str | None = None,
        hooks: DraftHooks = NO_HOOKS,
        slot: str | None = None,
        *,
        git: bool = True,
    ) -> Draft:
        """A new draft of ``workspace`` for ``session_id`` (which must not be in one), made
        in the reserved empty folder ``slot`` (:meth:`reserve`) when given; a copy, also in a
        git repository, unless ``git`` (Vis may run git there)."""
        workspace = workspace.resolve()
        current = self.of_session(session_id) if session_id is not None else None
        if current is not None and not Path(current.root).is_dir():
            self.store.forget_draft(current.id)  # its folder was deleted; its branch stays
            current = None
        if current is not None:
            raise DraftError(
                f"this session is already in draft {current.label}; approve or discard it first"
            )
        label = check_label(label or new_label())
        if any(d.label == label for d in self.store.drafts(str(workspace))):
            raise DraftError(f"a draft labelled {label!r} exists already; choose another label")
        draft_id = slot if slot is not None and self._empty_slot(slot) else os.urandom(8).hex()
        home = private_dir(private_dir(self.folder) / draft_id)
        tree = home / "tree"
        repo = worktree.repository_of(workspace) if git else None
        backend = DraftBackend.COPY if repo is None else DraftBackend.WORKTREE
        root = tree if repo is None or not repo.relative else tree / repo.relative
        args = {
            "workspace_id": draft_id,
            "label": label,
            "root": str(root),
            "repo_root": None if repo is None else str(repo.top),
            "backend": str(backend),
        }
        try:
            hooks.before(str(DraftOp.CREATE), [args])
        except BaseException:
            draft_files.remove_tree(home)
            raise
        branch = f"vis/draft/{label}"
        try:
            if repo is None:
                manifest = folder.create(workspace, tree, self._skip())
                folder.save_manifest(home / MANIFEST, manifest)
                base = MANIFEST
            else:
                base = worktree.create(
                    repo, tree, branch, self._committer(hooks, args, branch), self._skip()
                )
        except BaseException:
            if repo is not None:
                worktree.remove(repo.top, tree, branch)
            draft_files.remove_tree(home)
            raise
        draft = Draft(
            id=draft_id,
            label=label,
            backend=backend,
            root=str(root),
            workspace=str(workspace),
            repo_root=None if repo is None else str(repo.top),
            base=base,
            branch=None if repo is None else branch,
            target_branch=None if repo is None else repo.branch,
            session_id=session_id,
            created=time.time(),
        )
        self.store.save_draft(draft)
        hooks.after(str(DraftOp.CREATE), [args], self.receipt(draft))
        return draft

    def sync(self, draft: Draft, hooks: DraftHooks = NO_HOOKS) -> list[str]:
        """Bring the target's new commits (outside git: the live workspace's changes) in."""
        args = self._args(draft)

        def run() -> list[str]:
            tree = self.tree(draft)
            if draft.backend is DraftBackend.COPY:
                base = folder.load_manifest(self._manifest(draft))
                updated, moved = folder.sync(Path(draft.workspace), tree, base, self._skip())
                folder.save_manifest(self._manifest(draft), updated)
                return moved
            assert draft.repo_root is not None and draft.branch is not None
            commit = self._committer(hooks, args, draft.branch)
            return worktree.sync(
                tree, Path(draft.repo_root), draft.target_branch, draft.label, commit
            )

        return hooks.around(DraftOp.SYNC, args, run)

    def approve(
        self,
        draft: Draft,
        message: str | None = None,
        hooks: DraftHooks = NO_HOOKS,
        reviewed: str | None = None,
    ) -> dict[str, Any]:
        """Land the draft's changes on the target (git: one commit on the target branch's
        head, only the draft's own change) and in the live workspace; then the draft is gone.
        A conflict (or a file the person changed in the same places) refuses and changes
        nothing; what the person had not committed stays so, and a draft that writes into a
        ``.git`` is refused. ``reviewed``: the state of the draft the person was shown
        (:meth:`review`); a draft changed since is refused. A path that leads out of the
        workspace through a link is refused as a :class:`DraftError` too."""
        try:
            return self._approve(draft, message or f"vis draft {draft.label}", hooks, reviewed)
        except Escape as exc:
            raise DraftError(
                f"draft {draft.label} was not approved: {exc}. Nothing is written through a "
                "link; the draft is kept"
            ) from exc

    def _approve(
        self, draft: Draft, message: str, hooks: DraftHooks, reviewed: str | None
    ) -> dict[str, Any]:
        if draft.backend is DraftBackend.COPY:
            return self._approve_copy(draft, message, hooks, reviewed)
        assert draft.repo_root is not None and draft.branch is not None
        tree = self.tree(draft)
        top = Path(draft.repo_root)
        # what lands is fixed here, as the hooks see it: a later write in the draft is not in
        mine = worktree.staged_tree(tree)
        if reviewed and mine != reviewed:
            raise DraftChanged(draft.label, worktree.tree_files(tree, reviewed, mine))
        change = worktree.draft_change(top, draft.target_branch, draft.base, mine)
        guarded.refuse_repository(draft.label, change.files, self.landing_roots(draft))
        target = draft.target_branch or ""
        args = self._args(
            draft, branch=draft.branch, target_branch=target, files=change.files, message=message
        )

        def run() -> dict[str, Any]:
            landing_plan = landing.plan(top, target, change.head, change.tree, change.files)
            new = change.head  # nothing to bring
            if change.files:
                commit = self._committer(hooks, args, target)
                new = commit(
                    tree,
                    message,
                    change.files,
                    lambda: worktree.commit_change(tree, change, message),
                )
            written = landing.land(top, target, change.head, new, landing_plan)
            self._remove(draft)
            return {
                "files": change.files,
                "written": written,
                "commit": new,
                "target_branch": target,
            }

        return hooks.around(DraftOp.APPROVE, args, run)

    def _approve_copy(
        self, draft: Draft, message: str, hooks: DraftHooks, reviewed: str | None
    ) -> dict[str, Any]:
        """Copy the draft's changed files back into the workspace (no git)."""
        files = self.changed_files(draft)
        guarded.refuse_repository(draft.label, files, self.landing_roots(draft))
        args = self._args(
            draft,
            branch=draft.branch,
            target_branch=draft.target_branch,
            files=files,
            message=message,
        )

        def run() -> dict[str, Any]:
            base = folder.load_manifest(self._manifest(draft))
            written = folder.approve(
                Path(draft.workspace), self.tree(draft), base, reviewed, draft.label
            )
            self._remove(draft)
            return {"files": written, "commit": None, "target_branch": None}

        return hooks.around(DraftOp.APPROVE, args, run)

    def discard(self, draft: Draft, hooks: DraftHooks = NO_HOOKS) -> None:
        """Delete the draft and its branch; the live workspace is untouched."""
        hooks.around(DraftOp.DISCARD, self._args(draft), lambda: self._remove(draft))

    def receipt(self, draft: Draft) -> dict[str, Any]:
        return {
            "workspace_id": draft.id,
            "label": draft.label,
            "backend": str(draft.backend),
            "root": draft.root,
            "branch": draft.branch,
            "target_branch": draft.target_branch,
        }

    # -- slots: where a session's next draft will be made -------------------------------

    def reserve(self) -> tuple[str, Path]:
        """A new empty folder for a draft not made yet (the jail shows it read-only, so a
        draft made in it mid-block can become the block's writable root)."""
        slot = os.urandom(8).hex()
        return slot, private_dir(private_dir(self.folder) / slot)

    def release(self, slot: str) -> None:
        """The reserved folder ``slot`` removed again, when no draft was made in it."""
        if self._empty_slot(slot):
            (self.folder / slot).rmdir()

    def _empty_slot(self, slot: str) -> bool:
        folder = self.folder / slot
        return (
            re.fullmatch(r"[0-9a-f]{16}", slot) is not None
            and folder.is_dir()
            and not folder.is_symlink()
            and not any(folder.iterdir())
            and not any(d.id == slot for d in self.store.drafts())
        )

    # -- helpers ------------------------------------------------------------------------

    def tree(self, draft: Draft) -> Path:
        """The draft's whole working copy (the repository's top in a worktree)."""
        return self.folder / draft.id / "tree"

    def landing_roots(self, draft: Draft) -> tuple[Path, Path]:
        """The folders the draft's file names are relative to: its copy, and where approval
        writes them (the workspace; the repository's top in a worktree)."""
        return self.tree(draft), Path(draft.repo_root or draft.workspace)

    def _manifest(self, draft: Draft) -> Path:
        return self.folder / draft.id / MANIFEST

    def _skip(self) -> tuple[Path, ...]:
        paths = VisPaths.from_env()
        return (self.data_dir, paths.config_dir, paths.log_dir)

    def _args(self, draft: Draft, **more: Any) -> dict[str, Any]:
        """What the drafts' op hooks are given of ``draft``, and ``more`` after it."""
        return {
            "workspace_id": draft.id,
            "label": draft.label,
            "root": draft.root,
            "repo_root": draft.repo_root,
            "backend": str(draft.backend),
            **more,
        }

    def _committer(self, hooks: DraftHooks, args: dict[str, Any], branch: str) -> worktree.Commit:
        def commit(tree: Path, message: str, files: list[str], make: Callable[[], str]) -> str:
            call = {**args, "branch": branch, "message": message, "files": list(files)}
            hooks.before(str(DraftOp.GIT_COMMIT), [call])
            made = make()
            hooks.after(str(DraftOp.GIT_COMMIT), [call], {"commit": made})
            return made

        return commit

    def _remove(self, draft: Draft) -> None:
        home = self.folder / draft.id
        if draft.backend is DraftBackend.WORKTREE and draft.repo_root:
            worktree.remove(Path(draft.repo_root), home / "tree", draft.branch)
        draft_files.remove_tree(home)
        self.store.forget_draft(draft.id)
