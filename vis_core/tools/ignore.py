"""Which files a search sees: Git's listing in a repository, a .gitignore matcher outside."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from vis_core.sandbox.git import GitFailed, run_git


@dataclass(frozen=True)
class IgnoreRule:
    """One .gitignore line, compiled."""

    regex: re.Pattern[str]
    negated: bool
    dir_only: bool
    anchored: bool


def _translate(glob: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(glob):
        ch = glob[i]
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if glob.startswith("/**", i) and i + 3 == len(glob):
            out.append("/.*")
            i += 3
            continue
        if glob.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if ch == "*":
            out.append("[^/]*")
        elif ch == "?":
            out.append("[^/]")
        elif ch == "[":
            close = glob.find("]", i + 2 if glob[i + 1 : i + 2] in ("!", "^") else i + 1)
            if close == -1:
                out.append(re.escape(ch))
            else:
                body = glob[i + 1 : close]
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append("[" + body.replace("\\", "\\\\") + "]")
                i = close
        elif ch == "\\" and i + 1 < len(glob):
            i += 1
            out.append(re.escape(glob[i]))
        else:
            out.append(re.escape(ch))
        i += 1
    return "".join(out)


def glob_regex(glob: str) -> re.Pattern[str]:
    """A gitignore-style glob as a compiled full-match regex."""
    return re.compile(_translate(glob) + r"\Z", re.DOTALL)


def parse_gitignore(text: str) -> list[IgnoreRule]:
    rules: list[IgnoreRule] = []
    for raw in text.splitlines():
        line = raw.rstrip("\r")
        if not line or line.startswith("#"):
            continue
        if not line.endswith("\\ "):
            line = line.rstrip(" ")
        negated = line.startswith("!")
        if negated:
            line = line[1:]
        elif line.startswith("\\!") or line.startswith("\\#"):
            line = line[1:]
        dir_only = line.endswith("/")
        line = line.rstrip("/")
        if not line:
            continue
        anchored = "/" in line
        line = line.lstrip("/")
        rules.append(IgnoreRule(glob_regex(line), negated, dir_only, anchored))
    return rules


@lru_cache(maxsize=4096)
def _rules_in(folder: str, mtime: float) -> tuple[IgnoreRule, ...]:
    try:
        text = Path(folder, ".gitignore").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ()
    return tuple(parse_gitignore(text))


def rules_in(folder: str) -> tuple[IgnoreRule, ...]:
    try:
        mtime = os.stat(os.path.join(folder, ".gitignore")).st_mtime
    except OSError:
        return ()
    return _rules_in(folder, mtime)


def is_ignored(stack: list[tuple[str, tuple[IgnoreRule, ...]]], path: str, is_dir: bool) -> bool:
    """Last matching rule wins across the .gitignore files from the root down to ``path``."""
    ignored = False
    name = os.path.basename(path)
    for base, rules in stack:
        rel = os.path.relpath(path, base).replace(os.sep, "/")
        for rule in rules:
            if rule.dir_only and not is_dir:
                continue
            if rule.regex.match(rel if rule.anchored else name):
                ignored = not rule.negated
    return ignored


def walk_files(root: str, *, hidden: bool) -> Iterator[str]:
    """Files under ``root`` (not following symlinks), pruning hidden and .gitignore'd entries."""
    stack: list[tuple[str, tuple[IgnoreRule, ...]]] = []

    def visit(folder: str) -> Iterator[str]:
        rules = rules_in(folder)
        if rules:
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
        if rules:
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
