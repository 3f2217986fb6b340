"""Bundled extension: git status, diff, log and blame of the session workspace."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import vis_core.extension as vis

from . import repo
from .repo import GitBlame, GitDiff, GitLog, GitStatus


def _abs(root: str, path: str) -> str:
    return str(Path(root) / path)


def status() -> GitStatus:
    """Show the branch, its distance to the upstream and every changed or untracked file."""
    return repo.status(vis.workspace_root())


def diff(path: str | None = None, *, staged: bool = False, ref: str | None = None) -> GitDiff:
    """Show the unified diff of the working tree (or the index with ``staged=True``, or
    against commit ``ref``), optionally limited to ``path``."""
    return repo.diff(vis.workspace_root(), path, staged, ref)


def log(path: str | None = None, *, limit: int = 20, ref: str = "HEAD") -> GitLog:
    """List the newest ``limit`` commits of ``ref``, optionally only those touching ``path``."""
    return repo.log(vis.workspace_root(), path, limit, ref)


def blame(path: str, *, start: int | None = None, end: int | None = None) -> GitBlame:
    """Show who last changed each line of ``path`` (lines ``start``..``end`` when given)."""
    return repo.blame(vis.workspace_root(), path, start, end)


def _failed(headline: str, error: BaseException | None) -> vis.ActivityPresentation:
    text = str(error) if error is not None else "git failed"
    first = text.splitlines()[0] if text else "git failed"
    return vis.ActivityPresentation(headline, first[:400], (vis.ActivityText(text),))


def render_status(*, phase: str, args: Any, kwargs: Any, result: Any, error: Any):
    if phase == "failure":
        return _failed("Check git status", error)
    if phase != "success":
        return None
    where = result.branch or "detached HEAD"
    if result.upstream and (result.ahead or result.behind):
        where += f" (ahead {result.ahead}, behind {result.behind} of {result.upstream})"
    if result.clean:
        return vis.ActivityPresentation("Check git status", f"{where}: no changes")
    table = vis.ActivityTable(
        ("File", "Status", "Staged", "Unstaged"),
        tuple(
            (f.path, f.status, "yes" if f.staged else "", "yes" if f.unstaged else "")
            for f in result.files
        ),
        paths=tuple(_abs(result.root, f.path) for f in result.files),
    )
    count = len(result.files)
    summary = f"{where}: {count} changed file{'s' if count != 1 else ''}"
    return vis.ActivityPresentation("Check git status", summary, (table,))


def render_diff(*, phase: str, args: Any, kwargs: Any, result: Any, error: Any):
    if phase == "failure":
        return _failed("Read git diff", error)
    if phase != "success":
        return None
    if not result.files:
        return vis.ActivityPresentation("Read git diff", f"No changes: {result.target}")
    table = vis.ActivityTable(
        ("File", "Added", "Removed"),
        tuple((f.path, f"+{f.added}", f"-{f.removed}") for f in result.files),
        paths=tuple(_abs(result.root, f.path) for f in result.files),
    )
    blocks = tuple(vis.ActivityDiff(f.patch, path=_abs(result.root, f.path)) for f in result.files)
    count = len(result.files)
    summary = (
        f"{count} file{'s' if count != 1 else ''}, {result.target}: "
        f"+{result.added} -{result.removed}"
    )
    return vis.ActivityPresentation("Read git diff", summary, (table, *blocks))


def render_log(*, phase: str, args: Any, kwargs: Any, result: Any, error: Any):
    if phase == "failure":
        return _failed("Read git history", error)
    if phase != "success":
        return None
    scope = f"{result.ref}" + (f" for {result.path}" if result.path else "")
    if not result.commits:
        return vis.ActivityPresentation("Read git history", f"No commits on {scope}")
    table = vis.ActivityTable(
        ("Commit", "Date", "Author", "Subject"),
        tuple((c.short, c.date[:10], c.author, c.subject) for c in result.commits),
    )
    count = len(result.commits)
    newest = "newest " if result.partial else ""
    summary = f"{newest}{count} commit{'s' if count != 1 else ''} on {scope}"
    return vis.ActivityPresentation("Read git history", summary, (table,))


def render_blame(*, phase: str, args: Any, kwargs: Any, result: Any, error: Any):
    if phase == "failure":
        return _failed("Blame file", error)
    if phase != "success":
        return None
    target = _abs(result.root, result.path)
    if not result.lines:
        return vis.ActivityPresentation("Blame file", f"{target}: no lines")
    table = vis.ActivityTable(
        ("Line", "Commit", "Author", "Date", "Text"),
        tuple((str(b.line), b.sha[:8], b.author, b.date, b.text) for b in result.lines),
        paths=tuple(target for _ in result.lines),
    )
    summary = f"{target}: {len(result.lines)} lines from {result.commits} commits"
    return vis.ActivityPresentation("Blame file", summary, (table,))


class Git:
    """The ``git`` namespace: ``git.status()``, ``git.diff()``, ``git.log()``, ``git.blame()``."""

    @vis.method(
        activity=vis.Activity(
            label="Check git status", presenter="git", render=render_status, show_start=False
        )
    )
    def status(self) -> GitStatus:
        """Show the branch, its distance to the upstream and every changed or untracked file."""
        return status()

    @vis.method(
        activity=vis.Activity(
            label="Read git diff", presenter="git", render=render_diff, show_start=False
        )
    )
    def diff(
        self, path: str | None = None, *, staged: bool = False, ref: str | None = None
    ) -> GitDiff:
        """Show the unified diff of the working tree (or the index with ``staged=True``, or
        against commit ``ref``), optionally limited to ``path``."""
        return diff(path, staged=staged, ref=ref)

    @vis.method(
        activity=vis.Activity(
            label="Read git history", presenter="git", render=render_log, show_start=False
        )
    )
    def log(self, path: str | None = None, *, limit: int = 20, ref: str = "HEAD") -> GitLog:
        """List the newest ``limit`` commits of ``ref``, optionally only those touching
        ``path``."""
        return log(path, limit=limit, ref=ref)

    @vis.method(
        activity=vis.Activity(
            label="Blame file", presenter="git", render=render_blame, show_start=False
        )
    )
    def blame(self, path: str, *, start: int | None = None, end: int | None = None) -> GitBlame:
        """Show who last changed each line of ``path`` (lines ``start``..``end`` when given)."""
        return blame(path, start=start, end=end)


vis.register_extension(
    vis.Extension(
        name="git",
        alias="git",
        description="Read git status, diffs, history and blame of the workspace.",
        prompt=(
            "Use git.status(), git.diff(path=None, staged=False, ref=None), git.log(path=None, "
            "limit=20) and git.blame(path) to read the repository; they never change it. "
            'Read doc("git.diff") before calling.'
        ),
        symbols=[vis.Symbol(Git(), name="git")],
    )
)
