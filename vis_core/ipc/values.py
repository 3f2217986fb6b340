"""The value codec, untrusted policy: what crosses the sandbox boundary, with nothing but data.

Data (``None``, bools, numbers, strings, bytes, lists) passes as itself; a dict whose keys are all
strings and which has no ``"$"`` key passes as a map. Everything else is a tagged map
``{"$": tag, "v": payload}``:

``tuple``/``set``/``frozenset`` (payload: list), ``float``
(``"nan"``/``"inf"``/``"-inf"``), ``int`` (one outside 64 bits, as hex text), ``dict`` (list of
``[key, value]`` pairs), ``handle``
(a host object that stays on the host, see :class:`HostHandle`), and every tag registered
with :func:`register_codec`.

Both sides (host and sandbox child) use this module, so a codec registered at import time
of a module that both sides import works in both directions. Nothing else is made from what
arrives: no class is looked up by name, no pickle is read; a message's size is bounded by the
framing, its depth by the decoder (:mod:`vis_core.ipc.messages`). Workers, which are trusted,
use the trusted policy (:mod:`vis_core.ipc.trusted`), which falls back to this one for what an
extension's own classes make.
"""

from __future__ import annotations

import contextvars
import dataclasses
import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import msgspec

from vis_core.model.handles import HostHandle

TAG = "$"
BUILTIN_TAGS = frozenset({"tuple", "set", "frozenset", "bytes", "float", "int", "dict", "handle"})
#: In MessagePack :func:`dumps` wrote, these bytes are wherever a value is tagged (a ``"$"``
#: key): a message without them holds no value :func:`decode` changes.
TAGGED = b"\xa1$"
# Integers in this range cross as themselves (MessagePack holds them exactly).
_INT_MIN, _INT_MAX = -(1 << 63), (1 << 63) - 1
# Subclasses (IntEnum, StrEnum, NamedTuple, defaultdict...) cross as the first of these they are.
_PLAIN_BASES: tuple[type, ...] = (bool, int, str, float, list, dict, tuple)
_pack = msgspec.msgpack.Encoder().encode
_unpack = msgspec.msgpack.Decoder().decode


def pack(data: Any) -> bytes:
    """Data :func:`encode` made, in MessagePack (what :func:`loads` reads)."""
    return _pack(data)


@dataclass(frozen=True)
class Codec:
    """One registered extension type: ``matches(obj)`` picks it, ``encode``/``decode`` convert."""

    tag: str
    matches: Callable[[Any], bool]
    encode: Callable[[Any], Any]
    decode: Callable[[Any], Any]


_CODECS: dict[str, Codec] = {}
_SCALARS = (str, bool, type(None), bytes)

HandleOut = Callable[[Any], dict[str, Any]]
HandleIn = Callable[[dict[str, Any]], Any]

_lend: contextvars.ContextVar[HandleOut | None] = contextvars.ContextVar(
    "vis_wire_lend", default=None
)


@contextmanager
def lending(lend: HandleOut) -> Iterator[None]:
    """Within the body, :func:`encode` turns a value it cannot encode (a function, an
    iterator, an object of another process) into a ``handle`` of ``lend(value)`` instead of
    raising: an extension worker lends such values to the host by reference."""
    token = _lend.set(lend)
    try:
        yield
    finally:
        _lend.reset(token)


def register_codec(
    tag: str,
    kind: type | tuple[type, ...] | Callable[[Any], bool],
    encode: Callable[[Any], Any],
    decode: Callable[[Any], Any],
) -> None:
    """Teach the wire a new type.

    ``kind`` is a class (or tuple of classes) tested with ``isinstance``, or a predicate.
    ``encode(obj)`` returns any wire-encodable value (it is encoded recursively);
    ``decode(value)`` receives that value already decoded and returns the object.
    When several codecs match a value, the one registered last wins (so a specific codec
    beats a general one such as the records codec). Registering a tag again replaces it;
    builtin tags cannot be replaced.
    """
    if not tag or tag in BUILTIN_TAGS:
        reserved = ", ".join(sorted(BUILTIN_TAGS))
        raise ValueError(f"codec tag {tag!r} is empty or reserved ({reserved})")
    matches: Callable[[Any], bool]
    if isinstance(kind, type | tuple):
        classes = kind

        def is_instance(obj: Any) -> bool:
            return isinstance(obj, classes)

        matches = is_instance
    else:
        matches = kind
    _CODECS.pop(tag, None)
    _CODECS[tag] = Codec(tag, matches, encode, decode)


def codec_for(value: Any) -> Codec | None:
    """The registered codec that encodes ``value`` (the one registered last), if any."""
    for codec in reversed(_CODECS.values()):
        if codec.matches(value):
            return codec
    return None


def unregister_codec(tag: str) -> None:
    """Forget a codec registered with :func:`register_codec` (no error when absent)."""
    _CODECS.pop(tag, None)


def encode(value: Any, *, handle_out: HandleOut | None = None) -> Any:
    """``value`` as JSON-ready data; ``handle_out`` turns a :class:`HostHandle` into its ref."""
    kind = type(value)
    if kind in _SCALARS:
        return value
    if kind is int:
        return value if _INT_MIN <= value <= _INT_MAX else {TAG: "int", "v": hex(value)}
    if kind is float:
        if math.isfinite(value):
            return value
        return {TAG: "float", "v": "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")}
    if kind is list:
        return [encode(item, handle_out=handle_out) for item in value]
    if kind is dict:
        if TAG not in value and all(type(k) is str for k in value):
            return {k: encode(v, handle_out=handle_out) for k, v in value.items()}
        pairs = [
            [encode(k, handle_out=handle_out), encode(v, handle_out=handle_out)]
            for k, v in value.items()
        ]
        return {TAG: "dict", "v": pairs}
    if kind is tuple:
        return {TAG: "tuple", "v": [encode(item, handle_out=handle_out) for item in value]}
    for codec in reversed(_CODECS.values()):
        if codec.matches(value):
            return {TAG: codec.tag, "v": encode(codec.encode(value), handle_out=handle_out)}
    return _encode_other(value, handle_out)


class Encoded:
    """A value already encoded by :func:`dumps` where it was made (a tool's result, in its
    extension worker, with its records): the host passes it on to the sandbox as it is, and
    decodes it (:meth:`decode`) only for a reader of its own."""

    __slots__ = ("data",)

    def __init__(self, data: bytes) -> None:
        self.data = data

    def __reduce__(self) -> tuple[Any, ...]:
        return (Encoded, (self.data,))

    def decode(self, *, handle_in: HandleIn | None = None) -> Any:
        """The value (records as ``Record`` objects, once their codec is registered)."""
        return loads(self.data, handle_in=handle_in)


def dumps(value: Any, *, handle_out: HandleOut | None = None) -> msgspec.Raw:
    """``value`` encoded (:func:`encode`) into MessagePack, ready to go into a message as it is.

    Plain data (scalars, lists, dicts of string keys: most values) is packed in one pass in C
    and read back to check that it needed no tag (a tuple, a set, a ``"$"`` key, an Enum...),
    instead of a walk in Python; anything else is walked by :func:`encode`. An
    :class:`Encoded` value is already encoded: it goes as it is."""
    kind = type(value)
    if kind is Encoded:
        return msgspec.Raw(value.data)
    if kind is list or kind is dict:
        try:
            data = _pack(value)
            if TAGGED not in data and _unpack(data) == value:
                return msgspec.Raw(data)
        except (TypeError, ValueError, OverflowError, RecursionError, msgspec.DecodeError):
            pass  # encode() says what it cannot take
    return msgspec.Raw(_pack(encode(value, handle_out=handle_out)))


def loads(data: bytes | msgspec.Raw, *, handle_in: HandleIn | None = None) -> Any:
    """The value :func:`dumps` wrote (``TypeError``/``ValueError`` when it cannot be read)."""
    body = bytes(data)
    try:
        value = _unpack(body)
    except msgspec.DecodeError as exc:
        raise ValueError(f"a value that is not MessagePack: {exc}") from None
    return decode(value, handle_in=handle_in) if TAGGED in body else value


def _encode_other(value: Any, handle_out: HandleOut | None) -> Any:
    if isinstance(value, HostHandle):
        if handle_out is None:
            raise TypeError(f"{type(value).__name__} is a host handle and cannot cross here")
        return {TAG: "handle", "v": handle_out(value)}
    ref = getattr(value, "__vis_handle_ref__", None)
    if isinstance(ref, dict):
        return {TAG: "handle", "v": ref}
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value)
    if isinstance(value, frozenset):
        return {TAG: "frozenset", "v": [encode(item, handle_out=handle_out) for item in value]}
    if isinstance(value, set):
        return {TAG: "set", "v": [encode(item, handle_out=handle_out) for item in value]}
    if isinstance(value, bool | int | str | float | list | dict | tuple):
        # subclasses (IntEnum, StrEnum, NamedTuple, defaultdict...) cross as their base type
        for base in _PLAIN_BASES:
            if isinstance(value, base):
                return encode(base(value), handle_out=handle_out)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        # fallback until a codec for records is registered: the public fields as a dict
        fields = {
            f.name: getattr(value, f.name)
            for f in dataclasses.fields(value)
            if not f.name.startswith("_")
        }
        return encode(fields, handle_out=handle_out)
    lend = _lend.get()
    if lend is not None:
        return {TAG: "handle", "v": lend(value)}
    kind = getattr(value, "__vis_type_name__", None)  # an object lent by an extension worker
    if not isinstance(kind, str):
        kind = f"{type(value).__module__}.{type(value).__qualname__}"
    raise TypeError(
        f"a {kind} value cannot cross the sandbox boundary; pass JSON data, tuples, sets, "
        "bytes or a registered record type"
    )


def decode(data: Any, *, handle_in: HandleIn | None = None) -> Any:
    """The value that :func:`encode` produced ``data`` from; ``handle_in`` rebuilds handles."""
    kind = type(data)
    if kind is list:
        return [decode(item, handle_in=handle_in) for item in data]
    if kind is not dict:
        return data
    tag = data.get(TAG)
    if tag is None:
        return {k: decode(v, handle_in=handle_in) for k, v in data.items()}
    payload = data.get("v")
    if tag == "tuple":
        return tuple(decode(item, handle_in=handle_in) for item in payload)
    if tag == "set":
        return {decode(item, handle_in=handle_in) for item in payload}
    if tag == "frozenset":
        return frozenset(decode(item, handle_in=handle_in) for item in payload)
    if tag == "float":
        return float(payload)
    if tag == "int":
        return int(payload, 16)
    if tag == "dict":
        return {decode(k, handle_in=handle_in): decode(v, handle_in=handle_in) for k, v in payload}
    if tag == "handle":
        if handle_in is None:
            raise TypeError("a host handle arrived where handles are not accepted")
        return handle_in(payload)
    codec = _CODECS.get(tag)
    if codec is None:
        raise TypeError(f"unknown wire tag {tag!r}: register a codec for it with register_codec()")
    return codec.decode(decode(payload, handle_in=handle_in))


def safe_text(text: str) -> str:
    """``text`` with each lone surrogate (a file name decoded with ``surrogateescape``...)
    written out as ``\\udcff``: text any message can carry."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")
