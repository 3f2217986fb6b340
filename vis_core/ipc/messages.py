"""Every message between Vis processes as a typed msgspec ``Struct``, and its MessagePack codec.

A message is a MessagePack array: its tag, then its fields in order (``array_like``). Values
inside (``args``, a result's ``value``) are already encoded by :mod:`vis_core.ipc.values`
(sandbox) or pickled (:mod:`vis_core.ipc.trusted`, workers).

Sandbox child ↔ host (the child runs untrusted code, which can write to its pipe too: the host
reads with :func:`from_child`, which admits only a child's messages with fields of the right
types, and stops a child that sends anything else):

- host → child: :class:`Init` (first; the child restores ``snapshot``), :class:`Run` (one
  block; ``tools`` only when the list changed), :class:`Result` (the answer to a call).
- child → host: :class:`Ready` (after ``Init``), :class:`ToolCall` and :class:`HandleCall`
  (many may be in flight, ids differ), :class:`CancelCall` (the awaiting block was
  cancelled), :class:`Done` (the block ended; ``snapshot`` is None when unchanged).

Host ↔ extension worker (both trusted; either side sends every kind): :class:`Call`,
:class:`Reply`, :class:`Cancel`, :class:`Release`; the worker also :class:`Direct`.

Sandbox child ↔ extension worker, on a direct channel the host paired: the child sends a
:class:`ToolCall` or :class:`CancelCall` (read with :func:`direct_from_child`, nothing else
admitted), the worker a :class:`Result` or :class:`Refused`.
"""

from __future__ import annotations

import re
from typing import Any

import msgspec

from vis_core.ipc.framing import ProtocolError, frame
from vis_core.ipc.kinds import TargetKind


class _Message(msgspec.Struct, array_like=True, tag_field="t", omit_defaults=False):
    """Base of every message: encoded as ``[tag, field, ...]``."""


# -- sandbox host → child ------------------------------------------------------------------


class Init(_Message, tag="init"):
    nonce: str
    tools: list[dict[str, Any]]
    globals: dict[str, Any]
    snapshot: dict[str, Any] | None
    max_calls: int
    message_limit: int
    confined: bool
    control: int = -1  # the child's control socket (:mod:`~vis_core.ipc.pairing`), if any


class Run(_Message, tag="run"):
    id: int
    code: str
    globals: dict[str, Any] | None = None
    tools: list[dict[str, Any]] | None = None


class Tools(_Message, tag="tools"):
    """The session's tools changed while a block ran (an MCP server's list): the child's names
    follow before the result that comes after this."""

    tools: list[dict[str, Any]]


class Result(_Message, tag="result"):
    """``ok`` with ``value`` (encoded: :func:`vis_core.ipc.values.encode`, or ``Raw`` bytes
    encoded once where the value was made), else ``error``: ``{type, message}``."""

    id: int
    ok: bool
    value: Any = None
    error: dict[str, str] | None = None


# -- sandbox child → host ------------------------------------------------------------------


class Restore(msgspec.Struct, forbid_unknown_fields=True):
    """What a new child restored from the snapshot, and what it could not (with reasons)."""

    helpers: list[str] = []
    variables: list[str] = []
    modules: list[str] = []
    failed: dict[str, str] = {}
    lost: dict[str, str] = {}


class Ready(_Message, tag="ready"):
    pid: int
    restore: Restore


class ToolCall(_Message, tag="call"):
    id: int
    name: str
    args: list[Any]
    kwargs: dict[str, Any]


class HandleCall(_Message, tag="hcall"):
    id: int
    handle: str
    method: str
    args: list[Any]
    kwargs: dict[str, Any]


class CancelCall(_Message, tag="cancel"):
    id: int


class Done(_Message, tag="done"):
    id: int
    error: str | None
    snapshot: dict[str, Any] | None
    forms: list[dict[str, Any]]


ToChild = Init | Run | Result | Tools
FromChild = Ready | ToolCall | HandleCall | CancelCall | Done

# -- sandbox child <-> extension worker, directly (a channel the host paired) ---------------


class Refused(_Message, tag="refused"):
    """Worker -> child: call ``id`` was not taken on the direct channel (a tool not granted,
    an argument only the host reads): the child makes it through the host."""

    id: int


class DirectTools(msgspec.Struct, array_like=True):
    """Host -> child, on its control socket (with the fd of a new direct channel, or alone
    when only the tools changed): the tools worker ``key`` answers on its direct channel."""

    key: int
    tools: list[str]


class DirectGrants(msgspec.Struct, array_like=True):
    """Host -> worker, on its control socket (with the fd of a new direct channel, or alone):
    the tools it may answer there, by each name the child calls them: ``[owner, the tool's
    own name, drawn]``, ``drawn`` when its render callback draws its success (as a
    ``DRAWN_TOOL`` call); and the child's limits."""

    grants: dict[str, tuple[str, str, bool]]
    message_limit: int  # as the host holds the child to: the longest message, calls in flight
    max_calls: int
    line: int = 0  # the pairing a channel's fd belongs to: its calls' reports name it


DirectToChild = Result | Refused
DirectFromChild = ToolCall | CancelCall

_encoder = msgspec.msgpack.Encoder()
encode = _encoder.encode
#: a message from the host, as the child reads it (the host is trusted)
to_child = msgspec.msgpack.Decoder(ToChild).decode
_from_child = msgspec.msgpack.Decoder(FromChild)
_any = msgspec.msgpack.Decoder()
_FROM_CHILD_KINDS = {cls.__struct_config__.tag: cls for cls in FromChild.__args__}
#: a message from the worker on the direct channel, as the child reads it
direct_to_child = msgspec.msgpack.Decoder(DirectToChild).decode
_direct_from_child = msgspec.msgpack.Decoder(DirectFromChild)
_AT = re.compile(r"at `\$\[(\d+)\]")


def framed(message: msgspec.Struct) -> bytes:
    """``message`` encoded as one frame."""
    return frame(_encoder.encode(message))


def from_child(body: bytes) -> Ready | ToolCall | HandleCall | CancelCall | Done:
    """One message from the child, or :class:`ProtocolError` saying what was wrong with it."""
    try:
        return _from_child.decode(body)
    except msgspec.ValidationError as exc:
        raise ProtocolError(_what_is_wrong(body, str(exc))) from None
    except (msgspec.DecodeError, RecursionError):
        raise ProtocolError("a message that is not MessagePack") from None


def direct_from_child(body: bytes) -> ToolCall | CancelCall:
    """A message from the child on the direct channel, or :class:`ProtocolError`: the
    worker takes only a call and a cancel there."""
    try:
        return _direct_from_child.decode(body)
    except (msgspec.ValidationError, msgspec.DecodeError, RecursionError):
        raise ProtocolError("a message that is not a call or a cancel") from None


def _what_is_wrong(body: bytes, error: str) -> str:
    try:
        raw = _any.decode(body)
    except (msgspec.DecodeError, RecursionError):  # pragma: no cover - it decoded once
        return "a message that is not MessagePack"
    kind = raw[0] if type(raw) is list and raw else None
    cls = _FROM_CHILD_KINDS.get(kind) if type(kind) is str else None
    if cls is None:
        return "a message that is not one it may send"
    found = _AT.search(error)
    fields = cls.__struct_fields__
    if found is None or not 0 < int(found.group(1)) <= len(fields):
        return f"a {kind!r} message with missing or extra fields"
    return f"a {kind!r} message whose {fields[int(found.group(1)) - 1]!r} is missing or wrong"


# -- host ↔ extension worker ----------------------------------------------------------------


class Call(_Message, tag="call", gc=False):
    """Run ``target`` with the pickled ``(args, kwargs)`` in ``payload``.

    ``name`` is the tool (``owner``'s ``name``), the SDK service or the method of the object
    ``ref``; ``parent`` is the call of the other side this one is made from (its context)."""

    id: int
    target: TargetKind
    name: str
    payload: bytes
    owner: str | None = None
    ref: int | None = None
    parent: int | None = None


class Reply(_Message, tag="reply", gc=False):
    """The outcome of call ``id``: ``ok`` with the pickled value, else the pickled exception;
    ``encoded``: ``payload`` is the value already encoded for the sandbox
    (:func:`vis_core.ipc.values.dumps`), passed on there as it is."""

    id: int
    ok: bool
    payload: bytes
    encoded: bool = False


class Early(_Message, tag="early", gc=False):
    """The first part of call ``id``'s answer, sent before the call ends: the pickled
    ``(presentation, problem)`` of its Activity's start, drawn in the worker just before the
    tool runs (so a start render costs no round trip of its own)."""

    id: int
    payload: bytes


class Cancel(_Message, tag="cancel", gc=False):
    """Stop call ``id``; it still answers (with ``CancelledError``) when it stops."""

    id: int


class Direct(_Message, tag="direct", gc=False):
    """Worker -> host: the sandbox child's call ``rid`` came on the direct channel and runs
    as call ``id`` (negative: the worker numbers them) of tool ``name`` of ``owner``; sent
    before it runs, so its SDK calls (``parent`` ``id``) and its ``Reply`` come after.
    ``cancelled``: the child gave the call up, or its channel ended (sent after the first)."""

    id: int
    rid: int
    owner: str
    name: str
    cancelled: bool = False
    payload: bytes = b""  # the pickled (args, kwargs) of a drawn tool: the host draws a failure
    line: int = 0  # the pairing whose channel the call came on (:class:`DirectGrants`)


class Release(_Message, tag="release", gc=False):
    """The sender dropped its proxies of these objects of the receiver (one per proxy)."""

    refs: tuple[int, ...]


Frame = Call | Reply | Early | Cancel | Release | Direct
_frames = msgspec.msgpack.Decoder(Frame)


def decode_frame(body: bytes) -> Call | Reply | Early | Cancel | Release | Direct:
    """One frame of the worker channel, or :class:`ProtocolError`."""
    try:
        return _frames.decode(body)
    except (msgspec.DecodeError, RecursionError) as exc:
        raise ProtocolError(f"a frame is malformed: {exc}") from None
