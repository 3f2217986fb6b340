"""The ``worktree`` backend: a draft is a git worktree on branch ``vis/draft/<label>``.

Made with ``--no-checkout`` and filled from the live workspace's own files (tracked and
untracked-not-ignored, so the draft starts where the person is); the carried uncommitted
changes become the branch's first commit, the draft's ``base``. Approval merges in memory
(``git merge-tree``), moves the target branch with a compare-and-swap and writes only the
merged files into the live workspace, after checking that the person did not change them.
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from vis_core.drafts import files as draft_files
from vis_core.drafts.errors import DraftConflict, DraftError
from vis_core.drafts.gitrun import commit_config, git, paths, text
from vis_core.system.quiet import model_stopped
from vis_core.tools.beneath import Beneath

COPY_THREADS = 8  # files copied at once: creating files waits on the filesystem, not the CPU
# (worktree, message, files, make) -> the new commit ``make()`` made, between git/commit hooks
Commit = Callable[[Path, str, list[str], Callable[[], str]], str]


@dataclass(frozen=True)
class Repository:
    top: Path  # the live repository's top folder
    relative: str  # the workspace beneath it ('' at the top)
    head: str
    branch: str | None  # the branch checked out in the live workspace (None when detached)


def repository_of(workspace: Path) -> Repository | None:
    """The git repository ``workspace`` is in, with a commit; ``None`` outside git."""
    done = git(["rev-parse", "--show-toplevel"], workspace, check=False)
    if done.returncode != 0:
        return None
    top = Path(done.stdout.decode("utf-8", "surrogateescape").strip())
    head = git(["rev-parse", "--verify", "-q", "HEAD^{commit}"], top, check=False)
    if head.returncode != 0:
        return None  # no commit yet: nothing to branch from
    branch = git(["symbolic-ref", "--short", "-q", "HEAD"], top, check=False)
    relative = workspace.resolve().relative_to(top.resolve()).as_posix()
    return Repository(
        top,
        "" if relative == "." else relative,
        head.stdout.decode().strip(),
        branch.stdout.decode("utf-8", "surrogateescape").strip() or None,
    )


def copy_files(source: Path, target: Path, names: Sequence[str], skip: Sequence[Path]) -> None:
    """Copy ``names`` (files and links) from ``source`` to ``target``, several at once (the
    time is the filesystem's), never what lies in a ``skip`` folder (Vis's own)."""
    top = os.path.realpath(source)
    inside = [
        os.path.relpath(real, top) + os.sep
        for real in (os.path.realpath(f) for f in skip)
        if real == top or real.startswith(top + os.sep)
    ]
    wanted = [n for n in names if not any((n + os.sep).startswith(p) for p in inside)]
    folders = {os.path.dirname(n) for n in wanted}
    for folder in sorted(folders):
        (target / folder).mkdir(parents=True, exist_ok=True)

    files = Beneath(source)

    def one(name: str) -> None:
        draft_files.clone_file(files, name, target / name, made=True)  # not a submodule's folder

    with ThreadPoolExecutor(COPY_THREADS) as pool:
        for _ in pool.map(one, wanted):
            pass


def branch_exists(top: Path, branch: str) -> bool:
    return (
        git(["rev-parse", "--verify", "-q", f"refs/heads/{branch}"], top, check=False).returncode
        == 0
    )


def create(
    repo: Repository, tree: Path, branch: str, commit: Commit, skip: tuple[Path, ...] = ()
) -> str:
    """Add the worktree at ``tree`` and fill it; returns the draft's base commit."""
    if branch_exists(repo.top, branch):
        raise DraftError(f"branch {branch} already exists; choose another label")
    git(["worktree", "add", "--no-checkout", "-b", branch, str(tree), repo.head], repo.top)
    carried = paths(
        ["ls-files", "-z", "--cached", "--others", "--exclude-standard", "--deduplicate"],
        repo.top,
    )
    copy_files(repo.top, tree, carried, skip)
    git(["read-tree", "HEAD"], tree)  # the index of HEAD; the files are the person's
    carried_changes = changed_files(tree)
    if carried_changes:
        message = f"vis draft: the workspace's uncommitted changes at {repo.head[:12]}"
        return commit(tree, message, carried_changes, lambda: plain_commit(tree, message))
    return repo.head


def changed_files(tree: Path, since: str = "HEAD") -> list[str]:
    """Files of the draft's working copy that differ from ``since`` (untracked included)."""
    with model_stopped():  # git reads the files by path: nothing may swap a link in meanwhile
        _refuse_too_large(tree)
        git(["add", "-A"], tree)
    return paths(["diff", "--cached", "--no-renames", "--name-only", "-z", since], tree)


def _refuse_too_large(tree: Path) -> None:
    """Refuse a new or changed file over ``LARGEST_FILE`` before ``git add`` hashes and stores
    it whole (a sparse terabyte file costs a block's code nothing to make)."""
    names = paths(["ls-files", "-z", "--others", "--modified", "--exclude-standard"], tree)
    files = Beneath(tree)
    for name in names:
        try:
            info = files.stat(name, follow=False)
        except OSError:  # gone, or a folder on the way is not one
            continue
        if stat.S_ISREG(info.st_mode) and info.st_size > draft_files.LARGEST_FILE:
            raise draft_files.too_large(name, info.st_size)


def commit_all(tree: Path, message: str, commit: Commit) -> str | None:
    """Commit the draft's changes (through ``commit``); ``None`` when there are none."""
    names = changed_files(tree)
    return commit(tree, message, names, lambda: plain_commit(tree, message)) if names else None


def plain_commit(tree: Path, message: str) -> str:
    git([*commit_config(tree), "commit", "-q", "--no-verify", "-m", message], tree)
    return text(["rev-parse", "HEAD"], tree)


def _conflicts(cwd: Path, ours: str, theirs: str) -> tuple[str | None, list[str]]:
    """The merged tree of two commits, or the conflicted files (nothing on disk changes)."""
    done = git(
        ["merge-tree", "--write-tree", "--name-only", "--no-messages", "-z", ours, theirs],
        cwd,
        check=False,
    )
    if done.returncode not in (0, 1):
        message = done.stderr.decode("utf-8", "replace").strip()
        raise DraftError(f"git merge-tree failed in {cwd}: {message}")
    parts = [p for p in done.stdout.decode("utf-8", "surrogateescape").split("\0") if p]
    if done.returncode == 0:
        return parts[0], []
    return None, sorted(set(parts[1:]))


def is_ancestor(cwd: Path, older: str, newer: str) -> bool:
    return git(["merge-base", "--is-ancestor", older, newer], cwd, check=False).returncode == 0


def target_head(top: Path, target: str | None) -> str:
    if target is None:
        raise DraftError(
            "the live workspace was on a detached HEAD when the draft was made, so there is "
            "no branch to merge into; discard the draft or merge its branch yourself"
        )
    done = git(["rev-parse", "--verify", "-q", f"refs/heads/{target}"], top, check=False)
    if done.returncode != 0:
        raise DraftError(f"the target branch {target} no longer exists")
    return done.stdout.decode().strip()


def sync(tree: Path, top: Path, target: str | None, label: str, commit: Commit) -> list[str]:
    """Merge the target branch's new commits into the draft; returns the files they changed."""
    theirs = target_head(top, target)
    if is_ancestor(tree, theirs, "HEAD"):
        return []
    ours = text(["rev-parse", "HEAD"], tree)
    pending = changed_files(tree)
    if pending:  # check before committing: a conflict leaves the draft exactly as it was
        probe = probe_commit(tree)
        _, conflicted = _conflicts(tree, probe, theirs)
    else:
        _, conflicted = _conflicts(tree, ours, theirs)
    if conflicted:
        raise DraftConflict(f"sync of draft {label} with {target}", conflicted)
    if pending:
        message = f"vis draft {label}: work before sync with {target}"
        commit(tree, message, pending, lambda: plain_commit(tree, message))
    base = text(["merge-base", "HEAD", theirs], tree)
    brought = paths(["diff", "--no-renames", "--name-only", "-z", base, theirs], tree)
    message = f"vis draft {label}: sync with {target}"
    commit(tree, message, brought, lambda: merge_commit(tree, theirs, message))
    return brought


def probe_commit(tree: Path) -> str:
    """A commit object of the draft's staged state that no branch points to (for a check)."""
    written = text(["write-tree"], tree)
    return text([*commit_config(tree), "commit-tree", written, "-p", "HEAD", "-m", "probe"], tree)


def merge_commit(tree: Path, theirs: str, message: str) -> str:
    """``git merge`` of ``theirs`` into the draft (checked clean before)."""
    config = commit_config(tree)
    with model_stopped():  # git writes the files by path
        git([*config, "merge", "-q", "--no-ff", "--no-verify", "-m", message, theirs], tree)
    return text(["rev-parse", "HEAD"], tree)


def plan_approval(
    tree: Path, top: Path, target: str | None, label: str, ours: str = "HEAD"
) -> tuple[str, str, str, list[str]]:
    """(target head, draft commit, merged tree-ish, files the merge changes on the target);
    raises :class:`DraftConflict` on a conflict. Nothing on disk changes."""
    theirs = target_head(top, target)
    ours = text(["rev-parse", ours], tree)
    if is_ancestor(tree, ours, theirs):
        return theirs, ours, theirs, []
    merged_tree, conflicted = _conflicts(tree, theirs, ours)
    if conflicted:
        raise DraftConflict(f"approval of draft {label} into {target}", conflicted)
    assert merged_tree is not None
    changed = paths(
        ["diff-tree", "-r", "--no-renames", "--name-only", "-z", theirs, merged_tree], tree
    )
    return theirs, ours, merged_tree, changed


def merged_commit(tree: Path, theirs: str, ours: str, message: str) -> str:
    """The commit approval puts on the target: the draft itself when it fast-forwards."""
    if is_ancestor(tree, theirs, ours):
        return ours
    merged_tree, _ = _conflicts(tree, theirs, ours)
    assert merged_tree is not None
    return text(
        [*commit_config(tree), "commit-tree", merged_tree, "-p", theirs, "-p", ours, "-m", message],
        tree,
    )


def _entries(cwd: Path, commit: str, names: Sequence[str]) -> dict[str, tuple[str, str]]:
    """``{path: (mode, blob id)}`` of ``names`` in ``commit``."""
    if not names:
        return {}
    out = git(["ls-tree", "-r", "-z", "--full-tree", commit, "--", *names], cwd).stdout
    found: dict[str, tuple[str, str]] = {}
    for line in out.decode("utf-8", "surrogateescape").split("\0"):
        if not line:
            continue
        meta, name = line.split("\t", 1)
        mode, _kind, blob = meta.split()
        found[name] = (mode, blob)
    return found


def _live_on(top: Path, target: str) -> bool:
    checked_out = git(["symbolic-ref", "-q", "HEAD"], top, check=False).stdout.decode().strip()
    return checked_out == f"refs/heads/{target}"


def check_live(top: Path, target: str, old: str, new: str, base: str, names: Sequence[str]) -> None:
    """Refuse (naming them) files the person changed in the live workspace since the draft
    began that the merge would write: each must hold what the target, the draft's start or
    the merge holds."""
    if _live_on(top, target) and names:
        object_format = text(["rev-parse", "--show-object-format"], top)
        before = _entries(top, old, names)
        start = _entries(top, base, names)
        after = _entries(top, new, names)
        changed_since = []
        live = Beneath(top)
        for name in names:
            if draft_files.through_link(top, name):
                changed_since.append(name)
                continue
            now = draft_files.content_id(live, name, object_format)
            allowed = {
                entry[1] if entry else None
                for entry in (before.get(name), start.get(name), after.get(name))
            }
            if now not in allowed:
                changed_since.append(name)
        if changed_since:
            raise DraftConflict(
                "the live workspace changed these files since the draft began; approval "
                "would overwrite them",
                changed_since,
            )


def land(top: Path, target: str, old: str, new: str, base: str, names: Sequence[str]) -> list[str]:
    """Move ``target`` from ``old`` to ``new`` and, when the live workspace has it checked
    out, write the changed files there (after :func:`check_live`), all or none: the files
    are staged first, renamed in, and the branch moves last; a failure puts every file and
    the branch back. Returns the files written."""
    check_live(top, target, old, new, base, names)
    live = _live_on(top, target)
    ref = ["update-ref", "-m", "vis draft approval", f"refs/heads/{target}"]
    if not live or not names:
        git([*ref, new, old], top)
        return []
    after = _entries(top, new, names)
    changes: list[tuple[str, draft_files.Writer]] = []
    for name in names:
        entry = after.get(name)
        if entry is not None and entry[0] == "160000":
            continue  # a submodule's commit: its folder is the person's to update
        changes.append((name, None if entry is None else _blob_writer(top, *entry)))

    def move_branch() -> None:
        git([*ref, new, old], top)
        try:
            _reset_index(top, names)
        except BaseException:
            git([*ref, old, new], top, check=False)
            raise

    try:
        draft_files.land_files(top, changes, move_branch)
    except draft_files.LandingFailed as exc:
        raise DraftError(
            f"approval could not write {exc.name or 'the merge'} ({exc.__cause__ or exc}); "
            + (
                "could not put back " + "; ".join(exc.problems) + ". Check those files"
                if exc.problems
                else f"nothing in the workspace changed and {target} did not move"
            )
            + ". The draft is kept: fix the cause and approve again."
        ) from exc
    return list(names)


def _blob_writer(top: Path, mode: str, blob: str) -> draft_files.Writer:
    def write(temporary: Path) -> None:
        data = git(["cat-file", "blob", blob], top).stdout
        if mode == "120000":
            os.symlink(os.fsdecode(data), temporary)
            return
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
        with open(fd, "wb") as out:
            out.write(data)
            if mode == "100755":
                os.fchmod(out.fileno(), 0o755)

    return write


def _reset_index(top: Path, names: Sequence[str]) -> None:
    """The index entries of ``names`` as the branch now holds them."""
    with tempfile.NamedTemporaryFile("wb", delete=False, suffix=".paths") as listing:
        listing.write(b"\0".join(n.encode("utf-8", "surrogateescape") for n in names))
    try:
        git(["reset", "-q", "--pathspec-from-file", listing.name, "--pathspec-file-nul"], top)
    finally:
        Path(listing.name).unlink()


def remove(top: Path, tree: Path, branch: str | None, *, delete_branch: bool = True) -> None:
    """Remove the worktree (gone already is fine) and, unless kept, its branch."""
    if tree.exists():
        with model_stopped():  # git removes the files by path
            git(["worktree", "remove", "--force", "--force", str(tree)], top, check=False)
            draft_files.remove_tree(tree)
    git(["worktree", "prune"], top, check=False)
    if branch and delete_branch:
        git(["branch", "-D", branch], top, check=False)
