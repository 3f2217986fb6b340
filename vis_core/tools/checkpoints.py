"""Workspace checkpoints for ``/undo``: the files as they were before a turn changed anything.

Before a turn's first block, direct tool call or ``!command``, every file a search sees
(``.gitignore`` applies; dot files included) is recorded in a manifest in the session's private
folder. A file git already holds as it is (tracked, unchanged from the index, same line
endings, as long as its blob) is not copied: the manifest names its git blob (of the
workspace's repository or of the nested one that holds it, if that one was there at the first
listing: a block can remove or rewrite the ``.git`` of one it made), read back only if an undo
needs it. Other files' bytes are kept once by content hash, each with the state it was read in
(one rewritten since the scan is recorded as copied, never the scan's state with later bytes);
a file unchanged since the previous checkpoint (same size, times, mode and inode) is not read
again, and one of which only the change time, mode or inode moved is read and its hash
compared: a block can put a file's modification time back after writing it, but not its change
time. A checkpoint copies a bounded number of files and bytes, newest first: in a big folder (a
home folder, a data folder) the rest are listed only, and a block that changes one of them says
that ``/undo`` cannot restore it. So the first checkpoint of a session in a clean repository
copies next to nothing, and one in a big folder costs a listing and a bounded copy. One
checkpoint's files are stored whole (``files.json``); each checkpoint's manifest holds what
changed since the previous one, both ways, and the others' files are worked out from them. So a
turn stores its changes, not a listing, and removing the oldest checkpoint (with the copies no
other one uses) reads only the small manifests. The workspace's links are recorded the same
way, by their target (text only, never followed; at most ``MAX_LINKS`` links and
``MAX_LINK_BYTES`` of their paths and targets, else a checkpoint records none and ``/undo``
leaves links as they are), and put back with the files: a link is made and removed only in a
folder reached through no link at all. Git runs read-only (``ls-files``, ``diff-files``,
``cat-file``; no optional locks): nothing touches the user's git index or history.
``restore(n)`` puts the workspace back as it was before the n-th newest turn that changed files
or links.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import operator
import os
import stat
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import islice
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any, TypeVar

from vis_core.model.notes import number_runs
from vis_core.model.undo import FolderTooBig, Listed, NotListed, Scan, UndoReport
from vis_core.paths import private_dir, vis_folders, write_private
from vis_core.system.git import (
    MAX_LISTED,
    MAX_LISTED_BYTES,
    Entries,
    GitFailed,
    TooMany,
    run_git,
    too_many,
)
from vis_core.tools.beneath import Beneath, Escape
from vis_core.tools.display import plural
from vis_core.tools.ignore import (
    MAX_IGNORE_BYTES,
    link_targets,
    listed_states,
    no_repository_above,
)
from vis_core.tools.own_ignores import IGNORE_FILE, judged_by_start, kept_out

if TYPE_CHECKING:
    from vis_core.tools.block_changes import BlockChanges

MAX_FILE_BYTES = 8 * 1024 * 1024  # bigger files are listed but not kept (undo names them)
MAX_NEW_BYTES = 64 * 1024 * 1024  # copied per checkpoint at most, newest files first
MAX_NEW_FILES = 5_000  # files copied per checkpoint at most; the rest are listed only
MAX_LINKS = 10_000  # links a checkpoint records at most; past it, none (undo leaves them)
MAX_LINK_BYTES = 4 * 1024 * 1024  # of their paths and targets (each target up to 4 KiB)
READS = 3  # reads of a file written during each, after which a checkpoint keeps no copy of it
KEEP = 20  # checkpoints kept per session; older ones (and blobs only they used) are removed
LISTED = "files.json"  # the files of one checkpoint, all of them
UNDONE = "undone.json"  # the positions of the turns /undo undid
GIT = "git:"  # a digest naming a git blob (sha1), ":folder" after it a nested repository's


def git_blob_id(data: bytes) -> str:
    """The id git gives ``data`` as a blob (sha1 object format)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


_SAME_BYTES_ATTRS = (b"attr/", b"attr/text=auto", b"attr/text", b"attr/-text")


def git_held_files(
    workspace: Path, sizes: dict[str, int], nested: Iterable[str] = ()
) -> dict[str, str]:
    """Files of ``sizes`` (relative path → size on disk) whose bytes git holds as they are,
    by blob id: tracked regular files unchanged from the index, no line-ending conversion
    (same endings in the index and on disk, no eol attribute) and a blob as long as the file
    (a filter such as LFS changes it). Those of each repository of ``nested`` (relative
    folders) too, by its own git, named ``blob:folder``. None of a repository that is not
    sha1, nor when git fails in it; none of the workspace's outside a repository."""
    if no_repository_above(str(workspace)):
        return {}
    found: dict[str, str] = {}
    for repo in ("", *nested):
        prefix, named = (f"{repo}/", f":{repo}") if repo else ("", "")
        wanted = {rel[len(prefix) :]: size for rel, size in sizes.items() if rel.startswith(prefix)}
        held = _held_in(workspace / repo, wanted) if wanted else {}
        found.update((prefix + rel, blob + named) for rel, blob in held.items())
    return found


def _held_in(folder: Path, sizes: dict[str, int]) -> dict[str, str]:
    """:func:`git_held_files` of the repository git finds at ``folder``, paths relative to it."""
    try:
        form = run_git(["rev-parse", "--show-object-format"], folder)
        if form.returncode != 0 or form.stdout.strip() != b"sha1":
            return {}
        # read as git writes them, at most as much as a listing takes (an index a block
        # made can name millions of long paths): past it, none is held
        listed = Entries(MAX_LISTED, 2 * MAX_LISTED_BYTES)  # paths, and ~70 bytes on each
        dirty = Entries(MAX_LISTED, MAX_LISTED_BYTES)
        listing = run_git(["ls-files", "-s", "--eol", "-z"], folder, take=listed.take)
        diff = ["diff-files", "--name-only", "--relative", "-z"]
        changing = run_git(diff, folder, take=dirty.take)
    except (GitFailed, TooMany):
        return {}
    if listing.returncode != 0 or changing.returncode != 0:
        return {}
    changed = set(dirty.items)
    found: dict[str, str] = {}
    for entry in listed.items:  # "mode blob stage<TAB>i/lf w/lf attr/<TAB>path"
        parts = entry.split(b"\t", 2)
        if len(parts) != 3 or parts[2] in changed:
            continue
        meta, eol, path = parts[0].split(), parts[1].split(), parts[2]
        if len(meta) != 3 or len(eol) != 3:
            continue
        mode, blob, stage = meta
        index_eol, disk_eol, attr = eol
        same_bytes = index_eol[2:] == disk_eol[2:] and attr in _SAME_BYTES_ATTRS
        rel = os.fsdecode(path)
        if stage == b"0" and mode in (b"100644", b"100755") and same_bytes and rel in sizes:
            found[rel] = blob.decode()
    lengths = _blob_sizes(folder, set(found.values()))
    return {rel: blob for rel, blob in found.items() if lengths.get(blob) == sizes[rel]}


def _blob_sizes(workspace: Path, blobs: set[str]) -> dict[str, int]:
    """Each blob's length, read from git's object headers (``cat-file --batch-check``)."""
    if not blobs:
        return {}
    asked = "".join(f"{blob}\n" for blob in blobs).encode()
    try:
        done = run_git(["cat-file", "--batch-check"], workspace, feed=asked)
    except (OSError, GitFailed):
        return {}
    lengths: dict[str, int] = {}
    for line in done.stdout.decode("ascii", "replace").splitlines():
        fields = line.split()
        if len(fields) == 3 and fields[1] == "blob" and fields[2].isdigit():
            lengths[fields[0]] = int(fields[2])
    return lengths


Listing = dict[str, tuple[int, ...]]  # relative path: (size, mtime_ns, mode, ctime_ns, inode)
Files = dict[str, list[Any]]  # relative path: [size, mtime_ns, mode, digest, ctime_ns, inode]
Changes = dict[str, list[list[Any] | None]]  # relative path: [before, after] (None: no file)
Links = dict[str, str]  # relative path: the link's target
LinkChanges = dict[str, list[str | None]]  # relative path: [before, after] (None: no link)
Left = dict[str, list[Any] | None]  # relative path: its state as listed (None: no file)
LeftLinks = dict[str, str | None]  # relative path: target (None: no link)
T = TypeVar("T")


@dataclass(frozen=True)
class Checkpoint:
    """One turn's checkpoint: the turn, its position, each file's [size, mtime_ns, mode,
    digest, ctime_ns, inode] (digest None: not kept, too large or past the checkpoint's copy
    budget; an older Vis recorded no ctime_ns and inode) and what changed since the previous
    checkpoint; its links likewise."""

    index: int
    turn_id: str
    position: int
    taken_at: float
    files: Files
    changes: Changes
    # the files the turn changed, as it left them (their listed state; None: removed);
    # None: not known (the turn did not end in this Vis, or an older Vis took it)
    left: Left | None = None
    # the workspace's links when it was taken; None: not known (an older Vis took it, or
    # there were more than a checkpoint records): /undo leaves links as they are
    links: Links | None = None
    link_changes: LinkChanges | None = None  # since the previous one; None: not known
    left_links: LeftLinks | None = None  # the links the turn changed, as it left them


def _changes(before: dict[str, T], after: dict[str, T]) -> dict[str, list[T | None]]:
    """The entries that differ from ``before`` to ``after``: each one's [before, after]."""
    found: dict[str, list[T | None]] = {
        rel: [f, after.get(rel)] for rel, f in before.items() if after.get(rel) != f
    }
    found.update((rel, [None, f]) for rel, f in after.items() if rel not in before)
    return found


def _touched(lefts: list[dict[str, T | None] | None]) -> dict[str, T | None] | None:
    """The paths the undone turns changed (their ``left`` records, newest first), each as
    the newest of them left it; None when a turn's is not known (then ``/undo`` puts back
    every one)."""
    touched: dict[str, T | None] = {}
    for left in lefts:
        if left is None:
            return None
        for rel, state in left.items():
            touched.setdefault(rel, state)
    return touched


def _turned(entries: dict[str, T], changes: dict[str, list[T | None]], side: int) -> dict[str, T]:
    """``entries`` with each of ``changes`` as it was before it (side 0) or after (side 1)."""
    turned = dict(entries)
    for rel, sides in changes.items():
        if (entry := sides[side]) is None:
            turned.pop(rel, None)
        else:
            turned[rel] = entry
    return turned


def _dict(value: Any) -> Any:
    """``value`` when it is a dict (a stored record), else None (missing: not known)."""
    return value if isinstance(value, dict) else None


_WRITTEN = operator.attrgetter("st_dev", "st_ino", "st_size", "st_mtime_ns", "st_ctime_ns")


def _same_state(st: os.stat_result, other: os.stat_result) -> bool:
    """Whether two states are of one file with nothing written in between: a write moves the
    change time (a process cannot set it back), a rename in of another file the inode."""
    return _WRITTEN(st) == _WRITTEN(other)


def _holds_bytes(data: bytes, digest: str) -> bool:
    """Whether ``data`` are the bytes kept under ``digest`` (a copy's, or a git blob's)."""
    if digest.startswith(GIT):
        return git_blob_id(data) == digest[len(GIT) :].partition(":")[0]
    return hashlib.sha256(data).hexdigest() == digest


def file_states(states: dict[str, os.stat_result]) -> Listing:
    """What tells a file changed: its size, modification time, mode (``chmod +x`` moves
    neither of the others), change time and inode. A process can set the modification time
    back after a write (``os.utime``), never the change time: the kernel moves it on every
    write, and on a ``chmod``, a rename or a new hard link too, so a file whose change time
    alone moved may hold the same bytes (compare them)."""
    return {
        rel: (st.st_size, st.st_mtime_ns, st.st_mode & 0o7777, st.st_ctime_ns, st.st_ino)
        for rel, st in states.items()
    }


def recorded(f: list[Any]) -> list[Any]:
    """The listed state of a checkpoint's file entry (an older Vis's lacks its change time
    and inode: then its size, modification time and mode)."""
    return [*f[:3], *f[4:6]]


def alike(state: list[Any] | tuple[Any, ...] | None, other: list[Any] | None) -> bool:
    """Whether two listed states of a file (None: no file) are one, as far as both tell."""
    if state is None or other is None:
        return state is other
    known = min(len(state), len(other))
    return list(state[:known]) == list(other[:known])


def listed(files: Files) -> Listing:
    """A checkpoint's files as :func:`file_states` lists them."""
    return {rel: tuple(recorded(f)) for rel, f in files.items()}


class Checkpoints:
    """The checkpoints of one session's workspace, kept under ``folder``."""

    def __init__(
        self,
        workspace: Path,
        folder: Path,
        *,
        max_file_bytes: int = MAX_FILE_BYTES,
        max_new_files: int = MAX_NEW_FILES,
        max_new_bytes: int = MAX_NEW_BYTES,
        max_listed: int = MAX_LISTED,
        max_links: int = MAX_LINKS,
        max_link_bytes: int = MAX_LINK_BYTES,
    ) -> None:
        self.folder = folder
        self.max_listed = max_listed
        self.max_links, self.max_link_bytes = max_links, max_link_bytes  # else none recorded
        self.max_file_bytes = max_file_bytes  # bigger files are listed, not kept
        self.max_new_files = max_new_files  # copied per checkpoint at most
        self.max_new_bytes = max_new_bytes
        self.blobs = folder / "blobs"
        self.left: Beneath | None = None  # the copy the workspace last moved from
        self.move_to(workspace)
        self._last: Checkpoint | None = None  # the newest, once this process took or read it
        self._listed: int | None = None  # the index of the one whose files are stored whole

    def move_to(self, workspace: Path) -> None:
        """The workspace these checkpoints read and restore (a session's draft while in one)."""
        self.left = getattr(self, "files", None)
        self.workspace = workspace.resolve()
        # every read and write of the workspace: no link (swapped in by a block) leads out;
        # Vis's own folders stay out of reach, except the one a draft lies in
        held = self.workspace.parents
        own = (f for f in vis_folders() if Path(os.path.realpath(f)) not in held)
        self.files = Beneath(self.workspace, tuple(own))
        self._too_big = False  # the last listing found more than max_listed files
        self._looked = ""  # the turn the last checkpoint was taken (or tried) for
        self.links: dict[str, str] = {}  # the links the last scan found (path: target)
        self.last_scan: Scan | None = None  # the last scan that listed the files, as it found them
        # those of the first listing here, before any block ran: only their git names a
        # file's bytes (a block could remove or rewrite the .git of one made since)
        self._repos_then: frozenset[str] | None = None

    # -- reading ----------------------------------------------------------------------------

    def _indices(self) -> list[int]:
        if not self.folder.is_dir():
            return []
        return sorted(int(p.stem) for p in self.folder.glob("*.json") if p.stem.isdigit())

    def _read(self, name: str, kind: type = dict) -> Any:
        """A stored manifest, listing or list of undone turns, JSON of type ``kind`` (None:
        gone, or damaged)."""
        try:
            data = json.loads((self.folder / name).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return data if isinstance(data, kind) else None

    @staticmethod
    def _checkpoint(
        index: int, data: dict[str, Any], files: Files, links: Links | None
    ) -> Checkpoint | None:
        try:
            meta = data["turn_id"], data["position"], data["taken_at"]
        except KeyError:
            return None  # damaged
        return Checkpoint(
            index,
            *meta,
            files,
            data.get("changes", {}),
            _dict(data.get("left")),
            links,
            _dict(data.get("link_changes")),
            _dict(data.get("left_links")),
        )

    def _newest(self) -> Checkpoint | None:
        """The newest checkpoint: the listed one's files and links with each later one's
        changes (a manifest written by an older Vis lists its own files, and no links).
        None: none, or damaged."""
        if self._last is not None:
            return self._last
        listed, stored = self._read(LISTED) or {}, []
        for index in reversed(self._indices()):
            data = self._read(f"{index}.json")
            if data is None:
                return None
            if index == listed.get("index"):
                data["files"] = listed.get("files")
                data["links"] = listed.get("links")  # none from an older Vis
            stored.append((index, data))
            if isinstance(data.get("files"), dict):
                break
        else:
            return None
        self._listed, base = stored[-1]
        files, links = base["files"], _dict(base.get("links"))
        for _, data in reversed(stored[:-1]):
            files = _turned(files, data.get("changes", {}), 1)
            moved = _dict(data.get("link_changes"))
            links = None if links is None or moved is None else _turned(links, moved, 1)
        self._last = self._checkpoint(stored[0][0], stored[0][1], files, links)
        return self._last

    def newest_first(self) -> Iterator[Checkpoint]:
        """Every checkpoint with all its files, newest first: an older one's are the next
        newer one's with its changes undone (or listed in a manifest of an older Vis). A
        damaged manifest ends them: older ones cannot be read."""
        later = self._newest()
        if later is None:
            return
        yield later
        for index in reversed(self._indices()):
            if index >= later.index:
                continue
            data = self._read(f"{index}.json")
            if data is None:
                return
            files, links = data.get("files"), None  # an older Vis's: its own files, no links
            if not isinstance(files, dict):
                files = _turned(later.files, later.changes, 0)
                if later.links is not None and later.link_changes is not None:
                    links = _turned(later.links, later.link_changes, 0)
            earlier = self._checkpoint(index, data, files, links)
            if earlier is None:
                return
            yield earlier
            later = earlier

    def last_of(self, turn_id: str) -> Checkpoint | None:
        """The checkpoint this process took before ``turn_id`` (None: none was taken)."""
        last = self._last
        return last if last is not None and last.turn_id == turn_id else None

    def scan(
        self, *, again: bool = False, turn: Checkpoint | None = None
    ) -> dict[str, os.stat_result]:
        """Every file a checkpoint records, by workspace-relative path, with its state now
        (``turn``: the running turn's checkpoint, whose ignore rules the turn cannot use to
        hide what it changes, see :mod:`vis_core.tools.own_ignores`);
        :class:`FolderTooBig` past ``max_listed`` files (:class:`NotListed` when git could
        not list them). A listing stops there, and once one did, the next end at once until
        one is asked ``again`` (a turn's checkpoint, ``/undo``, a block of a turn that began
        under the limit): a folder too big to list costs a bounded listing per turn, not one
        per block, and is listed again once it may have shrunk. The links the same listing
        saw are kept in :attr:`links`, with their targets, and the whole scan in
        :attr:`last_scan` (None while one is under way or was too big)."""
        self.last_scan = None
        root, listed, nested = str(self.workspace), {}, []
        if not self._too_big or again:
            try:
                listed = listed_states(
                    root,
                    hidden=True,
                    links=True,
                    most=self.max_listed + 1,
                    rules=True,
                    nested=nested,
                )
                self._too_big = len(listed) > self.max_listed
            except TooMany:  # git named more, or paths too long to hold: stopped there
                listed, self._too_big = {}, True
            except RuntimeError as exc:  # git stopped or refused: what a block made can cause
                raise NotListed(str(exc)) from None
        cut = len(root.rstrip("/")) + 1  # a listed path is the root, "/" and the relative path
        repos = [path[cut:] for path in nested if not self.files.hides(path)]
        if self._repos_then is None:  # none when the first listing was too big: none later
            self._repos_then = frozenset(repos)
        if self._too_big:
            raise FolderTooBig(
                f"{root} holds {too_many(self.max_listed)}: while it does, Vis does not "
                "list what a block changes there nor keep checkpoints for /undo; start Vis in a "
                "project folder"
            )
        # Vis's own folders are left out: its store is not the model's work
        shown = {path: st for path, st in listed.items() if not self.files.hides(path)}
        links = [path for path, st in shown.items() if stat.S_ISLNK(st.st_mode)]
        self.links = {path[cut:]: target for path, target in link_targets(root, links).items()}
        files = {path[cut:]: st for path, st in shown.items() if stat.S_ISREG(st.st_mode)}
        self.last_scan = Scan(files, self.links, repos)
        return files if turn is None else self._as_turn_lists(files, turn)

    def _as_turn_lists(
        self, files: dict[str, os.stat_result], turn: Checkpoint
    ) -> dict[str, os.stat_result]:
        """The listing ``files`` as ``turn`` (the running one, by its checkpoint) lists it:
        with what it listed, the ignore files, and what a ``.gitignore`` it changed hides,
        judged by that file as it was; without what one it changed shows now that the rules
        of the turn's start hide (else /undo would remove the person's ignored file as made
        by the turn)."""
        listed_now = {**files, **kept_out(str(self.workspace), files, turn.files)}
        now = file_states(listed_now)
        rules_then: dict[str, str | None] = {}
        for rel in now.keys() | turn.files.keys():
            path = PurePosixPath(rel)
            was = turn.files.get(rel)
            if path.name != IGNORE_FILE or alike(now.get(rel), was and recorded(was)):
                continue
            kept = None  # none then, or no copy of it kept: no rules
            if was is not None and was[3] is not None:
                with contextlib.suppress(OSError):
                    kept = self.kept_bytes(was[3])
            text = kept[:MAX_IGNORE_BYTES].decode("utf-8", "replace") if kept else None
            rules_then[str(path.parent)] = text
        if rules_then:
            since = int(turn.taken_at * 1e9) - 1_000_000_000  # a coarse clock's change times
            root = os.path.join(self.workspace, "")
            shown, hidden = judged_by_start(str(self.workspace), rules_then, listed_now, since)
            listed_now = {r: st for r, st in listed_now.items() if r in turn.files or r in shown}
            listed_now.update((r, st) for r, st in hidden.items() if not self.files.hides(root + r))
        return listed_now

    def records(self, links: Links) -> bool:
        """Whether a checkpoint records ``links``: no more, or longer, than ``max_links`` and
        ``max_link_bytes`` allow (a block that made a hundred thousand links of 4 KiB costs
        no manifest 400 MB)."""
        if len(links) > self.max_links:
            return False
        return sum(len(rel) + len(target) for rel, target in links.items()) <= self.max_link_bytes

    # -- taking -----------------------------------------------------------------------------

    def take(self, turn_id: str, position: int, scan: Scan | None = None) -> Checkpoint | None:
        """Record the workspace before ``turn_id`` changes it (once per turn), as ``scan``
        found it (the listing of what a command changed in the background, just before:
        a write between two scans was in neither), else as it is now."""
        last = self._newest()
        if last is not None and last.turn_id == turn_id:
            return None
        if last is None:  # none, or none can be read: a new history
            for old in self._indices():
                (self.folder / f"{old}.json").unlink(missing_ok=True)
        again, self._looked = self._looked != turn_id, turn_id
        if scan is None:
            self.scan(again=again)  # once per turn past the limit
            scan = self.last_scan
            assert scan is not None  # the scan raises when it lists nothing
        scanned = scan.files
        before = last.files if last is not None else {}
        index = 1 if last is None else last.index + 1
        private_dir(self.blobs)
        files: Files = {}
        sizes: dict[str, int] = {}  # new or changed since the previous checkpoint
        for rel, state in file_states(scanned).items():
            old, st = before.get(rel), scanned[rel]
            if old is not None and recorded(old) == list(state):
                files[rel] = old  # as then
            elif old is not None and old[:2] == list(state[:2]) and self._kept_as(rel, old, st):
                files[rel] = [*state[:3], old[3], *state[3:]]  # its bytes as then
            else:
                sizes[rel] = state[0]
        vouching = [repo for repo in scan.repos if repo in (self._repos_then or ())]
        held = git_held_files(self.workspace, sizes, vouching) if sizes else {}
        fresh = sorted(sizes.keys() - held.keys(), key=lambda rel: -scanned[rel].st_mtime_ns)
        kept = self._keep_newest(fresh, scanned)
        for rel in sizes:
            if rel in held:
                digest, st = GIT + held[rel], scanned[rel]  # git has these bytes: no copy
            elif rel in kept:
                digest, st = kept[rel]  # the state of the bytes copied
            else:
                continue  # vanished, unreadable or resized meanwhile
            state = file_states({rel: st})[rel]
            files[rel] = [*state[:3], digest, *state[3:]]
        changes = _changes(before, files) if last is not None else {}
        links = dict(scan.links) if self.records(scan.links) else None  # as the scan saw them
        moved = None  # the links' changes, when both sides are known
        if last is not None and last.links is not None and links is not None:
            moved = _changes(last.links, links)
        taken = Checkpoint(
            index, turn_id, position, time.time(), files, changes, links=links, link_changes=moved
        )
        meta = {"turn_id": turn_id, "position": position, "taken_at": taken.taken_at}
        with_links = {} if moved is None else {"link_changes": moved}
        self._write(f"{index}.json", {**meta, "changes": changes, **with_links})
        if last is None or (moved is None and links is not None):
            self._list(taken)  # the first, or the first to know its links: listed whole
        self._last = taken
        self._prune(taken, KEEP + 1)  # one more while its turn may yet change nothing
        return taken

    def _kept_as(self, rel: str, old: list[Any], st: os.stat_result) -> bool:
        """Whether workspace file ``rel`` in state ``st`` (the scan's) holds the bytes a
        checkpoint kept of it (``old``, its entry there): read and hashed once its change
        time, mode or inode moved (a file of which no copy was kept cannot tell); not when it
        was written since the scan (then its copy is taken as it is now)."""
        if old[3] is None:
            return False
        data, now = self._read_as(rel, st) or (None, st)
        return data is not None and _same_state(now, st) and _holds_bytes(data, old[3])

    def _write(self, name: str, data: dict[str, Any]) -> None:
        """A new file renamed over the old: what is stored is whole or absent."""
        path = self.folder / name
        write_private(path.with_suffix(".new"), json.dumps(data).encode()).replace(path)

    def _list(self, checkpoint: Checkpoint) -> None:
        """Store all the files of ``checkpoint``: the others' are worked out from them."""
        links = {} if checkpoint.links is None else {"links": checkpoint.links}
        self._write(LISTED, {"index": checkpoint.index, "files": checkpoint.files, **links})
        self._listed = checkpoint.index

    def _newest_is(self, kept: Checkpoint | None, gone: list[Checkpoint]) -> None:
        """Make ``kept`` the newest checkpoint: the newer ``gone`` ones are removed (if the
        listed one is among them, ``kept`` is listed first)."""
        if kept is None:
            (self.folder / LISTED).unlink(missing_ok=True)
        elif self._listed is None or self._listed > kept.index:
            self._list(kept)
        for used in gone:
            (self.folder / f"{used.index}.json").unlink(missing_ok=True)
        self._last = kept

    def _listing(self, turn: Checkpoint | None = None) -> Listed:
        """The workspace's files and links now (``turn``: as the running turn lists them)."""
        files = file_states(self.scan(turn=turn))
        return Listed(files, dict(self.links))

    def drop_if_unchanged(
        self, turn_id: str, seen: Listed | None = None, *, keep: bool = False
    ) -> bool:
        """At the end of ``turn_id``: forget its checkpoint when no file or link changed
        (same files, sizes, times, modes and inodes; same links and targets), so ``/undo``
        reaches the last turn that changed something and a turn that changed nothing takes no
        older checkpoint's place; else the oldest past ``KEEP`` go. ``seen``: a listing made
        after the turn's last action (its last block's), else the workspace is listed now.
        ``keep``: a command the turn left running may change files yet, which ``/undo`` of
        the turn takes back: the checkpoint stays (this is asked again once it ended)."""
        last = self._last
        if last is None or last.turn_id != turn_id:
            return False  # no checkpoint of this turn: nothing to read
        now = seen if seen is not None else self._listing(last)
        before = listed(last.files)
        links = last.links  # None: not recorded, so not compared
        if links is not None and not self.records(now.links):
            links = None  # past the budget at the end: this turn's links are not undone
        if keep or now.files != before or (links is not None and now.links != links):
            left = {
                rel: list(now.files[rel]) if rel in now.files else None
                for rel in before.keys() | now.files.keys()
                if before.get(rel) != now.files.get(rel)
            }
            record: dict[str, Any] = {"left": left}
            if links is not None:
                record["left_links"] = {
                    rel: sides[1] for rel, sides in _changes(links, now.links).items()
                }
            data = self._read(f"{last.index}.json") or {}
            self._write(f"{last.index}.json", {**data, **record})
            self._last = dataclasses.replace(last, **record)
            self._prune(self._last)
            return False
        self._newest_is(next(islice(self.newest_first(), 1, None), None), [last])
        return True

    def _keep_newest(
        self, fresh: list[str], scanned: dict[str, os.stat_result]
    ) -> dict[str, tuple[str | None, os.stat_result]]:
        """Copy the files of ``fresh`` (newest first) within the checkpoint's budget: each
        one's digest (None when not kept) and the state its bytes are of (:meth:`_read_as`);
        a file that vanished or changed size meanwhile is left out."""
        kept: dict[str, tuple[str | None, os.stat_result]] = {}
        copied = count = 0
        for rel in fresh:
            st = scanned[rel]
            if (
                st.st_size > self.max_file_bytes
                or count >= self.max_new_files
                or copied + st.st_size > self.max_new_bytes
            ):
                kept[rel] = (None, st)
                continue
            copy = self._keep(self.workspace / rel, st)
            if copy is not None:
                kept[rel] = copy
                copied, count = copied + st.st_size, count + 1
        return kept

    def _keep(self, path: Path, st: os.stat_result) -> tuple[str | None, os.stat_result] | None:
        """Copy one workspace file's bytes (:meth:`_read_as` its scan's state ``st``): their
        digest and the state they are of; no digest (and ``st``) for a file written during
        each read; None for one gone or resized."""
        read = self._read_as(path, st)
        if read is None:
            return None
        data, now = read
        if data is None:
            return None, st
        digest = hashlib.sha256(data).hexdigest()
        blob = self.blobs / digest
        if not blob.exists():
            write_private(blob, data)
        return digest, now

    def _read_as(
        self, path: Path | str, st: os.stat_result
    ) -> tuple[bytes | None, os.stat_result] | None:
        """The bytes of workspace file ``path`` and the state they are of: ``st`` (the scan's)
        when nothing wrote it between the scan and the end of the read, else (a same-size
        rewrite meanwhile) its state before a read that nothing wrote it during, read again up
        to :data:`READS` times (no bytes when it was written during each). None when it
        cannot be read beneath the workspace (a link is not followed) or its size changed
        (read no further: a sparse terabyte a block made costs it nothing)."""
        try:
            fd = self.files.open_file(path, follow=False)
        except OSError:
            return None
        try:
            before = st
            for _ in range(READS):
                data = os.pread(fd, st.st_size + 1, 0)
                now = os.fstat(fd)
                if len(data) != st.st_size or now.st_size != st.st_size:
                    return None
                if _same_state(now, before):
                    return data, now
                before = now  # written meanwhile: these bytes may be of neither state
            return None, st
        except OSError:
            return None
        finally:
            os.close(fd)

    def _prune(self, newest: Checkpoint, keep: int = KEEP) -> None:
        """Past ``keep`` checkpoints, remove the oldest and the copies no other one uses.
        Each kept one's files are the newest's with the changes since undone, so a copy in
        use is one of the newest's or was one before a kept change."""
        indices = self._indices()
        if len(indices) <= keep:
            return
        kept = indices[-keep:]
        if self._listed is None or self._listed < kept[0]:
            self._list(newest)
        for old in indices[:-keep]:
            (self.folder / f"{old}.json").unlink(missing_ok=True)
        used = {f[3] for f in newest.files.values()}
        undone = newest.changes
        for index in reversed(kept[:-1]):
            used.update(before[3] for before, _ in undone.values() if before is not None)
            data = self._read(f"{index}.json") or {}
            undone = data.get("changes", {})
            used.update(f[3] for f in data.get("files", {}).values())  # from an older Vis
        for blob in self.blobs.iterdir():
            if blob.name not in used:
                blob.unlink(missing_ok=True)

    # -- restoring --------------------------------------------------------------------------

    def watch(self, turn_id: str) -> BlockChanges:
        """What the blocks of turn ``turn_id`` change, block by block, against its checkpoint."""
        from vis_core.tools.block_changes import BlockChanges

        return BlockChanges(self, turn_id)

    def restore(self, steps: int = 1) -> UndoReport:
        """Put the workspace back as it was before the ``steps``-th newest checkpointed turn;
        those checkpoints are used up (the next undo goes further back). The links the turns
        made go first, so no file is written through one a turn left where a folder was; the
        links they removed or re-pointed come back last, where no file or folder is left."""
        if steps < 1:
            raise ValueError(f"/undo N: N must be 1 or more, not {steps}")
        existing, now = list(islice(self.newest_first(), steps + 1)), self.scan(again=True)
        if steps > len(existing):
            raise LookupError(self._nothing_left(len(existing)))
        target, used = existing[steps - 1], existing[:steps]
        touched = _touched([c.left for c in used])
        touched_links = _touched([c.left_links for c in used])
        for rel in (touched or {}).keys() - now.keys():  # one ignore rules (theirs?) hide now
            with contextlib.suppress(OSError):
                st = self.files.stat(rel, follow=False, through_links=False)
                if stat.S_ISREG(st.st_mode):
                    now[rel] = st
        if target.links is None or (touched is None) != (touched_links is None):
            was_links, now_links, touched_links = {}, {}, {}  # not recorded: left as they are
        else:
            was_links, now_links = target.links, dict(self.links)
        restored, emptied, not_kept, kept, links = [], [], [], [], []
        paths = sorted(target.files.keys() | now.keys() | was_links.keys() | now_links.keys())
        was = (target.files, was_links)
        todo = [
            rel
            for rel in paths
            if touched is None
            or self._as_left(rel, now, now_links, was, touched, touched_links or {}, kept)
        ]
        for rel in todo:  # first the links they made or re-pointed (one where a folder was)
            link, was_file = now_links.get(rel), target.files.get(rel)
            if was_file is not None and was_file[3] is None:
                continue  # over a file of which no copy was kept: it stays (named, not kept)
            if link is not None and link != was_links.get(rel):
                self._remove_link(rel, link)
                emptied.append(rel)
        for rel in todo:  # then the files they changed or removed
            if rel not in target.files:
                continue
            size, _, mode, digest = target.files[rel][:4]
            current = now.get(rel)
            if current is not None and self._same(rel, current, size, digest):
                if current.st_mode & 0o7777 != mode:  # only its mode changed (chmod +x)
                    with self._refusing(rel):
                        self.files.chmod(rel, mode, through_links=False)
                    restored.append(rel)
                continue
            data = self.kept_bytes(digest) if digest is not None else None
            if data is None:
                not_kept.append(rel)
                continue
            self._put_back(rel, data, mode)
            restored.append(rel)
        for rel in todo:  # the files they made
            if rel in now and rel not in target.files:
                with self._refusing(rel), contextlib.suppress(FileNotFoundError):  # gone already
                    self.files.unlink(rel, through_links=False)
                emptied.append(rel)
        self._remove_emptied_folders(emptied, target)
        for rel in todo:  # and last the links they removed or re-pointed
            link = was_links.get(rel)
            if link is not None and now_links.get(rel) != link:
                self._make_link(rel, link)
                restored.append(rel)
                links.append(rel)
        removed = [
            r for r in dict.fromkeys(emptied) if r not in target.files and r not in was_links
        ]
        links += (rel for rel in removed if rel in now_links)
        earlier = existing[steps] if len(existing) > steps else None
        if earlier is not None and earlier.left is not None and (restored or removed):
            earlier = self._left_as_restored(earlier, target, [*restored, *removed])
        self._newest_is(earlier, used)
        turns = tuple(c.position for c in used)
        write_private(self.folder / UNDONE, json.dumps([*self._undone(), *turns]).encode())
        return UndoReport(
            turns,
            tuple(sorted(restored)),
            tuple(removed),
            tuple(not_kept),
            tuple(kept),
            tuple(sorted(links)),
        )

    def _remove_link(self, rel: str, target: str) -> None:
        """Remove the link ``rel`` (as the scan saw it, to ``target``) itself, in a folder
        reached through no link."""
        with self._refusing(rel):
            try:
                self.files.remove_link(rel, target)
            except FileNotFoundError:
                pass  # gone already
            except FileExistsError:
                raise OSError(
                    f"/undo: {rel} changed while /undo ran; not touched, undo again"
                ) from None

    def _make_link(self, rel: str, target: str) -> None:
        """Make ``rel`` a link to ``target`` again (its text only: nothing is written through
        it), in a folder reached through no link; never over what is there now."""
        with self._refusing(rel):
            try:
                self.files.symlink(target, rel)
            except FileExistsError:
                raise OSError(
                    f"/undo: {rel} is now a file or a folder; move it away and undo again"
                ) from None

    def _remove_emptied_folders(self, removed: list[str], target: Checkpoint) -> None:
        """The folders of what this undo removed that hold no file or link the workspace had
        before (the undone turns made them), when empty now: deepest first. A checkpoint
        lists files and links, not folders: one that was empty before the turn goes too."""
        had = [*target.files, *(target.links or {})]
        kept = {str(parent) for rel in had for parent in PurePosixPath(rel).parents}
        folders = {
            str(parent)
            for rel in removed
            for parent in PurePosixPath(rel).parents
            if str(parent) not in kept and str(parent) != "."
        }
        for folder in sorted(folders, key=lambda f: f.count("/"), reverse=True):
            with contextlib.suppress(OSError):  # not empty (an ignored file), gone, or a link
                self.files.rmdir(folder)

    def _undone(self) -> list[int]:
        """The positions of the turns ``/undo`` undid, in the order it undid them."""
        return [t for t in self._read(UNDONE, list) or [] if isinstance(t, int)]

    def _nothing_left(self, left: int) -> str:
        """Why ``/undo`` cannot go back as far as asked, with ``left`` turns it can undo."""
        undone = sorted(set(self._undone()))
        said = f"/undo already undid turn{'s' if len(undone) > 1 else ''} {number_runs(undone)}"
        said = said if undone else ""
        if left:
            return f"only {plural(left, 'turn')} of this session can be undone" + (
                f" ({said})" if said else ""
            )
        if said:
            return f"nothing left to undo: {said}, and no checkpoint of an earlier turn is kept"
        return "no turn of this session has changed files yet"

    def _left_as_restored(
        self, earlier: Checkpoint, target: Checkpoint, written: list[str]
    ) -> Checkpoint:
        """The last turn before the undone ones to change each of ``written`` left it as
        ``target`` holds it (nothing changed it since): it is now as this undo wrote it, which
        a later undo finds. ``earlier`` (the newest checkpoint now) as it is stored then."""
        now = file_states(self.scan())
        waiting = set(written)
        for checkpoint in self.newest_first():
            if not waiting or checkpoint.left is None:
                break
            if checkpoint.index > earlier.index:
                continue  # an undone one
            left = dict(checkpoint.left)
            for rel in waiting & left.keys():
                was = target.files.get(rel)
                if alike(left[rel], None if was is None else recorded(was)):
                    left[rel] = list(now[rel]) if rel in now else None
            waiting -= left.keys()
            if left != checkpoint.left:
                data = self._read(f"{checkpoint.index}.json") or {}
                self._write(f"{checkpoint.index}.json", {**data, "left": left})
                if checkpoint.index == earlier.index:
                    earlier = dataclasses.replace(earlier, left=left)
        return earlier

    @staticmethod
    def _as_left(
        rel: str,
        now: dict[str, os.stat_result],
        now_links: Links,
        was: tuple[Files, Links],
        touched: Left,
        touched_links: LeftLinks,
        kept: list[str],
    ) -> bool:
        """Whether ``rel`` is the undone turns' to put back: a file or link they changed and
        that is still as they left it (what they did not change at ``rel``, as before them).
        One they changed that changed again since (the person's edit) is added to ``kept``
        and left as it is."""
        if rel not in touched and rel not in touched_links:
            return False
        was_file = was[0].get(rel)
        file_left = (
            touched[rel] if rel in touched else None if was_file is None else recorded(was_file)
        )
        link_left = touched_links[rel] if rel in touched_links else was[1].get(rel)
        file_now = None if rel not in now else file_states({rel: now[rel]})[rel]
        if not alike(file_now, file_left) or now_links.get(rel) != link_left:
            kept.append(rel)
            return False
        return True

    def _same(self, rel: str, st: os.stat_result, size: int, digest: str | None) -> bool:
        """Whether workspace file ``rel`` (``st`` its state) holds the ``size`` bytes kept
        under ``digest``: not when it cannot be read beneath the workspace (a link is not
        followed) or has grown since (read no further: a sparse terabyte costs a block
        nothing)."""
        if st.st_size != size:
            return False
        if digest is None:
            return True  # too large to compare by content; its size did not change
        try:
            data = self.files.read_bytes(rel, size + 1, follow=False)
        except OSError:
            return False
        return len(data) == size and _holds_bytes(data, digest)

    def kept_bytes(self, digest: str) -> bytes | None:
        """The kept bytes of ``digest``: our blob, or git's (None: git no longer has it)."""
        if not digest.startswith(GIT):
            return (self.blobs / digest).read_bytes()
        blob, _, repo = digest[len(GIT) :].partition(":")  # a nested repository's: its folder
        try:
            done = run_git(["cat-file", "blob", blob], self.workspace / repo)
        except GitFailed:
            return None
        if done.returncode != 0 or git_blob_id(done.stdout) != blob:
            return None
        return done.stdout

    @staticmethod
    @contextlib.contextmanager
    def _refusing(rel: str) -> Iterator[None]:
        """Nothing is written or removed at ``rel`` through a link, and /undo says why: it
        goes through no link (one a block swapped in for a folder would lead it elsewhere, in
        the workspace or out)."""
        try:
            yield
        except Escape:
            raise OSError(
                f"/undo: a folder on the way to {rel} is now a link (or leads outside the "
                "workspace); not touched"
            ) from None

    def _put_back(self, rel: str, data: bytes, mode: int) -> None:
        """Write ``rel`` again beneath the workspace (a new, unique temp file renamed over it:
        a name the sandbox could have planted as a link is never written through)."""
        with self._refusing(rel):
            try:
                st = self.files.stat(rel, follow=False)
            except FileNotFoundError:
                st = None
            if st is not None and (stat.S_ISLNK(st.st_mode) or stat.S_ISDIR(st.st_mode)):
                raise OSError(
                    f"/undo: {rel} is now a link or a folder; move it away and undo again"
                )
            self.files.write_atomic(rel, data, mode=mode, suffix=".vis-undo", through_links=False)
