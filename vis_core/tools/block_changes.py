"""The files each block created, changed or removed, with diffs, from the `/undo` checkpoints.

A turn's checkpoint records every file before the turn's first block. After each block the
workspace is listed again (sizes, times, modes and inodes only); a file whose size, time,
mode or inode moved (its change time too: a block can put the modification time back, not
that) and holds other bytes or mode, a new file and a missing one are the block's changes.
The bytes before come from the checkpoint (or from what an earlier block of the turn left,
kept here), the bytes after from the file itself, read without following links. Diffs are
bounded: binary files and large ones are named, not diffed, each diff is cut, and so are all
of one block's (a block that writes hundreds of files stores a bounded row); a file whose
bytes before the turn were not kept says that ``/undo`` cannot restore it. Links are listed
too (made, retargeted, removed, or a file replaced by one), their target shown as text, never
followed; when the turn's checkpoint recorded no links (too many), each says that ``/undo``
cannot restore it.

A workspace past the checkpoints' listing limit is not listed: the block says so (its row
and its result). A turn that began under the limit lists again after each block (each
listing stops at the limit), so the block that shrinks it back is listed, with what the
blocks before it changed; a turn that began past it is not listed again until the next turn.

After the turn, :meth:`BlockChanges.finish` lists again what the commands its blocks left
running changed since its last block (``vis_core.agent.background_files``), the same way.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from vis_core.model.block import FileChange, FileChangeKind
from vis_core.model.undo import NOT_KEPT, FolderTooBig, Listed, Scan
from vis_core.text_limits import printable
from vis_core.tools.checkpoints import Checkpoint, Checkpoints, Listing, file_states, listed
from vis_core.tools.patching import matching_steps

if TYPE_CHECKING:
    from vis_core.tools.beneath import Beneath

MAX_DIFF_INPUT = 512 * 1024  # bytes of one side above which no diff is made
# pairs of equal lines one file's diff may look through at its first search (matching_steps;
# the largest source files take 60 K): each later search walks them again, so 20,000 lines of
# 100 values, each 1% of them, took 89 s of Vis's CPU after the block that wrote them
MAX_DIFF_STEPS = 200_000
# of all one block's file diffs together: 200 files at the bound of each took minutes
MAX_BLOCK_DIFF_STEPS = 2_000_000
MAX_DIFF_LINES = 400  # lines of one file's diff kept; the rest is counted
MAX_DIFF_CHARS = 40_000
MAX_FILES = 200  # files listed per block; more are counted in the last one's note
MAX_BLOCK_DIFF_CHARS = 400_000  # of all one block's diffs; past it a file's diff is left out
LEFT_OUT = f"diff left out: this block's diffs passed {MAX_BLOCK_DIFF_CHARS:,} characters"
TIME_LEFT_OUT = "diff left out: this block's other diffs took the time for diffs"
LOST = f"/undo cannot restore it ({NOT_KEPT})"
LINKS_LOST = "/undo cannot restore it (the workspace holds more links than a checkpoint records)"
# what a block's result says when the workspace was too big to list after it, or before it
UNLISTED = (
    "Vis could not list the files this block changed: the workspace holds more than {most:,} "
    "files, more than it lists. It lists them again, and /undo works again, once the "
    "workspace holds fewer"
)
# what the block that lists the workspace again after such blocks says
LISTED_AGAIN = (
    "the workspace holds few enough files to list again: the files listed for this block "
    "include what the blocks before it changed while it held too many"
)


class BlockChanges:
    """Follows one turn's workspace from block to block (made anew for each turn)."""

    def __init__(
        self, checkpoints: Checkpoints, turn_id: str, diff_steps: int = MAX_BLOCK_DIFF_STEPS
    ) -> None:
        self.checkpoints = checkpoints
        self.turn_id = turn_id
        self.diff_steps = diff_steps  # what each block's file diffs look through together
        self._stats: Listing | None = None
        self._links: dict[str, str] = {}  # the links before the block: path, target
        self._links_lost = False  # the turn's checkpoint recorded no links: /undo has none
        self._digests: dict[str, str | None] = {}
        self._after: dict[str, bytes | None] = {}  # what an earlier block of the turn left
        self._left: Beneath | None = None  # the copy a block moved from: its files as they were
        self._taken: Checkpoint | None = None  # the turn's checkpoint, while its start holds
        self.seen: Listed | None = None  # the listing after the last block, if it finished
        self.scan: Scan | None = None  # the scan of the last finish, if it listed the files
        self.note = ""  # what the last block's result says of its listing (UNLISTED …)
        self._missed = False  # a block since the last listing was not listed
        self._moved = False  # the workspace moved: the turn's checkpoint is not its start

    def start(self) -> None:
        """Before a block: the files as the turn's checkpoint (or a listing now) has them."""
        self.seen, self.note = None, ""
        if self._stats is not None:
            return
        taken = None if self._moved else self.checkpoints.last_of(self.turn_id)
        if taken is not None:
            self._taken = taken
            self._stats = listed(taken.files)
            self._links_lost = taken.links is None
            self._links = dict(self.checkpoints.links if taken.links is None else taken.links)
            self._digests = {rel: f[3] for rel, f in taken.files.items()}
        else:
            self._stats = self._listing()
            self._links = dict(self.checkpoints.links)

    def rebase(self) -> None:
        """The workspace moved (into or out of a draft) during a block: what the block does
        from now on is told against the new copy as it is now, not the old one."""
        if self._stats is None:
            return  # not started: the next block starts from the checkpoint
        self.seen, self._moved, self._taken = None, True, None
        self._stats = self._listing()
        self._links = dict(self.checkpoints.links)
        self._digests = {}
        self._after = {}
        self._left = self.checkpoints.left  # a new draft holds what it had (unchanged since)

    def _listing(self, *, again: bool = False) -> Listing | None:
        """The workspace listed now; None when it holds too many files (:attr:`note` says so,
        and the next listing is told against the last one made)."""
        try:
            return file_states(self.checkpoints.scan(again=again, turn=self._taken))
        except FolderTooBig:
            self.note = UNLISTED.format(most=self.checkpoints.max_listed)
            self._missed = True
            return None

    def finish(self) -> tuple[FileChange, ...]:
        """After a block: what it changed since the previous one listed (or the turn's start)."""
        self.scan = None
        if self._stats is None:
            return ()
        before, now = self._stats, self._listing(again=True)
        if now is None:
            return ()
        self.scan = self.checkpoints.last_scan
        if self._missed:
            self.note, self._missed = LISTED_AGAIN, False
        links_before, links = self._links, dict(self.checkpoints.links)
        self._stats = now
        self._links = links
        self.seen = Listed(now, links)
        touched = [] if now == before else _differ(before, now)
        if links != links_before:
            touched += [
                r for r in links.keys() | links_before.keys() if links.get(r) != links_before.get(r)
            ]
        touched = sorted(set(touched))
        links_lost = links != links_before and (
            self._links_lost or not self.checkpoints.records(links)
        )
        links_note = LINKS_LOST if links_lost else ""
        changes: list[FileChange] = []
        room = MAX_BLOCK_DIFF_CHARS  # what the block's row keeps of its diffs, all files
        self._diff_steps = DiffSteps(self.diff_steps)
        for rel in touched[:MAX_FILES]:
            if rel in links or rel in links_before:
                changes.append(self._link_change(rel, before, now, links_before, links, links_note))
                continue
            old = self._old_bytes(rel, before[rel][0]) if rel in before else b""
            new = self._read(rel) if rel in now else b""
            lost = rel in self._digests and self._digests[rel] is None  # listed, not kept
            self._after[rel] = new
            if rel not in before:
                kind = FileChangeKind.CREATED
            elif rel not in now:
                kind = FileChangeKind.REMOVED
            else:
                kind = FileChangeKind.CHANGED
            moved = (
                _mode_note(before[rel][2], now[rel][2]) if kind is FileChangeKind.CHANGED else ""
            )
            if kind is FileChangeKind.CHANGED and old is not None and old == new and not moved:
                continue  # touched, same bytes
            change = file_change(rel, kind, old, new, self._diff_steps)
            if len(change.diff) > room:
                change = replace(change, diff="", note=LEFT_OUT)
            room -= len(change.diff)
            note = LOST if lost else change.note
            changes.append(replace(change, note="; ".join(n for n in (moved, note) if n)))
        if len(touched) > MAX_FILES and changes:
            last = changes[-1]
            more = f"{len(touched) - MAX_FILES:,} more files changed, not listed"
            changes[-1] = FileChange(
                last.path, last.kind, last.diff, last.added, last.removed, more
            )
        return tuple(changes)

    def _link_change(
        self,
        rel: str,
        before: Listing,
        now: Listing,
        links_before: dict[str, str],
        links: dict[str, str],
        lost: str,
    ) -> FileChange:
        """The change of ``rel``, a link before or after the block (or both); ``lost``: why
        ``/undo`` cannot restore it, if it cannot."""
        was, target = links_before.get(rel), links.get(rel)
        if rel in now:  # a link replaced by a file
            new = self._read(rel)
            self._after[rel] = new
            change = file_change(rel, FileChangeKind.CHANGED, b"", new, self._diff_steps)
            note = _joined(f"was a link to {shown(was or '')}", change.note, lost)
            return replace(change, note=note)
        self._after.pop(rel, None)
        if target is None:
            assert was is not None
            note = _joined(f"a link to {shown(was)}", lost)
            return FileChange(rel, FileChangeKind.REMOVED, note=note)
        if rel in before:  # a file replaced by a link
            lost = LOST if self._digests.get(rel, "") is None else lost
            note = _joined(f"replaced by a link to {shown(target)}", lost)
            return FileChange(rel, FileChangeKind.CHANGED, note=note)
        if was is None:
            note = _joined(f"a link to {shown(target)}", lost)
            return FileChange(rel, FileChangeKind.CREATED, note=note)
        note = _joined(f"a link, now to {shown(target)} (was to {shown(was)})", lost)
        return FileChange(rel, FileChangeKind.CHANGED, note=note)

    def _old_bytes(self, rel: str, size: int) -> bytes | None:
        """``rel``'s bytes before the block, which listed it at ``size`` bytes."""
        if rel in self._after:
            return self._after[rel]
        digest = self._digests.get(rel)
        if digest is None:
            return self._left_bytes(rel, size)
        try:
            return self.checkpoints.kept_bytes(digest)
        except OSError:
            return None

    def _left_bytes(self, rel: str, size: int) -> bytes | None:
        """``rel`` in the copy the workspace moved from, if still the ``size`` it had in the
        new copy (else not known)."""
        if self._left is None:
            return None
        try:
            data = self._left.read_bytes(rel, MAX_DIFF_INPUT + 1, follow=False)
        except OSError:
            return None
        return data if len(data) == size else None

    def _read(self, rel: str) -> bytes | None:
        """The file's bytes now, beneath the workspace without following a link, as a regular
        file only: a block may have swapped it for a link or a named pipe (never waited on)."""
        try:
            return self.checkpoints.files.read_bytes(rel, MAX_DIFF_INPUT + 1, follow=False)
        except OSError:
            return None


def _differ(before: Listing, now: Listing) -> list[str]:
    """The files made, changed or removed between two listings."""
    return [rel for rel, seen in now.items() if before.get(rel) != seen] + [
        rel for rel in before if rel not in now
    ]


def shown(target: str) -> str:
    """A link's target as text on one line: quoted, control and format characters (a line
    break, a bidi control) and bytes that are not UTF-8 escaped."""
    text = printable(target)
    return "'" + "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in text) + "'"


def _joined(*notes: str) -> str:
    return "; ".join(note for note in notes if note)


def _mode_note(before: int, now: int) -> str:
    """``mode 644 → 755`` when a file's mode moved, else empty."""
    return "" if before == now else f"mode {before:o} → {now:o}"


def _text(data: bytes | None) -> str | None:
    if data is None or len(data) > MAX_DIFF_INPUT or b"\0" in data[:8192]:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


@dataclass
class DiffSteps:
    """Pairs of equal lines (:func:`matching_steps`) a block's file diffs may still look
    through, all of its files together."""

    left: int


def file_change(
    rel: str,
    kind: FileChangeKind,
    old: bytes | None,
    new: bytes | None,
    steps: DiffSteps | None = None,
) -> FileChange:
    """The change of ``rel`` from ``old`` to ``new`` bytes (None: not known), diffed when
    both sides are text of a bounded size, whose diff looks through a bounded number of
    pairs of equal lines (``steps``: and within what the block's other diffs left)."""
    old_text, new_text = _text(old), _text(new)
    if old_text is None or new_text is None:
        unknown = old is None or new is None
        large = any(d is not None and len(d) > MAX_DIFF_INPUT for d in (old, new))
        note = "not kept: no diff" if unknown else "too large to diff" if large else "binary"
        return FileChange(rel, kind, note=note)
    old_lines, new_lines = old_text.splitlines(keepends=True), new_text.splitlines(keepends=True)
    needed = matching_steps(old_lines, new_lines, autojunk=True)
    if needed > MAX_DIFF_STEPS:
        return FileChange(rel, kind, note="too repetitive to diff")
    if steps is not None:
        if needed > steps.left:
            return FileChange(rel, kind, note=TIME_LEFT_OUT)
        steps.left -= needed
    lines = list(
        difflib.unified_diff(
            old_lines,
            new_lines,
            fromfile=f"a/{rel}" if kind is not FileChangeKind.CREATED else "/dev/null",
            tofile=f"b/{rel}" if kind is not FileChangeKind.REMOVED else "/dev/null",
            n=3,
        )
    )
    added = sum(1 for line in lines if line.startswith("+") and not line.startswith("+++"))
    removed = sum(1 for line in lines if line.startswith("-") and not line.startswith("---"))
    note = ""
    kept = lines[:MAX_DIFF_LINES]
    diff = "".join(line if line.endswith("\n") else line + "\n" for line in kept)
    if len(diff) > MAX_DIFF_CHARS:
        diff = diff[:MAX_DIFF_CHARS].rsplit("\n", 1)[0] + "\n"
    shown = diff.count("\n")
    if shown < len(lines):
        note = f"diff cut: {len(lines) - shown:,} more lines"
    return FileChange(rel, kind, diff, added, removed, note)
