"""The host ↔ sandbox-child protocol: limits and the block-end marker.

Messages are :mod:`vis_core.ipc.messages` (``Init``, ``Run``, ``Result`` to the child;
``Ready``, ``ToolCall``, ``HandleCall``, ``CancelCall``, ``Done`` from it), one frame each
(:mod:`vis_core.ipc.framing`) on the child's stdin/stdout; values inside are encoded by
:mod:`vis_core.ipc.values`. The child runs untrusted code, which can write to this pipe too:
the host checks every message and stops a child that breaks the protocol.

Printed output does not use this channel: the child's fd 1 and 2 both go to one pipe that the
host reads; at the end of each block the child writes :func:`end_marker` there, so the host
knows it has all of that block's output before it answers ``run``.
"""

from __future__ import annotations

from enum import StrEnum

#: all variables of one snapshot (:mod:`vis_core.sandbox.state`), pickled; the rest are listed
#: as not saved. The snapshot travels in one message, whose limit is derived from this. Kept
#: here, not in state.py: the host reads the limits without the child's namespace (and pickle).
MAX_SNAPSHOT_BYTES = 64 * 1024 * 1024
#: the text of a block's error the child sends at most (the host shows far less of it)
MAX_ERROR_CHARS = 1 << 20
#: what a ``done`` holds besides the snapshot's pickles: helper sources, the block's forms, the
#: error, names and reasons
MESSAGE_MARGIN = 16 << 20
#: the longest message the child may send. The largest legitimate one is a ``done`` carrying a
#: full snapshot: its pickles (at most ``MAX_SNAPSHOT_BYTES``) in base64, plus the margin. The
#: child keeps its own messages under it (a ``call`` whose arguments are longer raises in the
#: block; a snapshot that does not fit is not sent); the host stops a child that sends a longer
#: one, so it never buffers more than this of one message.
MAX_MESSAGE_BYTES = (MAX_SNAPSHOT_BYTES + 2) // 3 * 4 + MESSAGE_MARGIN
#: tool calls one child may have in flight at once: a gather over a few thousand files fits,
#: a gather over a million calls would make the host hold a task and the arguments of each.
#: The child refuses more with an error in the block (the block can await some first); the
#: host has never more in flight than the child, so it stops a child that sends more.
MAX_CALLS_IN_FLIGHT = 4096


def end_marker(nonce: str, block_id: int) -> bytes:
    """The bytes the child writes to its output pipe after the output of block ``block_id``."""
    return f"\x1e\x1fvis-block-end:{nonce}:{block_id}\x1f\x1e".encode("ascii")


class FormStatus(StrEnum):
    """How one top-level statement of a block went (a block's ``forms``, made by the child:
    here, not in :mod:`vis_core.model.block`, whose classes the child would define at every
    start for this one)."""

    OK = "ok"
    ERROR = "error"  # it raised
    NOT_RUN = "not-run"  # an earlier statement raised
    UNKNOWN = "unknown"  # the block raised, but its traceback does not reach its own lines
