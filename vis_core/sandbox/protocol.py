"""The host ↔ sandbox-child protocol: one JSON line per message, on the child's stdin/stdout.

Host → child:

- ``init``   ``{globals, tools, snapshot}``: first message; the child restores ``snapshot``.
- ``run``    ``{id, code, tools?}``: run one block (``tools`` only when the list changed).
- ``result`` ``{id, ok, value | error: {type, message}}``: the answer to a ``call``/``hcall``.

Child → host:

- ``ready``  ``{pid, restore}``: after ``init``; ``restore`` reports what came back.
- ``call``   ``{id, name, args, kwargs}``: a tool call; many may be in flight (ids differ).
- ``hcall``  ``{id, handle, method, args, kwargs}``: a method call on a host handle.
- ``cancel`` ``{id}``: the awaiting block was cancelled; the host cancels that call.
- ``done``   ``{id, error, snapshot}``: the block ended; ``snapshot`` is null when unchanged.

The child runs untrusted code, which can write to this pipe too: the host checks every message
(:func:`child_message`) and stops a child that breaks the protocol.

Printed output does not use this channel: the child's fd 1 and 2 both go to one pipe that the
host reads; at the end of each block the child writes :func:`end_marker` there, so the host
knows it has all of that block's output before it answers ``run``.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from vis_core import wire
from vis_core.sandbox.state import MAX_SNAPSHOT_BYTES

#: bytes asked of one ``os.read``: it allocates the whole size first, and above ~128 KiB that is
#: an mmap and page faults on every read
READ_CHUNK = 1 << 16

#: the text of a block's error the child sends at most (the host shows far less of it)
MAX_ERROR_CHARS = 1 << 20
#: what a ``done`` holds besides the snapshot's pickles: helper sources, the block's forms, the
#: error, names and reasons
MESSAGE_MARGIN = 16 << 20
#: the longest message the child may send. The largest legitimate one is a ``done`` carrying a
#: full snapshot: its pickles (at most ``MAX_SNAPSHOT_BYTES``) in base64, plus the margin. The
#: child keeps its own messages under it (a ``call`` whose arguments are longer raises in the
#: block; a snapshot that does not fit is not sent); the host stops a child that sends a longer
#: one, so it never buffers more than this of one line.
MAX_MESSAGE_BYTES = (MAX_SNAPSHOT_BYTES + 2) // 3 * 4 + MESSAGE_MARGIN
#: tool calls one child may have in flight at once: a gather over a few thousand files fits,
#: a gather over a million calls would make the host hold a task and the arguments of each.
#: The child refuses more with an error in the block (the block can await some first); the
#: host has never more in flight than the child, so it stops a child that sends more.
MAX_CALLS_IN_FLIGHT = 4096


class Msg(StrEnum):
    """The ``t`` field of every protocol message."""

    INIT = "init"
    RUN = "run"
    RESULT = "result"
    READY = "ready"
    CALL = "call"
    HCALL = "hcall"
    CANCEL = "cancel"
    DONE = "done"


def end_marker(nonce: str, block_id: int) -> bytes:
    """The bytes the child writes to its output pipe after the output of block ``block_id``."""
    return f"\x1e\x1fvis-block-end:{nonce}:{block_id}\x1f\x1e".encode("ascii")


class ProtocolError(Exception):
    """The child wrote what the protocol does not allow; the text says what, for a person."""


class Lines:
    """Whole lines out of the chunks read from a pipe; a long line is joined once, at its end."""

    def __init__(self, limit: int = 0) -> None:
        self.limit = limit  # longest unfinished line kept (0: no limit); longer raises
        self._parts: list[bytes] = []
        self._size = 0

    def feed(self, chunk: bytes) -> list[bytes]:
        """The lines ``chunk`` completes, without their newline; never keeps more than
        ``limit`` bytes of one line (a line within one chunk is at most ``READ_CHUNK``)."""
        if b"\n" not in chunk:
            if self.limit and self._size + len(chunk) > self.limit:
                raise ProtocolError(f"a message longer than {self.limit:,} bytes")
            self._parts.append(chunk)
            self._size += len(chunk)
            return []
        lines = chunk.split(b"\n")
        if self._parts:
            if self.limit and self._size + len(lines[0]) > self.limit:
                raise ProtocolError(f"a message longer than {self.limit:,} bytes")
            lines[0] = b"".join([*self._parts, lines[0]])
        rest = lines.pop()
        self._parts = [rest] if rest else []
        self._size = len(rest)
        return lines


_NONE = type(None)
# The fields each message from the child must have, with their JSON types (exact: a bool is
# not an id).
_FROM_CHILD: dict[str, tuple[tuple[str, tuple[type, ...]], ...]] = {
    Msg.READY: (("pid", (int,)), ("restore", (dict,))),
    Msg.CALL: (("id", (int,)), ("name", (str,)), ("args", (list,)), ("kwargs", (dict,))),
    Msg.HCALL: (
        ("id", (int,)),
        ("handle", (str,)),
        ("method", (str,)),
        ("args", (list,)),
        ("kwargs", (dict,)),
    ),
    Msg.CANCEL: (("id", (int,)),),
    Msg.DONE: (
        ("id", (int,)),
        ("error", (str, _NONE)),
        ("snapshot", (dict, _NONE)),
        ("forms", (list,)),
    ),
}


def child_message(line: bytes) -> dict[str, Any]:
    """One line from the child as a message of a known kind with the fields it needs, or
    :class:`ProtocolError` saying what was wrong."""
    try:
        msg = wire.loads(line)
    except ValueError:
        raise ProtocolError("a line that is not JSON") from None
    kind = msg.get("t") if type(msg) is dict else None
    fields = _FROM_CHILD.get(kind) if type(kind) is str else None
    if fields is None:
        raise ProtocolError("a line that is not a message it may send")
    for name, types in fields:
        if type(msg.get(name)) not in types:
            raise ProtocolError(f"a {kind!r} message whose {name!r} is missing or wrong")
    if kind == Msg.DONE and not all(type(form) is dict for form in msg["forms"]):
        raise ProtocolError("a 'done' message whose 'forms' are not objects")
    if kind == Msg.READY and not _restore_report(msg["restore"]):
        raise ProtocolError("a 'ready' message whose 'restore' report is wrong")
    return msg


def _restore_report(report: dict[str, Any]) -> bool:
    """Whether a restore report has the shape the host reads: lists of names, dicts of reasons."""
    for key in ("helpers", "variables", "modules"):
        names = report.get(key, [])
        if type(names) is not list or not all(type(n) is str for n in names):
            return False
    return all(type(report.get(key, {})) is dict for key in ("failed", "lost"))
