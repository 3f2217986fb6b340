"""Runs the model's grep pattern over texts in a process of its own, which can be stopped.

Started by :mod:`vis_core.tools.search` as ``python -I -S regex_worker.py`` (standard library
only). It reads one JSON line ``{"pattern", "flags"}``, then frames of one mode byte and an
8-byte little-endian length followed by that many bytes of text; for each it writes one line:
``c`` (count) the number of matching lines (``\\n`` splits them, as ripgrep does), ``l``
(lines) a JSON list of the 0-based indices of matching lines (line ends stripped); ``k``
(keeps) a JSON list of booleans, one per path of the JSON request ``{"include", "exclude",
"root_rel", "paths"}``: whether grep's include/exclude globs (as regular expressions, the
same ``.gitignore`` rules ``vis_core.tools.ignore`` compiles) keep the path. Globs run here
too: a glob such as ``*a*a*a*a*a*b`` backtracks for hours on a long file name.
"""

from __future__ import annotations

import json
import re
import struct
import sys


def count(rx: re.Pattern[str], anywhere: re.Pattern[str], text: str) -> int:
    """Matching lines of ``text``, each read without its line end (``\\r\\n`` too); one
    search of the whole text first skips a text with none (its ``$`` misses a ``\\r``)."""
    if "\r" not in text and not anywhere.search(text):
        return 0
    return sum(1 for line in text.split("\n") if rx.search(line.removesuffix("\r")))


def matching_lines(rx: re.Pattern[str], text: str) -> list[int]:
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [i for i, line in enumerate(lines) if rx.search(line.removesuffix("\r"))]


Rules = list[tuple[bool, re.Pattern[str]]]
# pathspec marks the part of a gitignore match that comes from an ancestor folder ("foo"
# matching "foo/bar.py") with this regex group; a glob filter on files must not count it.
ANCESTOR_GROUP = "ps_d"


def _rules(wire: list[list] | None) -> Rules | None:
    if wire is None:
        return None
    return [(bool(include), re.compile(pattern, flags)) for include, pattern, flags in wire]


def matches_itself(rules: Rules, rel: str, is_dir: bool) -> bool:
    """Whether a rule of ``rules`` selects ``rel`` itself, not only a folder above it."""
    path = rel + "/" if is_dir else rel
    verdict = False
    for include, rx in rules:
        found = rx.match(path)
        if found is None:
            continue
        through = found.groupdict().get(ANCESTOR_GROUP) and found.end(ANCESTOR_GROUP)
        if not through or through == len(path):
            verdict = include
    return verdict


def keeps(include: Rules | None, exclude: Rules | None, rel: str, root_rel: str) -> bool:
    """Whether grep's ``include``/``exclude`` globs keep ``rel``: no folder on its way below
    ``root_rel`` (the folder searched) nor itself excluded, and itself included."""
    if exclude:
        parts = rel.split("/")
        skip = len(root_rel.split("/")) if root_rel not in ("", ".") else 0
        for depth in range(max(skip, 1), len(parts) + 1):
            if matches_itself(exclude, "/".join(parts[:depth]), depth < len(parts)):
                return False
    if include:
        return matches_itself(include, rel, False)
    return True


def main() -> None:
    source, sink = sys.stdin.buffer, sys.stdout.buffer
    header = json.loads(source.readline())
    rx = re.compile(header["pattern"], header["flags"])
    anywhere = re.compile(rx.pattern, rx.flags | re.MULTILINE)
    while True:
        head = source.read(9)
        if len(head) < 9:
            return
        (size,) = struct.unpack("<Q", head[1:])
        text = source.read(size).decode("utf-8", errors="replace")
        if head[:1] == b"c":
            reply = str(count(rx, anywhere, text))
        elif head[:1] == b"k":
            ask = json.loads(text)
            include, exclude = _rules(ask["include"]), _rules(ask["exclude"])
            kept = [keeps(include, exclude, rel, ask["root_rel"]) for rel in ask["paths"]]
            reply = json.dumps(kept)
        else:
            reply = json.dumps(matching_lines(rx, text))
        sink.write(reply.encode("ascii") + b"\n")
        sink.flush()


if __name__ == "__main__":
    main()
