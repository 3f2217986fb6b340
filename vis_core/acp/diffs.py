"""Unified diffs as the old and new text an ACP ``diff`` tool-call content carries."""

from __future__ import annotations

GAP = "⋯\n"  # between two hunks: lines the diff did not show


def old_and_new(diff: str) -> tuple[str | None, str]:
    """The lines a unified diff shows before and after (context included), hunk by hunk;
    ``None`` as the old text of a created file."""
    old: list[str] = []
    new: list[str] = []
    created = False
    hunks = 0
    for line in diff.splitlines(keepends=True):
        if line.startswith("--- "):
            created = line.rstrip().endswith("/dev/null")
            continue
        if line.startswith("+++ "):
            continue
        if line.startswith("@@"):
            if hunks:
                old.append(GAP)
                new.append(GAP)
            hunks += 1
            continue
        if line.startswith("\\"):  # "\ No newline at end of file"
            continue
        mark, text = line[:1], line[1:]
        if mark in (" ", "-"):
            old.append(text)
        if mark in (" ", "+"):
            new.append(text)
    return (None if created else "".join(old)), "".join(new)
