"""The ``worktree`` backend: a draft is a git worktree on branch ``vis/draft/<label>``.

Made with ``--no-checkout`` and filled from the live workspace's own files (tracked and
untracked-not-ignored, so the draft starts where the person is); the carried uncommitted
changes become the branch's first commit, the draft's ``base``. Approval lands only the
draft's own change (``base`` to its working copy), applied to the target branch's head by
a three-way merge in memory (``git merge-tree``): one commit there, whose files
:mod:`~vis_core.drafts.landing` writes into the live workspace.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from vis_core.drafts import files as draft_files
from vis_core.drafts import replaced
from vis_core.drafts.errors import DraftConflict, DraftError
from vis_core.drafts.gitrun import COMMIT_CONFIG, commit_config, git, paths, text
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

    files, budget = Beneath(source), draft_files.Budget()

    def one(name: str) -> None:  # not a submodule's folder:
        draft_files.clone_file(files, name, target / name, made=True, budget=budget)

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
    _stage(tree)
    return paths(["diff", "--cached", "--no-renames", "--name-only", "-z", since], tree)


def _stage(tree: Path) -> None:
    """Every change of the draft's working copy in its index (untracked files included).

    Not ``git add -A``: it runs ``git status`` inside each submodule, whose configuration
    (written by the model's code: the draft is its workspace) may name a filter that git
    would run on the host. An embedded repository stays out of the index."""
    with model_stopped():  # git reads the files by path: nothing may swap a link in meanwhile
        names = paths(["ls-files", "-z", "--others", "--modified", "--exclude-standard"], tree)
        names = [name for name in names if not name.endswith("/")]  # an embedded repository
        files = Beneath(tree)
        _refuse_too_large(files, names)
        # a tracked file that is a folder now leaves the index (its files come in on their own)
        gone = [name for name in names if _plain_folder(files, name)]
        for change, listed in (("--force-remove", gone), ("--add", set(names) - set(gone))):
            if listed:
                feed = "".join(f"{name}\0" for name in sorted(listed)).encode(
                    "utf-8", "surrogateescape"
                )
                git(
                    ["update-index", "--remove", "--replace", change, "-z", "--stdin"],
                    tree,
                    feed=feed,
                )


def _plain_folder(files: Beneath, name: str) -> bool:
    """Whether ``name`` is a folder that is not a repository of its own (a submodule)."""
    try:
        return stat.S_ISDIR(files.stat(name, follow=False).st_mode) and not files.exists(
            f"{name}/.git"
        )
    except OSError:
        return False


def _refuse_too_large(files: Beneath, names: list[str]) -> None:
    """Refuse new or changed files over a copy's :class:`~vis_core.drafts.files.Budget` (one
    over ``LARGEST_FILE``, or past ``LARGEST_COPY`` in all) before git hashes and stores them
    whole, and approval writes them: a sparse terabyte file, or a thousand hard links to one
    file, cost a block's code nothing to make."""
    budget = draft_files.Budget()
    for name in names:
        try:
            info = files.stat(name, follow=False)
        except OSError:  # gone, or a folder on the way is not one
            continue
        if stat.S_ISREG(info.st_mode):
            budget.take(name, info.st_size)


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
    probe = ours
    if pending:  # check before committing: a conflict leaves the draft exactly as it was
        probe = probe_commit(tree)
    _, conflicted = _conflicts(tree, probe, theirs)
    if conflicted:
        since = text(["merge-base", probe, theirs], tree)
        sides = [
            ("the draft", replaced.in_tree(tree, probe), ""),
            (str(target), replaced.in_tree(tree, theirs), ""),
        ]
        why = replaced.replacements(conflicted, replaced.in_tree(tree, since), sides)
        raise DraftConflict(
            f"sync of draft {label} with {target}" + (f" ({'; '.join(why)})" if why else ""),
            replaced.set_aside(conflicted),
        )
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


@dataclass(frozen=True)
class Change:
    """What approving a draft puts on its target branch: one commit on ``head``."""

    head: str  # the target branch's head the change applies to
    tree: str  # the tree of the commit approval makes on it
    files: list[str]  # the files that commit changes


def staged_tree(tree: Path) -> str:
    """The tree of the draft's working copy as it is now, untracked files included."""
    _stage(tree)
    return text(["write-tree"], tree)


def draft_change(top: Path, target: str | None, base: str, mine: str) -> Change:
    """The draft's own change, from its ``base`` commit to ``mine`` (its working copy's
    tree), applied to the target branch's head by a three-way merge in memory. What the
    person had not committed when the draft began is in ``base``, so it is no part of the
    change. Raises :class:`DraftConflict` naming the files it cannot be applied to. git runs
    in the live repository ``top``: its attributes, never the draft's, say how to merge."""
    head = target_head(top, target)
    applied, conflicted = _applied(top, base, mine, head)
    if conflicted:
        sides = [
            ("the draft", replaced.in_tree(top, mine), ""),
            (f"since the draft began, {target}", replaced.in_tree(top, head), ""),
        ]
        why = replaced.replacements(conflicted, replaced.in_tree(top, base), sides)
        raise DraftConflict(
            f"the draft's changes do not apply to {target} as it is now "
            + (
                f"({'; '.join(why)})"
                if why
                else "(changed there since the draft began, or beside changes you had not "
                "committed when it began)"
            ),
            replaced.set_aside(conflicted),
        )
    assert applied is not None
    return Change(head, applied, tree_files(top, head, applied))


def tree_files(cwd: Path, old: str, new: str) -> list[str]:
    """The files that differ between two trees (or commits)."""
    return paths(["diff-tree", "-r", "--no-renames", "--name-only", "-z", old, new], cwd)


def line_counts(cwd: Path, old: str, new: str) -> dict[str, tuple[int, int] | None]:
    """Lines added and removed in each file that differs between two trees (or commits), as
    git counts them (``None``: a binary file), by name: read from ``--numstat -z``, whose
    names end at a NUL, never from the diff's text."""
    found: dict[str, tuple[int, int] | None] = {}
    for record in paths(["diff-tree", "-r", "--no-renames", "--numstat", "-z", old, new], cwd):
        added, removed, name = record.split("\t", 2)
        counts = None if "-" in (added, removed) else (int(added), int(removed))
        found[name] = counts
    return found


def commit_change(tree: Path, change: Change, message: str) -> str:
    """Approval's commit: the change's tree, on the target branch's head."""
    config = commit_config(tree)
    return text([*config, "commit-tree", change.tree, "-p", change.head, "-m", message], tree)


def _applied(cwd: Path, base: str, mine: str, onto: str) -> tuple[str | None, list[str]]:
    """The tree of ``onto`` with the change from ``base`` to tree ``mine`` (or the files
    that conflict): ``git merge-tree`` of two probe commits whose one parent is ``base``."""
    base_tree, onto_tree = text(["rev-parse", f"{base}^{{tree}}", f"{onto}^{{tree}}"], cwd).split()
    if mine in (base_tree, onto_tree):
        return onto_tree, []  # no change, or the target holds it already
    if onto_tree == base_tree:
        return mine, []
    return _conflicts(cwd, _probe(cwd, onto_tree, base), _probe(cwd, mine, base))


# A probe commit's author, committer and dates are fixed: the same trees make the same
# object, not a new one in the person's repository at each look.
PROBE_ENVIRONMENT = {
    "GIT_AUTHOR_NAME": "Vis",
    "GIT_AUTHOR_EMAIL": "vis@localhost",
    "GIT_AUTHOR_DATE": "@0 +0000",
    "GIT_COMMITTER_NAME": "Vis",
    "GIT_COMMITTER_EMAIL": "vis@localhost",
    "GIT_COMMITTER_DATE": "@0 +0000",
}


def _probe(cwd: Path, tree: str, parent: str) -> str:
    """A commit of ``tree`` on ``parent`` that no branch points to, for a merge."""
    done = git(
        [*COMMIT_CONFIG, "commit-tree", tree, "-p", parent, "-m", "vis probe"],
        cwd,
        environment=PROBE_ENVIRONMENT,
    )
    return done.stdout.decode().strip()


def remove(top: Path, tree: Path, branch: str | None) -> None:
    """Remove the worktree (gone already is fine) and its branch; when the repository
    ``top`` is gone (a replay's copy), git's records of both went with it: only the tree."""
    if not top.is_dir():
        draft_files.remove_tree(tree)
        return
    if tree.exists():
        with model_stopped():  # git removes the files by path
            git(["worktree", "remove", "--force", "--force", str(tree)], top, check=False)
            draft_files.remove_tree(tree)
    git(["worktree", "prune"], top, check=False)
    if branch:
        git(["branch", "-D", branch], top, check=False)
