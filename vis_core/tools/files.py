"""``cat`` and ``ls``: numbered reads under ``path @version`` headers, and folder listings."""

from __future__ import annotations

import os
from pathlib import Path

from vis_core.tools.context import ToolContext
from vis_core.tools.ignore import IgnoreStack, is_ignored, rules_in
from vis_core.tools.textfiles import ToolText, read_text, realpath, shown, split_lines, strip_eol
from vis_core.tools.truncate import MAX_BYTES, MAX_LINES, Keep, fit_output, format_size


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
    text = read_text(target, label, tool="cat")
    version = ctx.versions.observe(realpath(target), text)
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


def _entry_line(path: Path, name: str, indent: str) -> tuple[str, bool]:
    """One listing row and whether it is a folder to descend into."""
    if path.is_symlink():
        try:
            target = os.readlink(path)
        except OSError:
            target = "?"
        return f"{indent}{name} -> {target}", False
    if path.is_dir():
        return f"{indent}{name}/", True
    try:
        size = path.stat().st_size
    except OSError:
        return f"{indent}{name}", False
    return f"{indent}{name}  {format_size(size)}", False


def list_folder(ctx: ToolContext, path: str = ".", depth: int = 1) -> ToolText:
    """List ``path`` ``depth`` levels deep: folders first with ``/``, files with their size."""
    if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
        raise ValueError(f"ls: depth must be an int >= 1, got {depth!r}")
    target = ctx.resolve(path, tool="ls")
    label = ctx.display(target)
    if not target.exists() and not target.is_symlink():
        raise FileNotFoundError(f"ls: no file or folder {label}; check the parent folder with ls()")
    if not target.is_dir():
        row, _ = _entry_line(target, label, "")
        return ToolText(row, path=str(target), label=label, folders=0, files=1)
    rows: list[str] = [f"{label}/" if label != "." else "./"]
    counts = {"folders": 0, "files": 0}
    stack: IgnoreStack = []

    def visit(folder: Path, level: int) -> None:
        rules = rules_in(str(folder))
        if rules is not None:
            stack.append((str(folder), rules))
        try:
            entries = sorted(os.scandir(folder), key=lambda e: (not e.is_dir(), e.name))
        except OSError as exc:
            rows.append(f"{'  ' * level}[cannot list: {exc.strerror}]")
            entries = []
        for entry in entries:
            child = Path(entry.path)
            row, is_dir = _entry_line(child, entry.name, "  " * level)
            counts["folders" if is_dir else "files"] += 1
            ignored = is_dir and (
                entry.name == ".git" or (bool(stack) and is_ignored(stack, entry.path, True))
            )
            if ignored:
                row += "  (ignored, not listed)"
            rows.append(row)
            if is_dir and not ignored and level < depth:
                visit(child, level + 1)
        if rules is not None:
            stack.pop()

    visit(target, 1)
    text = "\n".join(rows)
    if len(rows) == 1:
        text += "\n  (empty folder)"
    out = fit_output(text, ctx.output_dir, keep=Keep.HEAD, label="ls")
    return ToolText(out, path=str(target), label=label, **counts)
