"""``cat`` and ``ls``: numbered reads under ``path @version`` headers, and folder listings."""

from __future__ import annotations

import os
from pathlib import Path

from vis_core.system.truncate import fit_output
from vis_core.text_limits import MAX_BYTES, MAX_LINES, Keep, format_size
from vis_core.tools.beneath import Beneath, Entry, Escape, entries, open_child
from vis_core.tools.context import ToolContext, hidden_folders
from vis_core.tools.ignore import IgnoreStack, is_ignored, rules_at
from vis_core.tools.textfiles import ToolText, read_text, shown, split_lines, strip_eol


def _check_line(value: object, name: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"cat: {name} must be a line number (int) or None, got {value!r}")
    if value < 1:
        raise ValueError(f"cat: {name}={value} is not a line number; lines start at 1")
    return value


def cat_file(
    ctx: ToolContext, path: str, start: int | None = None, end: int | None = None
) -> ToolText:
    """Read ``path`` as numbered lines under a ``path @version`` header, paging large files."""
    first = _check_line(start, "start")
    last = _check_line(end, "end")
    target = ctx.resolve(path, tool="cat")
    label = ctx.display(target)
    text = read_text(target, label, tool="cat", read=lambda p: ctx.read_bytes(p, tool="cat"))
    version = ctx.versions.observe(os.path.realpath(target), text)
    lines = split_lines(text)
    total = len(lines)
    info = {"path": str(target), "label": label, "version": version, "total": total}
    if total == 0:
        return ToolText(f"{label} @{version}\n(empty file)", start=0, end=0, **info)
    lo = first or 1
    if lo > total:
        raise ValueError(
            f"cat: {label} has {total:,} lines; start={lo} is past its end. Use start <= {total}."
        )
    if last is not None and last < lo:
        raise ValueError(f"cat: end={last} is before start={lo}; pass end >= start or None")
    hi = min(last or total, total)
    width = len(str(hi))
    body: list[str] = []
    used = 0
    shown_to = lo - 1
    for number in range(lo, hi + 1):
        row = f"{number:>{width}}: {shown(strip_eol(lines[number - 1]))}\n"
        size = len(row.encode("utf-8"))
        if body and (len(body) >= MAX_LINES or used + size > MAX_BYTES):
            break
        body.append(row)
        used += size
        shown_to = number
    whole = lo == 1 and shown_to == total
    header = (
        f"{label} @{version}"
        if whole
        else (f"{label} @{version} · lines {lo:,}–{shown_to:,} of {total:,}")
    )
    out = header + "\n" + "".join(body)
    if shown_to < hi:
        out += (
            f"[Stopped at line {shown_to:,} to stay within {MAX_LINES:,} lines / "
            f"{format_size(MAX_BYTES)}; read on with cat({label!r}, start={shown_to + 1})]"
        )
    return ToolText(out.rstrip("\n"), start=lo, end=shown_to, **info)


def _entry_row(name: str, entry: Entry, indent: str, link: str | None) -> tuple[str, bool]:
    """One listing row and whether it is a folder to descend into."""
    if entry.is_link:
        return f"{indent}{name} -> {link if link is not None else '?'}", False
    if entry.is_dir:
        return f"{indent}{name}/", True
    return f"{indent}{name}  {format_size(entry.stat.st_size)}", False


def _link_text(fd: int, name: str) -> str | None:
    try:
        return os.readlink(name, dir_fd=fd)
    except OSError:
        return None


def _identities(folders: list[Path]) -> set[tuple[int, int]]:
    found = set()
    for folder in folders:
        try:
            st = os.stat(folder)
        except OSError:
            continue
        found.add((st.st_dev, st.st_ino))
    return found


def _rules_above(files: Beneath, workspace: Path, target: Path) -> IgnoreStack:
    """The ``.gitignore`` rules of the folders from the workspace down to ``target``'s
    parent (as Git and ``grep`` apply them): a subfolder's listing honours the root's."""
    if target == workspace or workspace not in target.parents:
        return []
    stack: IgnoreStack = []
    for folder in reversed(target.parents[: len(target.parents) - len(workspace.parents)]):
        try:
            fd, _ = files.open_dir(folder)
        except (OSError, Escape):
            return stack
        try:
            rules = rules_at(fd)
        finally:
            os.close(fd)
        if rules is not None:
            stack.append((str(folder), rules))
    return stack


def list_folder(ctx: ToolContext, path: str = ".", depth: int = 1) -> ToolText:
    """List ``path`` ``depth`` levels deep: folders first with ``/``, files with their size.

    Folders are opened one inside the other by descriptor, never through a link: a folder
    swapped for a link meanwhile is not followed."""
    if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
        raise ValueError(f"ls: depth must be an int >= 1, got {depth!r}")
    target = ctx.resolve(path, tool="ls")
    label = ctx.display(target)
    files = ctx.files(target)
    try:
        try:
            top, _ = files.open_dir(target)
        except (FileNotFoundError, NotADirectoryError) as exc:
            try:
                entry = Entry(label, files.stat(target, follow=False))
            except FileNotFoundError:
                raise FileNotFoundError(
                    f"ls: no file or folder {label}; check the parent folder with ls()"
                ) from None
            if entry.is_dir:  # a link (or something) raced: report the first error
                raise exc from None
            link = files.readlink(target) if entry.is_link else None
            row, _ = _entry_row(label, entry, "", link)
            return ToolText(row, path=str(target), label=label, folders=0, files=1)
    except Escape as exc:
        raise ctx.escaped(target, exc, "ls") from None
    rows: list[str] = [f"{label}/" if label != "." else "./"]
    counts = {"folders": 0, "files": 0}
    stack: IgnoreStack = _rules_above(files, ctx.workspace, target)
    hidden = _identities(hidden_folders()) if ctx.jail else set()

    def visit(fd: int, folder: str, level: int) -> None:
        rules = rules_at(fd)
        if rules is not None:
            stack.append((folder, rules))
        try:
            found = sorted(entries(fd), key=lambda e: (not e.is_dir, e.name))
        except OSError as exc:
            rows.append(f"{'  ' * level}[cannot list: {exc.strerror}]")
            found = []
        for entry in found:
            child = os.path.join(folder, entry.name)
            link = _link_text(fd, entry.name) if entry.is_link else None
            row, is_dir = _entry_row(entry.name, entry, "  " * level, link)
            counts["folders" if is_dir else "files"] += 1
            ignored = is_dir and (
                entry.name == ".git" or (bool(stack) and is_ignored(stack, child, True))
            )
            if is_dir and (entry.stat.st_dev, entry.stat.st_ino) in hidden:
                row += "  (Vis's own folder, hidden)"
            elif ignored:
                row += "  (ignored, not listed)"
            rows.append(row)
            if is_dir and not ignored and level < depth and row.endswith("/"):
                try:
                    inner = open_child(fd, entry.name, os.O_RDONLY | os.O_DIRECTORY)
                except OSError as exc:
                    rows.append(f"{'  ' * (level + 1)}[cannot list: {exc.strerror}]")
                    continue
                try:
                    visit(inner, child, level + 1)
                finally:
                    os.close(inner)
        if rules is not None:
            stack.pop()

    try:
        visit(top, str(target), 1)
    finally:
        os.close(top)
    text = "\n".join(rows)
    if len(rows) == 1:
        text += "\n  (empty folder)"
    out = fit_output(text, ctx.output_dir, keep=Keep.HEAD, label="ls")
    return ToolText(out, path=str(target), label=label, **counts)
