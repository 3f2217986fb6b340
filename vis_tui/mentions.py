"""``@path`` in the prompt: the token being typed, its completions, and the files a text names."""

from __future__ import annotations

import re
from pathlib import Path

from vis_tui.fuzzy import rank
from vis_tui.widgets.completion import Completion

_TYPING = re.compile(r"(?:^|\s)@([^\s@]*)$")
_MENTION = re.compile(r"(?:^|(?<=\s))@([^\s@]+)")
_TRAILING = ",.;:!?)]}'\""
MAX_SHOWN = 30


def typing_mention(line: str, column: int) -> tuple[int, str] | None:
    """The ``@`` token that ends at ``column`` of ``line``: (its column, the text after @)."""
    found = _TYPING.search(line[:column])
    if found is None:
        return None
    return found.start(1) - 1, found.group(1)


def path_completions(files: list[str], line: str, column: int) -> list[Completion]:
    """Workspace files for the ``@`` token at the cursor, best first (fuzzy on the path)."""
    mention = typing_mention(line, column)
    if mention is None:
        return []
    start, typed = mention
    found = rank(typed, files, lambda path: path, limit=MAX_SHOWN)
    if found == [typed]:
        return []
    return [Completion(f"@{path}", "", f"@{path} ", start) for path in found]


def mentioned_files(text: str, workspace: Path) -> list[str]:
    """Workspace-relative paths of the existing files ``text`` names as ``@path`` (in order,
    once each); a trailing comma or full stop is not part of the path. Nothing outside the
    workspace is attached."""
    root = workspace.resolve()
    found: list[str] = []
    for match in _MENTION.finditer(text):
        token = match.group(1)
        for candidate in (token, token.rstrip(_TRAILING)):
            if not candidate:
                continue
            target = (root / candidate).resolve()
            if target.is_file() and target.is_relative_to(root):
                rel = target.relative_to(root).as_posix()
                if rel not in found:
                    found.append(rel)
                break
    return found
