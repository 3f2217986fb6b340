"""Runs the model's grep pattern over texts in a process of its own, which can be stopped.

Started by :mod:`vis_core.tools.search` as ``python -I -S regex_worker.py`` (standard library
only). It reads one JSON line ``{"pattern", "flags"}``, then frames of one mode byte and an
8-byte little-endian length followed by that many bytes of text; for each it writes one line:
``c`` (count) the number of matching lines (``\\n`` splits them, as ripgrep does), ``l``
(lines) a JSON list of the 0-based indices of matching lines (line ends stripped).
"""

from __future__ import annotations

import json
import re
import struct
import sys


def count(rx: re.Pattern[str], anywhere: re.Pattern[str], text: str) -> int:
    if not anywhere.search(text):
        return 0
    return sum(1 for line in text.split("\n") if rx.search(line))


def matching_lines(rx: re.Pattern[str], text: str) -> list[int]:
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [i for i, line in enumerate(lines) if rx.search(line.removesuffix("\r"))]


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
        else:
            reply = json.dumps(matching_lines(rx, text))
        sink.write(reply.encode("ascii") + b"\n")
        sink.flush()


if __name__ == "__main__":
    main()
