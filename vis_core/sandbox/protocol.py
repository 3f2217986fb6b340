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

Printed output does not use this channel: the child's fd 1 and 2 both go to one pipe that the
host reads; at the end of each block the child writes :func:`end_marker` there, so the host
knows it has all of that block's output before it answers ``run``.
"""

from __future__ import annotations

from enum import StrEnum


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
