"""Which files a search sees: Git's listing in a repository, a .gitignore matcher outside."""

from __future__ import annotations

import contextlib
import os
import re
import stat
from collections.abc import Iterable, Iterator
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pathspec loads when a .gitignore or a glob is first matched
    from pathspec import GitIgnoreSpec

from vis_core.system.git import (
    MAX_LISTED,
    MAX_LISTED_BYTES,
    Entries,
    GitFailed,
    TooMany,
    run_git,
)
from vis_core.tools.beneath import Beneath, read_child


def ignore_spec(text: str) -> GitIgnoreSpec:
    """The rules of one .gitignore file (or one glob per line), with Git's matching rules;
    their regular expressions never backtrack between two ``*`` of one name (see
    :func:`without_backtracking`), so a rule such as ``*a*a*a*a*b`` cannot hang a listing."""
    from pathspec import GitIgnoreSpec

    # a rule holding a NUL matches no path; a sparse file's zeros would be one costly rule
    spec = GitIgnoreSpec.from_lines(line for line in text.splitlines() if "\0" not in line)
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


@lru_cache(maxsize=4096)
def _rules_of(text: str) -> GitIgnoreSpec | None:
    spec = ignore_spec(text)
    return spec if len(spec) else None


MAX_IGNORE_BYTES = 256 << 10  # of one .gitignore: a sparse one of a terabyte costs a block nothing
IGNORE_NAME = ".gitignore"


def rules_at(fd: int) -> GitIgnoreSpec | None:
    """The rules of the ``.gitignore`` in the open folder ``fd`` (``None`` without one), from
    its first :data:`MAX_IGNORE_BYTES`. As Git reads it: not through a link, and only a
    regular file (a pipe is never waited on)."""
    try:
        data = read_child(fd, IGNORE_NAME, MAX_IGNORE_BYTES)
    except OSError:
        return None
    return _rules_of(data.decode("utf-8", errors="replace"))


def _changed_since(fd: int, name: str, since_ns: int) -> bool:
    """Whether the entry ``name`` of the open folder ``fd`` changed since ``since_ns`` (its
    change time, which no process sets back); False when there is none."""
    try:
        return os.stat(name, dir_fd=fd, follow_symlinks=False).st_ctime_ns >= since_ns
    except OSError:
        return False


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


_FOLDER = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC  # to list
_PASS = (getattr(os, "O_PATH", 0) or os.O_RDONLY) | _FOLDER  # only walked through


def _walk(
    root: str,
    hidden: bool,
    links: bool = False,
    rules_then: dict[str, str | None] | None = None,
    *,
    rules: bool = False,
    made_since: int | None = None,
    within: int | None = None,
) -> Iterator[tuple[str, os.DirEntry[str]]]:
    """Each regular file under ``root`` (and each link, when ``links``) as its path and its
    entry, pruning hidden and .gitignore'd entries (never a ``.gitignore`` itself, when
    ``rules``); a folder (by path) of ``rules_then`` is judged by the text given there for
    its .gitignore (None: none), not by the one it has, and so is, as none, a folder whose
    .gitignore changed since ``made_since`` (its change time), which is added to
    ``rules_then``.
    Folders are opened one inside the other
    by descriptor, never through a link: a folder the model swaps for a link meanwhile is not
    entered, so the walk cannot list a folder outside ``root``. An entry's ``stat()`` reads
    through its folder's descriptor, which stays open only until the walk goes on.
    ``within``: the open folder that holds ``root``, where its name is opened (not through a
    link); else ``root`` is opened by its path."""
    stack: IgnoreStack = []

    def visit(fd: int, folder: str) -> Iterator[tuple[str, os.DirEntry[str]]]:
        try:
            with os.scandir(fd) as listing:
                items = sorted(listing, key=lambda e: e.name)
        except OSError:
            return
        has_rules = any(e.name == IGNORE_NAME for e in items)
        if has_rules and made_since is not None and rules_then is not None:
            if folder not in rules_then and _changed_since(fd, IGNORE_NAME, made_since):
                rules_then[folder] = None
        if rules_then is not None and folder in rules_then:
            text = rules_then[folder]
            found = _rules_of(text) if text else None
        else:
            found = rules_at(fd) if has_rules else None
        if found is not None:
            stack.append((folder, found))
        prefix = os.path.join(folder, "")
        for entry in items:
            name = entry.name
            if name == ".git" or (not hidden and name.startswith(".")):
                continue
            link = entry.is_symlink()
            if link and not links:
                continue
            path = prefix + name
            is_dir = entry.is_dir(follow_symlinks=False)
            if stack and not (rules and name == IGNORE_NAME) and is_ignored(stack, path, is_dir):
                continue
            if link:
                yield path, entry
            elif is_dir:
                try:
                    inner = os.open(name, _FOLDER, dir_fd=fd)
                except OSError:
                    continue  # gone, unreadable, or a link now
                try:
                    yield from visit(inner, path)
                finally:
                    os.close(inner)
            elif entry.is_file(follow_symlinks=False):
                yield path, entry
        if found is not None:
            stack.pop()

    try:
        if within is None:
            top = os.open(root, _FOLDER & ~os.O_NOFOLLOW)
        else:
            top = os.open(os.path.basename(root), _FOLDER, dir_fd=within)
    except OSError:
        return
    try:
        yield from visit(top, root)
    finally:
        os.close(top)


def walk_judged_by(
    root: str, rules_then: dict[str, str | None], made_since: int
) -> Iterator[tuple[str, os.DirEntry[str]]]:
    """Each regular file under ``root`` (hidden ones too) as its path and its entry, the
    .gitignore of each folder of ``rules_then`` (path: its text, None: none) taken as given,
    and one changed since ``made_since`` (a folder made since, at any depth) as none; the
    folders of those are added to ``rules_then``."""
    return _walk(root, True, rules_then=rules_then, rules=True, made_since=made_since)


def walk_files(root: str, *, hidden: bool) -> Iterator[str]:
    """Files under ``root`` (never through a link), pruning hidden and .gitignore'd entries."""
    return (path for path, _ in _walk(root, hidden))


def link_targets(root: str, paths: Iterable[str]) -> dict[str, str]:
    """What each link of ``paths`` (absolute, under folder ``root``) names, read as text
    through its folder opened beneath ``root`` (never followed); one gone is left out."""
    found: dict[str, str] = {}
    for path, fd, name in _in_folders(root, paths):
        with contextlib.suppress(OSError):
            found[path] = os.readlink(name, dir_fd=fd)
    return found


def file_states_of(root: str, paths: Iterable[str]) -> dict[str, os.stat_result]:
    """The ``lstat`` of each of ``paths`` (absolute, under folder ``root``) that is a regular
    file, read as a listing reads it: through its folder opened beneath ``root``, each folder
    once for the paths of it next to each other."""
    found: dict[str, os.stat_result] = {}
    for path, fd, name in _in_folders(root, paths):
        with contextlib.suppress(OSError):  # gone
            st = os.stat(name, dir_fd=fd, follow_symlinks=False)
            if stat.S_ISREG(st.st_mode):
                found[path] = st
    return found


def _in_folders(root: str, paths: Iterable[str]) -> Iterator[tuple[str, int, str]]:
    """Each of ``paths`` with a descriptor of its folder, opened beneath ``root``
    (:class:`Beneath`: a link or a gone folder on the way leaves it out), and its name there.
    Paths of one folder next to each other open it once."""
    beneath, cut = Beneath(Path(root)), len(os.path.join(root, ""))
    folder, fd = None, -1
    try:
        for path in paths:
            parent, _, name = path[cut:].rpartition("/")
            if parent != folder:
                if fd >= 0:
                    os.close(fd)
                folder, fd = parent, -1
                with contextlib.suppress(OSError):
                    fd = beneath.open(parent or ".", _PASS)[0]
            if fd >= 0:
                yield path, fd, name
    finally:
        if fd >= 0:
            os.close(fd)


def no_repository_above(folder: str) -> bool:
    """Whether no ``.git`` (folder, file or link) is at ``folder`` or any folder above it, as
    given or with its links resolved: then git finds no repository there (its environment
    names no ``GIT_DIR`` and it finds no bare repository unasked), so it need not run. Most
    folders a session works in are not repositories: two git processes saved each time."""
    for start in dict.fromkeys((os.path.abspath(folder), os.path.realpath(folder))):
        for path in (start, *Path(start).parents):
            if os.path.lexists(os.path.join(path, ".git")):
                return False
    return True


@lru_cache(maxsize=256)
def git_toplevel(folder: str) -> str | None:
    """The Git work tree holding ``folder``, or ``None`` outside a repository (or without git)."""
    if no_repository_above(folder):
        return None
    try:
        done = run_git(["rev-parse", "--show-toplevel"], Path(folder), timeout=10)
    except GitFailed:
        return None
    top = done.stdout.decode("utf-8", errors="surrogateescape").strip()
    return top or None if done.returncode == 0 else None


def git_files(
    folder: str, *, rules: bool = False, standard: bool = True, most: int | None = None
) -> list[str]:
    """Tracked and untracked, not ignored files under ``folder`` as absolute paths; with
    ``rules``, every ``.gitignore`` in a folder Git enters too (one of ``*`` ignores itself).
    ``standard``: ignored by Git's standard rules (``.git/info/exclude`` and the excludes
    file its configuration names too), else by the ``.gitignore`` files only, with
    ``folder`` as the work tree (a ``core.worktree`` elsewhere listed none of its files).
    ``most``: :class:`TooMany` past that many entries or :data:`MAX_LISTED_BYTES` of them,
    read as Git writes them (Git stopped there)."""
    ignored = "--exclude-standard" if standard else "--exclude-per-directory=" + IGNORE_NAME
    keep = ["--exclude=!" + IGNORE_NAME] if rules else []
    tree = [] if standard else ["--work-tree=" + folder]
    args = [*tree, "ls-files", "-z", "-co", ignored, *keep]
    entries = Entries(most, None if most is None else MAX_LISTED_BYTES)
    try:
        done = run_git(args, Path(folder), timeout=120, take=entries.take)
    except GitFailed as exc:
        raise RuntimeError(f"git ls-files failed in {folder}: {exc}") from None
    if done.returncode != 0:
        why = done.stderr.decode(errors="replace").strip()
        raise RuntimeError(f"git ls-files failed in {folder}: {why}")
    return [
        os.path.join(folder, name.decode("utf-8", "surrogateescape"))
        for name in dict.fromkeys(entries.items)
        if name
    ]


MAX_NESTED = 100  # nested repositories a listing enters, first met first (about 10 ms each)


def _git_named(root: str, repo: str, hidden: bool, rules: bool, most: int | None) -> Iterator[str]:
    """The files Git lists in repository ``repo`` (``root`` or a folder of it) that a search
    of ``root`` sees (no ``.git``, hidden ones only when asked, the ``.gitignore`` files Git
    enters with ``rules``), as absolute paths; not yet checked on disk. A nested repository
    is one entry (``pkg/`` untracked, ``pkg`` a submodule's gitlink), a folder on disk. A
    nested one is listed by its ``.gitignore`` files only, as the walk lists a folder: a
    block that made it could write its ``.git/info/exclude`` and configuration to hide what
    it makes there; where Git fails in it, the walk lists it."""
    try:
        named: Iterable[str] = git_files(repo, rules=rules, standard=repo == root, most=most)
    except RuntimeError:
        if repo == root:
            raise
        named = (path for path, _ in _walk(repo, hidden, True, rules=rules))
    cut = len(os.path.join(repo, ""))
    for path in named:
        parts = path[cut:].split("/")
        if ".git" in parts or (not hidden and any(p.startswith(".") for p in parts)):
            continue
        yield path.rstrip("/")


def listed_states(
    root: str,
    *,
    hidden: bool,
    links: bool = False,
    most: int | None = None,
    rules: bool = False,
    nested: list[str] | None = None,
) -> dict[str, os.stat_result]:
    """Every file a search of directory ``root`` sees (and every link, when ``links``; every
    ``.gitignore`` in a folder it enters, ignored or not, when ``rules``), by absolute path,
    with its ``lstat``: each read through its folder's descriptor, never through a link (a
    folder of a Git-listed path opened beneath ``root``: a link out of it or a folder gone on
    the way leaves the path out). ``most``: the listing ends once it holds that many, so a
    folder too big to list costs no more than one of that size; :class:`TooMany` once Git
    names more than that or the paths pass :data:`MAX_LISTED_BYTES`. Git lists a nested
    repository (a clone, a submodule's checkout, one a block made) as one entry: each of
    them, up to :data:`MAX_NESTED`, is listed by its own Git and rules, as the walk outside
    Git enters them; ``nested`` gets their absolute paths."""
    found: dict[str, os.stat_result] = {}
    held, cut = 0, len(root)  # bytes of the paths found, below root
    repos = [root]  # the workspace's repository, then each nested one the listings name
    if git_toplevel(root) is None:
        states = _walked_states(root, hidden, links, rules)
    else:
        states = _repository_states(root, repos, hidden, links, rules, most)
    try:
        for path, st in states:
            found[path] = st
            held += len(path) - cut
            if most is not None and held > MAX_LISTED_BYTES:
                raise TooMany(f"more than {MAX_LISTED_BYTES:,} bytes of paths")
            if len(found) == most:
                break
    finally:
        if nested is not None:
            nested += repos[1:]
    return found


def _walked_states(
    root: str, hidden: bool, links: bool, rules: bool, within: int | None = None
) -> Iterator[tuple[str, os.stat_result]]:
    """What :func:`_walk` finds, each with its own state (not its link's target's); one gone
    meanwhile is left out."""
    for path, entry in _walk(root, hidden, links, rules=rules, within=within):
        with contextlib.suppress(OSError):
            yield path, entry.stat(follow_symlinks=False)


def _repository_states(
    root: str, repos: list[str], hidden: bool, links: bool, rules: bool, most: int | None
) -> Iterator[tuple[str, os.stat_result]]:
    """The files (and links, when ``links``) Git lists in each of ``repos`` (``root``'s
    repository first) with their ``lstat``, read beneath ``root``; each nested repository
    met (a folder holding a ``.git``) is added to ``repos``, up to :data:`MAX_NESTED`; any
    other folder Git names (a gitlink of its index, which Git does not look in) is walked."""
    for repo in repos:
        for path, fd, name in _in_folders(root, _git_named(root, repo, hidden, rules, most)):
            try:
                st = os.stat(name, dir_fd=fd, follow_symlinks=False)
            except OSError:
                continue  # gone
            if stat.S_ISREG(st.st_mode) or (links and stat.S_ISLNK(st.st_mode)):
                yield path, st
            elif not stat.S_ISDIR(st.st_mode):
                continue
            elif _holds_git(fd, name):
                if len(repos) <= MAX_NESTED:
                    repos.append(path)
            else:  # a submodule not checked out is empty; a block could fill one
                yield from _walked_states(path, hidden, links, rules, within=fd)


def _holds_git(fd: int, name: str) -> bool:
    """Whether folder ``name`` of the open folder ``fd`` holds a ``.git`` (a nested
    repository; a submodule not checked out holds none and nothing to list)."""
    try:
        os.stat(f"{name}/.git", dir_fd=fd, follow_symlinks=False)
    except OSError:
        return False
    return True


def listed_files(root: str, *, hidden: bool, most: int = MAX_LISTED) -> list[str] | None:
    """Every file a search of directory ``root`` sees, as absolute paths (unsorted); None
    when it holds :func:`too_many` (``most``) of them: none is taken, as no checkpoint is
    (a checkout or a block naming millions of paths cannot take Vis's memory)."""
    try:
        listed = listed_states(root, hidden=hidden, most=most + 1)
    except TooMany:
        return None
    return None if len(listed) > most else list(listed)
