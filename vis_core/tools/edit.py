"""``patch``: all edits for one file in one call, by the line numbers the model saw."""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vis_core.file_queue import cross_process_lock, file_mutation_queue
from vis_core.system.files import TEMP_SUFFIX
from vis_core.system.truncate import save_full_output
from vis_core.text_limits import Keep, truncate, truncation_note
from vis_core.tools.beneath import Escape
from vis_core.tools.context import ToolContext
from vis_core.tools.patching import (
    Edit,
    PatchError,
    apply_edits,
    check_ranges,
    parse_edits,
    rebase,
    syntax_error,
    unified_diff,
)
from vis_core.tools.pycheck import check_python
from vis_core.tools.textfiles import BinaryFileError, read_text, split_lines


@dataclass(frozen=True)
class PatchResult:
    """What a patch did: the file, its new version, the unified diff and line counts. A
    diff past what the model reads at once (2,000 lines / 50 KB) keeps its head, and
    ``diff_cut`` says so and names the file holding the whole diff."""

    path: str
    version: int
    diff: str
    added: int
    removed: int
    created: bool = False
    rebased_from: int | None = None
    notes: tuple[str, ...] = ()  # corrections an extension's op hook made (vis.repair)
    diff_cut: str = ""

    def __str__(self) -> str:
        verb = "created" if self.created else "patched"
        moved = f" (edits moved from @{self.rebased_from})" if self.rebased_from else ""
        head = f"{verb} {self.path} @{self.version}: +{self.added} -{self.removed}{moved}"
        if self.notes:
            head += "\ncorrected by op hooks: " + "; ".join(self.notes)
        if not self.diff:
            return head + "\n(no change)"
        return "\n".join(filter(None, (head, self.diff.rstrip("\n"), self.diff_cut)))


MAX_SAVED_DIFF = 8 * 1024 * 1024  # bytes of a cut diff saved whole at most


def _creation_edits(edits: object) -> list[Edit]:
    if isinstance(edits, str):
        return [Edit(1, 0, edits)]
    parsed = parse_edits(edits)
    for edit in parsed:
        if edit.start != 1 or edit.end != 0:
            raise PatchError(
                "patch: a new file starts empty, so its edits must insert at line 1 "
                "({'start': 1, 'end': 0, 'text': ...}) or be the whole text as one string"
            )
    return parsed


async def patch_file(
    ctx: ToolContext, path: str, version: int | None, edits: object, guard: Any = None
) -> PatchResult:
    """Apply ``edits`` to ``path`` as the model saw it at ``version``; refuse or write all."""
    if version is not None and (isinstance(version, bool) or not isinstance(version, int)):
        raise PatchError(
            f"patch: version must be the int after '@' in a cat/grep header (0 or None for a "
            f"new file), got {version!r}"
        )
    # fs_access hooks run extension code that may wait on the loop: never block the loop for it
    target = await asyncio.to_thread(ctx.resolve, path, tool="patch")
    label = ctx.display(target)
    if target.is_dir():
        raise IsADirectoryError(f"patch: {label} is a directory; patch edits one file")
    creating = not version
    try:
        parsed = _creation_edits(edits) if creating else parse_edits(edits)
    except PatchError:
        if creating and os.path.lexists(target):  # said of a new file, which this is not
            raise PatchError(
                f"patch: {label} already exists; version {version!r} creates a new file. Read "
                f"it with cat({label!r}) and pass the version from its header"
            ) from None
        raise
    async with file_mutation_queue(target) as real:
        # the whole read-modify-write runs in a worker thread while this file's queue is held
        return await asyncio.to_thread(
            _patch_across_processes,
            ctx,
            target,
            real,
            label,
            version or 0,
            parsed,
            creating,
            guard,
        )


def _patch_across_processes(ctx: ToolContext, target: Path, real: str, *args: Any) -> PatchResult:
    """:func:`_patch_locked` while no other Vis process rewrites the file either."""
    with cross_process_lock(real):
        return _patch_locked(ctx, target, real, *args)


def _patch_locked(
    ctx: ToolContext,
    target: Path,
    real: str,
    label: str,
    version: int,
    parsed: list[Edit],
    creating: bool,
    guard: Any = None,
) -> PatchResult:
    exists = os.path.exists(real)
    if creating:
        if exists:
            current = ctx.versions.latest(real)
            hint = f"; you last saw @{current.number}" if current else ""
            raise PatchError(
                f"patch: {label} already exists{hint}. Read it with cat({label!r}) and pass "
                "the version from its header"
            )
        return _write(
            ctx, target, real, label, [], parsed, created=True, rebased_from=None, guard=guard
        )
    seen = ctx.versions.get(real, version)
    known = ctx.versions.known_range(real)
    if not exists:
        what = (
            f"no longer exists (it was deleted or moved after you read @{version})"
            if known
            else "does not exist, and no version of it has been read"
        )
        raise FileNotFoundError(f"patch: {label} {what}; to create it, pass version=0")
    if seen is None:
        if known is None:
            raise PatchError(
                f"patch: unknown version @{version} of {label}: no version of it has been read "
                f"yet. Read it with cat({label!r}) and use the version in its header"
            )
        oldest, newest = known
        state = "stale" if version < oldest else "unknown"
        raise PatchError(
            f"patch: {state} version @{version} of {label}; versions @{oldest}–@{newest} "
            f"are known. Read it again with cat({label!r}) and use the version in its header"
        )
    try:
        text = read_text(
            target, label, tool="patch", read=lambda p: ctx.read_bytes(p, tool="patch")
        )
    except BinaryFileError as exc:
        raise PatchError(str(exc)) from None
    rebased_from = None
    if seen.matches(text):
        lines = split_lines(text)
        check_ranges(parsed, len(lines), label, version)
        moved = parsed
    else:
        now = ctx.versions.observe(real, text)
        if seen.text is None:
            raise PatchError(
                f"patch: {label} changed since you read @{version} (it is @{now} now), and the "
                f"text of @{version} is no longer held to move your edits onto it. Read it "
                f"again with cat({label!r}) and patch the version in its header"
            )
        old_lines = split_lines(seen.text)
        check_ranges(parsed, len(old_lines), label, version)
        lines = split_lines(text)
        moved = rebase(parsed, old_lines, lines, f"{label} (now @{now})")
        rebased_from = version
    return _write(
        ctx,
        target,
        real,
        label,
        lines,
        moved,
        created=False,
        rebased_from=rebased_from,
        before=text,
        guard=guard,
    )


def _write_beneath(
    ctx: ToolContext, target: Path, label: str, data: bytes, *, created: bool
) -> str:
    """Write the file where ``target`` leads beneath the workspace (a link in it is followed
    there, never out of it), refusing a control file the jail keeps read-only."""
    files = ctx.files()
    through = _write_through_editor(ctx, target, data, created=created)
    if through is not None:
        return through
    try:
        if created:
            dest, mode = target, None
        else:
            dest = files.walked(target)
            mode = files.stat(dest).st_mode & 0o7777
        written = files.write_atomic(
            dest,
            data,
            mode=mode,
            exclusive=created,
            suffix=TEMP_SUFFIX,
            check=lambda walked: ctx.check_writable(walked, tool="patch"),
        )
        return os.path.normpath(files.root / written)
    except Escape as exc:
        raise ctx.escaped(target, exc, "patch") from None
    except FileExistsError:
        raise PatchError(
            f"patch: something named {label} exists already (a link, or a file made while this "
            f"patch ran); nothing was written. Check it with ls({label!r}), then read it with "
            "cat() and patch the version in its header"
        ) from None


def _write_through_editor(
    ctx: ToolContext, target: Path, data: bytes, *, created: bool
) -> str | None:
    """``vis acp``: write through the editor (its buffer, then its save) when the path is
    one it may be given and the jail allows the write; the path written, else None."""
    buffers = ctx.buffers
    if buffers is None:
        return None
    try:
        with buffers.quiet():  # checked and written while nothing of the model's can act
            walked = ctx.files().walked(target)  # beneath the workspace, links resolved there
            place = ctx.buffer_path(walked)
            if place is None or (created and os.path.lexists(place)):
                return None
            ctx.check_writable(os.path.relpath(place, ctx.workspace), tool="patch")
            if not buffers.write_text(place, data.decode("utf-8")):
                return None
    except (Escape, OSError):
        return None  # the disk write below says why
    return str(place)


def _write(
    ctx: ToolContext,
    target: Path,
    real: str,
    label: str,
    lines: list[str],
    edits: list[Edit],
    *,
    created: bool,
    rebased_from: int | None,
    before: str = "",
    guard: Any = None,
) -> PatchResult:
    applied = apply_edits(lines, edits)
    after = "".join(applied.lines)
    if label.endswith((".py", ".pyi")):
        problem = check_python(label, before, applied.lines, applied.hunks, created=created)
    else:
        problem = syntax_error(label, after)
        if problem and not created and syntax_error(label, before) is not None:
            problem = None  # it did not parse before either: allow fixing it step by step
    if problem:
        raise PatchError(
            f"patch: refused, {label} would not parse after these edits ({problem}). Nothing "
            "was written; fix the edits and patch again with the same version"
        )
    notes: tuple[str, ...] = ()
    if guard is not None:  # op hooks see the preview; they may block or repair it
        applied, notes = guard(str(target), before, after, lines, applied, created)
        after = "".join(applied.lines)
    written = real
    if after != before or created:
        written = _write_beneath(ctx, target, label, after.encode("utf-8"), created=created)
    version = ctx.versions.observe(written, after)
    diff = unified_diff(label, lines, applied, created=created)
    rows = diff.splitlines()[2:]
    added = sum(1 for row in rows if row.startswith("+"))
    removed = sum(1 for row in rows if row.startswith("-"))
    diff, cut = _bounded(ctx, label, diff)
    return PatchResult(label, version, diff, added, removed, created, rebased_from, notes, cut)


def _bounded(ctx: ToolContext, label: str, diff: str) -> tuple[str, str]:
    """``diff`` as the result keeps it (its head, within what the model reads at once) and
    the note saying it was cut and where the whole of it was saved ("": kept whole). A
    patch that writes megabytes stores, shows and sends a bounded diff; one past
    ``MAX_SAVED_DIFF`` is not saved either (the file holds what it wrote)."""
    cut = truncate(diff, Keep.HEAD)
    if not cut.truncated:
        return diff, ""
    if cut.total_bytes > MAX_SAVED_DIFF:
        where = f" The whole diff is too large to save; cat({label!r}) reads the file."
    else:
        saved = save_full_output(diff, ctx.output_dir, f"patch-{Path(label).name}")
        where = f" Whole diff saved to: {saved}"
    return cut.text, truncation_note(cut, Keep.HEAD, where)
