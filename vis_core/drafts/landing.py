"""Approval in the live workspace: the target branch moves to approval's commit and, where it
is checked out, the files that commit changes are written, all or none. Each file, and its
index entry, is the three-way merge of the branch's old version, the person's and the
commit's, so what the person had not committed (staged or not) stays uncommitted."""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from vis_core.drafts import files as draft_files
from vis_core.drafts import replaced
from vis_core.drafts.errors import DraftConflict, DraftError
from vis_core.drafts.gitrun import git, paths, text
from vis_core.tools.beneath import Beneath

ARGUMENT_BYTES = 256 << 10  # bytes of file names on one git command line (Linux allows 2 MiB)
MERGE_LARGEST = 64 << 20  # bytes of a file merged with the person's changes (larger: refused)
GITLINK = "160000"  # a submodule's commit
LINK = "120000"
REGULAR = frozenset({"100644", "100755"})

Entry = tuple[str, str]  # (mode, object id), as git holds a file
OTHER: Entry = ("other", "")  # a folder, pipe or device where a file goes: equals no version


class _Refused(Exception):
    """This file cannot be merged with the person's changes."""


@dataclass(frozen=True)
class LiveWrite:
    """One file approval changes in the live workspace."""

    name: str
    seen: Entry | None  # what it held when checked (None: no file)
    mode: str | None  # what it becomes (None: removed)
    blob: str = ""  # its content in git, read when written (a link's target, for a link)
    data: bytes | None = None  # else its content (both changes merged)


@dataclass(frozen=True)
class Landing:
    """What approval changes in a live workspace that has the target branch checked out."""

    writes: tuple[LiveWrite, ...]
    index: tuple[tuple[str, Entry | None], ...]  # the index entries set (None: removed)


def plan(top: Path, target: str, head: str, new: str, names: Sequence[str]) -> Landing | None:
    """The live workspace's side of moving ``target`` from ``head`` to ``new`` (``names``: the
    files that differ), when it has ``target`` checked out (else ``None``): each file and its
    index entry merged with the person's changes. :class:`DraftConflict` names the files where
    those meet the commit's; nothing changes. Refused when another worktree of the
    repository has ``target`` checked out (its files would stop matching its HEAD)."""
    elsewhere = checked_out_elsewhere(top, target)
    if elsewhere is not None:
        raise DraftError(
            f"{target} is checked out in another worktree, {elsewhere}: approval would move "
            "the branch under that worktree's files, which would then no longer match its "
            "HEAD (git refuses `git branch -f` there too). Check out another branch in that "
            "worktree (or remove it), then approve again; the draft is kept"
        )
    busy = in_progress(top, target)
    if busy is not None:
        where, what, finish = busy
        raise DraftError(
            f"{target} is being {what} in the worktree {where}: approval would move the "
            f"branch under it (git refuses `git branch -f` then too). Finish it or stop it "
            f"({finish}), then approve again; the draft is kept"
        )
    if not live_on(top, target):
        return None
    before = entries(top, head, names)
    after = entries(top, new, names)
    staged, unmerged = _index(top, names)
    object_format = text(["rev-parse", "--show-object-format"], top)
    live = Beneath(top)
    writes: list[LiveWrite] = []
    index: list[tuple[str, Entry | None]] = []
    refused: list[str] = list(unmerged)
    gone = {name for name in names if name not in after}  # a link among them: a folder's way
    for name in names:
        if name in unmerged:
            continue
        base, theirs = before.get(name), after.get(name)
        try:
            write = _live_write(top, live, name, object_format, base, theirs, gone)
            ours = staged.get(name)
            if ours != theirs:
                index.append((name, _merged_entry(top, base, ours, theirs)))
        except _Refused:
            refused.append(name)
            continue
        if write is not None:
            writes.append(write)
    if refused:
        sides = [
            ("the draft", replaced.in_tree(top, new), ", where you have changes"),
            ("you", replaced.in_folder(top), ", and the draft changed it"),
        ]
        why = replaced.replacements(sorted(refused), replaced.in_tree(top, head), sides)
        raise DraftConflict(
            "approval would lose changes of yours in the workspace that are not committed: "
            + (
                "; ".join(why)
                if why
                else "the draft changed the same lines of these files, or one of you removed "
                "or replaced a file the other changed"
            )
            + ". Commit or put aside yours, then approve again",
            sorted(refused),
        )
    return Landing(tuple(writes), tuple(index))


def land(top: Path, target: str, old: str, new: str, landing: Landing | None) -> list[str]:
    """Move ``target`` from ``old`` to ``new`` (a compare-and-swap) and make the live
    workspace's changes of ``landing``, all or none: the files are staged first, checked
    unchanged since :func:`plan`, renamed in, and the branch and the index move last; a
    failure puts every file and the branch back. Returns the files written."""
    ref = ["update-ref", "-m", "vis draft approval", f"refs/heads/{target}"]
    if landing is None:
        git([*ref, new, old], top)
        return []
    object_format = text(["rev-parse", "--show-object-format"], top)
    live = Beneath(top)

    gone = {write.name for write in landing.writes if write.mode is None}

    def unchanged() -> None:
        for write in landing.writes:
            link = draft_files.link_on_the_way(top, write.name)
            if link is not None and link not in gone:
                raise OSError(f"a folder on the way to {write.name} is a symbolic link")
            now = None if link is not None else _live_entry(live, write.name, object_format)
            if now != write.seen:
                raise OSError(f"{write.name} changed in the workspace meanwhile")

    def move_branch() -> None:
        git([*ref, new, old], top)
        try:
            _set_index(top, landing.index, object_format)
        except BaseException:
            git([*ref, old, new], top, check=False)
            raise

    changes = [(w.name, None if w.mode is None else _writer(top, w)) for w in landing.writes]
    try:
        draft_files.land_files(top, changes, move_branch, check=unchanged)
    except draft_files.LandingFailed as exc:
        raise DraftError(
            f"approval could not write {exc.name or 'the files'} ({exc.__cause__ or exc}); "
            + (
                "could not put back " + "; ".join(exc.problems) + ". Check those files"
                if exc.problems
                else f"nothing in the workspace changed and {target} did not move"
            )
            + ". The draft is kept: fix the cause and approve again."
        ) from exc
    return [w.name for w in landing.writes]


def live_on(top: Path, target: str) -> bool:
    """Whether the live workspace has branch ``target`` checked out."""
    checked_out = git(["symbolic-ref", "-q", "HEAD"], top, check=False).stdout.decode().strip()
    return checked_out == f"refs/heads/{target}"


def checked_out_elsewhere(top: Path, target: str) -> str | None:
    """The path of a worktree other than ``top`` that has branch ``target`` checked out."""
    here = os.path.realpath(top)
    path = ""
    for field in paths(["worktree", "list", "--porcelain", "-z"], top):
        if field.startswith("worktree "):
            path = field.removeprefix("worktree ")
        elif field == f"branch refs/heads/{target}" and os.path.realpath(path) != here:
            return path
    return None


def in_progress(top: Path, target: str) -> tuple[str, str, str] | None:
    """(worktree path, what, how to end it) of a worktree of the repository (``top``'s too)
    where ``target`` is being rebased or bisected: its HEAD is detached meanwhile."""
    common = top / text(["rev-parse", "--git-common-dir"], top)
    linked = common / "worktrees"
    gitdirs = [(common, common.parent)] + [
        (folder, Path(_small_text(folder / "gitdir")).parent)
        for folder in (sorted(linked.iterdir()) if linked.is_dir() else [])
    ]
    branch = f"refs/heads/{target}"
    for gitdir, where in gitdirs:
        for state in ("rebase-merge", "rebase-apply"):
            if _small_text(gitdir / state / "head-name") == branch:
                return str(where), "rebased", "git rebase --continue or --abort"
        if _small_text(gitdir / "BISECT_START") in (target, branch):
            return str(where), "bisected", "git bisect reset"
    return None


def _small_text(path: Path) -> str:
    """The first line of a small regular file of the repository, '' when there is none (never
    waits on a named pipe, never follows a link)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
    except OSError:
        return ""
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return ""
        data = os.read(fd, 4096)
    finally:
        os.close(fd)
    return data.decode("utf-8", "surrogateescape").split("\n", 1)[0].strip()


def entries(cwd: Path, commit: str, names: Sequence[str]) -> dict[str, Entry]:
    """``{path: (mode, blob id)}`` of ``names`` in ``commit`` (or a tree)."""
    found: dict[str, Entry] = {}
    for line in _listed(["ls-tree", "-r", "-z", "--full-tree", commit], names, cwd):
        meta, name = line.split("\t", 1)
        mode, _kind, blob = meta.split()
        found[name] = (mode, blob)
    return found


def _index(top: Path, names: Sequence[str]) -> tuple[dict[str, Entry], set[str]]:
    """The live index's entries of ``names``, and those of them that are unmerged."""
    found: dict[str, Entry] = {}
    unmerged: set[str] = set()
    for line in _listed(["ls-files", "-s", "-z"], names, top):
        meta, name = line.split("\t", 1)
        mode, blob, stage = meta.split()
        if stage != "0":
            unmerged.add(name)
        found[name] = (mode, blob)
    return found, unmerged


def _listed(command: list[str], names: Sequence[str], cwd: Path) -> list[str]:
    """The NUL-separated lines ``git COMMAND -- NAMES`` prints, run once for each part of
    ``names`` that fits on a command line (a draft may change a hundred thousand files)."""
    lines: list[str] = []
    part: list[str] = []
    size = 0
    for index, name in enumerate(names):
        part.append(name)
        size += len(name.encode("utf-8", "surrogateescape")) + 1
        if size >= ARGUMENT_BYTES or index == len(names) - 1:
            out = git([*command, "--", *part], cwd).stdout
            lines += [line for line in out.decode("utf-8", "surrogateescape").split("\0") if line]
            part, size = [], 0
    return lines


def _live_entry(live: Beneath, name: str, object_format: str) -> Entry | None:
    """The live file ``name`` as git would hold it (never what a link leads to)."""
    try:
        info = live.stat(name, follow=False)
    except (FileNotFoundError, NotADirectoryError):
        return None
    if not (stat.S_ISREG(info.st_mode) or stat.S_ISLNK(info.st_mode)):
        return OTHER
    blob = draft_files.content_id(live, name, object_format)
    if blob is None:
        return None  # gone meanwhile
    if stat.S_ISLNK(info.st_mode):
        return (LINK, blob)
    return ("100755" if info.st_mode & 0o100 else "100644", blob)


def _live_write(
    top: Path,
    live: Beneath,
    name: str,
    object_format: str,
    base: Entry | None,
    theirs: Entry | None,
    gone: set[str],
) -> LiveWrite | None:
    """What the live file ``name`` becomes: the commit's version where the person left it
    as the branch held it, else both changes merged; ``None``: nothing to write. A link on
    the way is never looked through: one the commit removes (among ``gone``; a folder takes
    its place) holds no file of ``name``, any other refuses."""
    if GITLINK in (base and base[0], theirs and theirs[0]):
        return None  # a submodule's folder is the person's to update
    link = draft_files.link_on_the_way(top, name)
    if link is not None and link not in gone:
        raise _Refused
    seen = ours = None if link is not None else _live_entry(live, name, object_format)
    if ours == OTHER and base is None and _only_tracked_inside(top, name):
        ours = None  # a folder the draft replaced with a file: its files go in their own right
    if ours == theirs:
        return None
    if ours == base:
        if theirs is None:
            return LiveWrite(name, seen, None)
        return LiveWrite(name, seen, theirs[0], theirs[1])
    if not _regular(base, ours, theirs):
        raise _Refused
    assert base is not None and ours is not None and theirs is not None
    mode = theirs[0] if ours[0] == base[0] else ours[0]
    if ours[1] == base[1]:
        return LiveWrite(name, ours, mode, theirs[1])
    if theirs[1] == base[1]:  # the commit changed the mode only
        if mode == ours[0]:
            return None
        return LiveWrite(name, ours, mode, data=_live_bytes(live, name))
    merged = _merge_text(top, _blob(top, base[1]), _live_bytes(live, name), _blob(top, theirs[1]))
    return LiveWrite(name, ours, mode, data=merged)


def _only_tracked_inside(top: Path, name: str) -> bool:
    """Whether folder ``name`` holds only files git tracks (none untracked or ignored)."""
    return not paths(["ls-files", "--others", "-z", "--", f"{name}/"], top)


def _live_bytes(live: Beneath, name: str) -> bytes:
    data = live.read_bytes(name, MERGE_LARGEST + 1, follow=False)
    if len(data) > MERGE_LARGEST:
        raise _Refused
    return data


def _merged_entry(
    top: Path, base: Entry | None, ours: Entry | None, theirs: Entry | None
) -> Entry | None:
    """The index entry of a file whose staged version is ``ours``: the commit's where it
    was the branch's, else both changes merged (a new blob)."""
    if ours == base:
        return theirs
    if not _regular(base, ours, theirs):
        raise _Refused
    assert base is not None and ours is not None and theirs is not None
    mode = theirs[0] if ours[0] == base[0] else ours[0]
    if ours[1] == base[1] or theirs[1] == base[1]:
        blob = theirs[1] if ours[1] == base[1] else ours[1]
        return (mode, blob)
    data = _merge_text(top, _blob(top, base[1]), _blob(top, ours[1]), _blob(top, theirs[1]))
    made = git(["hash-object", "-w", "--stdin"], top, feed=data)
    return (mode, made.stdout.decode().strip())


def _regular(*versions: Entry | None) -> bool:
    return all(v is not None and v[0] in REGULAR for v in versions)


def _blob(top: Path, blob: str) -> bytes:
    data = git(["cat-file", "blob", blob], top).stdout
    if len(data) > MERGE_LARGEST:
        raise _Refused
    return data


def _merge_text(top: Path, base: bytes, ours: bytes, theirs: bytes) -> bytes:
    """``git merge-file`` of three versions of a text file; :class:`_Refused` on a conflict,
    a binary file or one over :data:`MERGE_LARGEST`."""
    if max(len(base), len(ours), len(theirs)) > MERGE_LARGEST:
        raise _Refused
    with tempfile.TemporaryDirectory(prefix="vis-merge-") as folder:
        files = [Path(folder) / side for side in ("ours", "base", "theirs")]
        for path, data in zip(files, (ours, base, theirs), strict=True):
            path.write_bytes(data)
        done = git(["merge-file", "-p", "-q", *map(str, files)], top, check=False)
    if done.returncode != 0:
        raise _Refused
    return done.stdout


def _writer(top: Path, write: LiveWrite) -> draft_files.Writer:
    def make(temporary: Path) -> None:
        data = write.data
        if data is None:  # one file's bytes in memory at a time
            data = git(["cat-file", "blob", write.blob], top).stdout
        if write.mode == LINK:
            os.symlink(os.fsdecode(data), temporary)
            return
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
        with open(fd, "wb") as out:
            out.write(data)
            if write.mode == "100755":
                os.fchmod(out.fileno(), 0o755)

    return make


def _set_index(top: Path, index: Sequence[tuple[str, Entry | None]], object_format: str) -> None:
    """Set the live index's entries (``None``: removed) in one ``git update-index``."""
    if not index:
        return
    zero = "0" * (64 if object_format == "sha256" else 40)
    index = sorted(index, key=lambda item: item[1] is not None)  # removals first
    lines = b"".join(
        (f"0 {zero}" if entry is None else f"{entry[0]} {entry[1]}").encode()
        + b"\t"
        + name.encode("utf-8", "surrogateescape")
        + b"\0"
        for name, entry in index
    )
    git(["update-index", "--add", "--replace", "-z", "--index-info"], top, feed=lines)
