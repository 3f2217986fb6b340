"""``@path`` in the prompt: the token being typed, its completions, and the files a text names.

A path with spaces (or a quote) is written quoted: ``@"my file.py"``; completion quotes it."""

from __future__ import annotations

import re
from pathlib import Path

from vis_tui.fuzzy import rank
from vis_tui.widgets.completion import Completion

# @ at the start or after a space, then a bare path or an opened quote (not closed yet)
_TYPING = re.compile(r'(?:^|\s)@(?:"([^"]*)|([^\s@"]*))$')
_MENTION = re.compile(r'(?:^|(?<=\s))@(?:"([^"]+)"|([^\s@"]+))')
_TRAILING = ",.;:!?)]}'\""
_NEEDS_QUOTES = re.compile(r'[\s"@]')
MAX_SHOWN = 30


def is_text_file(path: str) -> bool:
    """Whether the file at ``path`` reads as UTF-8 text (no NUL byte, valid UTF-8 in its
    first bytes): only those are offered after ``@``, since only their text can be sent."""
    import codecs

    from vis_core.frontend import BINARY_SNIFF_BYTES, looks_binary

    try:
        with open(path, "rb") as file:
            head = file.read(BINARY_SNIFF_BYTES)
    except OSError:
        return False
    if looks_binary(head):
        return False
    try:
        codecs.getincrementaldecoder("utf-8")().decode(head, final=False)
    except UnicodeDecodeError:
        return False
    return True


def mention_of(path: str) -> str:
    """``@path`` as the prompt writes it: quoted when the path holds a space."""
    return f'@"{path}"' if _NEEDS_QUOTES.search(path) else f"@{path}"


def typing_mention(line: str, column: int) -> tuple[int, str] | None:
    """The ``@`` token that ends at ``column`` of ``line``: (its column, the text after @
    without an opening quote)."""
    found = _TYPING.search(line[:column])
    if found is None:
        return None
    quoted = found.group(1) is not None
    typed = found.group(1) if quoted else found.group(2)
    at = (found.start(1) - 1 if quoted else found.start(2)) - 1
    return at, typed


def path_completions(files: list[str], line: str, column: int) -> list[Completion]:
    """Workspace files for the ``@`` token at the cursor, best first (fuzzy on the path)."""
    mention = typing_mention(line, column)
    if mention is None:
        return []
    start, typed = mention
    found = rank(typed, files, lambda path: path, limit=MAX_SHOWN)
    if found == [typed]:
        return []
    return [Completion(mention_of(path), "", f"{mention_of(path)} ", start) for path in found]


def mentioned_files(text: str, workspace: Path) -> list[str]:
    """Workspace-relative paths of the existing files ``text`` names as ``@path`` or
    ``@"path with spaces"`` (in order, once each); a trailing comma or full stop is not part
    of a bare path. Nothing outside the workspace is attached."""
    found: list[str] = []
    for _, rel in _mentions(text, workspace):
        if rel is not None and rel not in found:
            found.append(rel)
    return found


# a mention that reads as a path: a folder separator, or a name with an extension
_PATH_LIKE = re.compile(r"/|\.[A-Za-z0-9]{1,10}$")


def unfound_mentions(text: str, workspace: Path) -> list[str]:
    """The ``@`` mentions of ``text`` that read as a path (quoted, or with a ``/`` or an
    extension) but name no file of the workspace: a typo the person should hear of, since
    the request takes them as plain text. ``@property`` is not a path; in order, once each."""
    unfound: list[str] = []
    for match, rel in _mentions(text, workspace):
        quoted, bare = match.group(1), match.group(2)
        written = quoted if quoted is not None else bare.rstrip(_TRAILING)
        path_like = quoted is not None or bool(_PATH_LIKE.search(written))
        shown = match.group(0) if quoted is not None else f"@{written}"
        if rel is None and path_like and written and shown not in unfound:
            unfound.append(shown)
    return unfound


def _mentions(text: str, workspace: Path) -> list[tuple[re.Match[str], str | None]]:
    """Each ``@`` mention of ``text`` with the workspace file it names (relative), if any."""
    root = workspace.resolve()
    found: list[tuple[re.Match[str], str | None]] = []
    for match in _MENTION.finditer(text):
        quoted, bare = match.group(1), match.group(2)
        candidates = (quoted,) if quoted is not None else (bare, bare.rstrip(_TRAILING))
        named = None
        for candidate in candidates:
            if not candidate:
                continue
            target = (root / candidate).resolve()
            if target.is_file() and target.is_relative_to(root):
                named = target.relative_to(root).as_posix()
                break
        found.append((match, named))
    return found
