"""Which files a search sees: Git's listing in a repository, a .gitignore matcher outside."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pathspec loads when a .gitignore or a glob is first matched
    from pathspec import GitIgnoreSpec

from vis_core.small_files import small_bytes
from vis_core.system.git import GitFailed, run_git

# pathspec marks the part of a gitignore match that comes from an ancestor folder ("foo"
# matching "foo/bar.py") with this regex group; a glob filter on files must not count it.
_ANCESTOR_GROUP = "ps_d"


def ignore_spec(text: str) -> GitIgnoreSpec:
    """The rules of one .gitignore file (or one glob per line), with Git's matching rules;
    their regular expressions never backtrack between two ``*`` of one name (see
    :func:`without_backtracking`), so a rule such as ``*a*a*a*a*b`` cannot hang a listing."""
    from pathspec import GitIgnoreSpec

    spec = GitIgnoreSpec.from_lines(text.splitlines())
    for pattern in spec.patterns:
        regex = getattr(pattern, "regex", None)
        if regex is not None and _STAR in regex.pattern:
            linear = without_backtracking(regex.pattern)
            if linear != regex.pattern:
                pattern.regex = re.compile(linear, regex.flags)
    return spec


_STAR = "[^/]*"  # what pathspec makes of a `*` inside a name
_SPECIAL = set("()|$^*+?{}/.")


def _fixed_token(regex: str, at: int) -> int:
    """The end of the one-character token at ``at`` (a literal, an escape, ``[^/]`` or a
    class), or ``at`` when none starts there."""
    if at >= len(regex) or regex.startswith(_STAR, at):
        return at
    char = regex[at]
    if char == "\\" and at + 1 < len(regex):
        return at + 2
    if char == "[":
        end = regex.find("]", at + 2 if regex.startswith("[^", at) else at + 1)
        if regex.startswith("[]", at) or regex.startswith("[^]", at):
            end = regex.find("]", end + 1)
        return end + 1 if end > at else at
    return at if char in _SPECIAL else at + 1


def without_backtracking(regex: str) -> str:
    """``regex`` (pathspec's translation of a glob) with each ``*`` that another ``*`` of the
    same name follows made atomic and lazy: ``[^/]*X[^/]*`` becomes ``(?>[^/]*?X)[^/]*`` for a
    fixed-width ``X``. Placing ``X`` at its first occurrence loses no match (the next ``*``
    takes up the rest), and the engine no longer tries every split of a long name between
    the stars, which takes time exponential in their number."""
    out: list[str] = []
    at = 0
    while at < len(regex):
        if not regex.startswith(_STAR, at):
            out.append(regex[at])
            at += 1
            continue
        end = at + len(_STAR)
        while (step := _fixed_token(regex, end)) != end:
            end = step
        if end > at + len(_STAR) and regex.startswith(_STAR, end):
            out.append(f"(?>[^/]*?{regex[at + len(_STAR) : end]})")
        else:
            out.append(regex[at:end])
        at = end
    return "".join(out)


def matches_itself(spec: GitIgnoreSpec, rel: str, is_dir: bool) -> bool:
    """Whether a rule of ``spec`` selects ``rel`` itself, not only a folder above it."""
    from pathspec import RegexPattern

    path = rel + "/" if is_dir else rel
    verdict = False
    for pattern in spec.patterns:
        if pattern.include is None or not isinstance(pattern, RegexPattern):
            continue
        found = pattern.regex.match(path) if pattern.regex is not None else None
        if found is None:
            continue
        through = found.groupdict().get(_ANCESTOR_GROUP) and found.end(_ANCESTOR_GROUP)
        if not through or through == len(path):
            verdict = bool(pattern.include)
    return verdict


@lru_cache(maxsize=4096)
def _spec_in(folder: str, mtime: float) -> GitIgnoreSpec | None:
    # not a link (as git reads .gitignore), and a pipe planted there is never waited on
    data = small_bytes(os.path.join(folder, ".gitignore"), None, follow=False)
    if data is None:
        return None
    spec = ignore_spec(data.decode("utf-8", errors="replace"))
    return spec if len(spec) else None


def rules_in(folder: str) -> GitIgnoreSpec | None:
    """The rules of ``folder/.gitignore`` (``None`` without one), cached by its mtime."""
    try:
        mtime = os.stat(os.path.join(folder, ".gitignore")).st_mtime
    except OSError:
        return None
    return _spec_in(folder, mtime)


IgnoreStack = list[tuple[str, "GitIgnoreSpec"]]


def is_ignored(stack: IgnoreStack, path: str, is_dir: bool) -> bool:
    """Last matching rule wins across the .gitignore files from the root down to ``path``."""
    ignored = False
    for base, spec in stack:
        rel = os.path.relpath(path, base).replace(os.sep, "/")
        verdict = spec.check_file(rel + "/" if is_dir else rel).include
        if verdict is not None:
            ignored = verdict
    return ignored


def walk_files(root: str, *, hidden: bool) -> Iterator[str]:
    """Files under ``root`` (not following symlinks), pruning hidden and .gitignore'd entries."""
    stack: IgnoreStack = []

    def visit(folder: str) -> Iterator[str]:
        rules = rules_in(folder)
        if rules is not None:
            stack.append((folder, rules))
        try:
            with os.scandir(folder) as entries:
                items = sorted(entries, key=lambda e: e.name)
        except OSError:
            items = []
        for entry in items:
            if entry.name == ".git" or (not hidden and entry.name.startswith(".")):
                continue
            if entry.is_symlink():
                continue
            is_dir = entry.is_dir(follow_symlinks=False)
            if stack and is_ignored(stack, entry.path, is_dir):
                continue
            if is_dir:
                yield from visit(entry.path)
            elif entry.is_file(follow_symlinks=False):
                yield entry.path
        if rules is not None:
            stack.pop()

    yield from visit(root)


@lru_cache(maxsize=256)
def git_toplevel(folder: str) -> str | None:
    """The Git work tree holding ``folder``, or ``None`` outside a repository (or without git)."""
    try:
        done = run_git(["rev-parse", "--show-toplevel"], Path(folder), timeout=10)
    except GitFailed:
        return None
    top = done.stdout.decode("utf-8", errors="surrogateescape").strip()
    return top or None if done.returncode == 0 else None


def git_files(folder: str) -> list[str]:
    """Tracked and untracked, not ignored files under ``folder`` as absolute paths."""
    try:
        done = run_git(["ls-files", "-z", "-co", "--exclude-standard"], Path(folder), timeout=120)
    except GitFailed as exc:
        raise RuntimeError(f"git ls-files failed in {folder}: {exc}") from None
    if done.returncode != 0:
        why = done.stderr.decode(errors="replace").strip()
        raise RuntimeError(f"git ls-files failed in {folder}: {why}")
    names = done.stdout.decode("utf-8", errors="surrogateescape").split("\0")
    return [os.path.join(folder, name) for name in dict.fromkeys(names) if name]


def listed_files(root: str, *, hidden: bool) -> list[str]:
    """Every file a search of directory ``root`` sees, as absolute paths (unsorted)."""
    if git_toplevel(root) is None:
        return list(walk_files(root, hidden=hidden))
    out = []
    for path in git_files(root):
        rel = os.path.relpath(path, root)
        parts = rel.split(os.sep)
        if any(p == ".git" for p in parts):
            continue
        if not hidden and any(p.startswith(".") for p in parts):
            continue
        if os.path.islink(path) or not os.path.isfile(path):
            continue
        out.append(path)
    return out
