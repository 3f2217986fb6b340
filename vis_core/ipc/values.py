"""The value codec, untrusted policy: what crosses the sandbox boundary, with nothing but data.

Data (``None``, bools, numbers, strings, bytes, lists) passes as itself; a dict whose keys are all
strings and which has no ``"$"`` key passes as a map. Everything else is a tagged map
``{"$": tag, "v": payload}``:

``tuple``/``set``/``frozenset`` (payload: list), ``float``
(``"nan"``/``"inf"``/``"-inf"``), ``int`` (one outside 64 bits, as hex text), ``dict`` (list of
``[key, value]`` pairs), ``handle``
(a host object that stays on the host, see :class:`HostHandle`), ``record`` (a dataclass or a
plain object: a frozen :class:`~vis_core.records.record.Record` on the other side), and every
tag registered with :func:`register_codec`. An Enum member crosses as its value (a str-Enum's
or an IntEnum's as that plain type); :mod:`vis_core.records.rebuild` makes it the member again
for a tool whose parameter names the Enum.

A record payload: ``{"type": "Status", "owner": "ext" | None, "qualname": "Status", "fields":
{...public fields, then property fields...}, "derived": ["next_phase"], "text": "DEV04: next
phase 1" | None, "sequence": "results" | None}``. Properties and ``str`` are computed where the
value was made; plain objects cross with their public instance attributes only. A sandbox
``Record`` passed to a tool arrives as a ``Record`` too, which
:func:`vis_core.records.rebuild.coerce_arguments` rebuilds into the tool's dataclass.

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
import enum
import functools
import inspect
import math
import types
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import msgspec

from vis_core.contracts.sequence import check_backing_value, sequence_field_of
from vis_core.ipc.encoded import Encoded
from vis_core.ipc.uncrossable import Uncrossable
from vis_core.model.handles import HostHandle
from vis_core.records import registry
from vis_core.records.record import Record, RecordInfo, info_state, restore_record

TAG = "$"
BUILTIN_TAGS = frozenset({"tuple", "set", "frozenset", "bytes", "float", "int", "dict", "handle"})
#: In MessagePack :func:`dumps` wrote, these bytes are wherever a value is tagged (a ``"$"``
#: key): a message without them holds no value :func:`decode` changes.
TAGGED = b"\xa1$"
# Integers in this range cross as themselves (MessagePack holds them exactly).
_INT_MIN, _INT_MAX = -(1 << 63), (1 << 63) - 1
# Subclasses (IntEnum, a str-Enum, NamedTuple, defaultdict...) cross as the first of these
# they are (bool cannot be subclassed; int before float: an IntEnum is an int and an Enum).
_PLAIN_BASES: tuple[type, ...] = (str, int, float, bytes, tuple, list, dict, set, frozenset)
# the tags whose payload is a list of the items of a collection of this type
_COLLECTIONS: dict[str, type] = {"tuple": tuple, "set": set, "frozenset": frozenset}
#: data :func:`encode` made, in MessagePack (what :func:`loads` reads)
pack = msgspec.msgpack.Encoder().encode
_unpack = msgspec.msgpack.Decoder().decode


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


def describe_handle(handle: HostHandle) -> dict[str, Any]:
    """What a handle's ref tells the other side of it: its class name, methods and ``repr``."""
    kind = type(handle)
    try:
        text = repr(handle)[:200]
    except Exception:  # a broken __repr__ must not break the tool result
        text = ""
    return {"type": kind.__name__, "methods": [str(m) for m in kind.__vis_methods__], "repr": text}


def encode_result(
    value: Any, *, owner: str | None = None, handle_out: HandleOut | None = None
) -> Any:
    """A tool's return value as wire data (:func:`encode`), its dataclasses as records whose
    properties and ``__str__`` are computed here, once. ``owner`` (the tool's extension)
    registers the classes met for :mod:`~vis_core.records.registry` lookups after a reload."""
    token = _owner.set(owner)
    try:
        return encode(value, handle_out=handle_out)
    finally:
        _owner.reset(token)


def codec_for(value: Any) -> Codec | None:
    """The registered codec that encodes ``value`` (the one registered last), if any."""
    for codec in reversed(_CODECS.values()):
        if codec.matches(value):
            return codec
    return None


def unregister_codec(tag: str) -> None:
    """Forget a codec registered with :func:`register_codec` (no error when absent)."""
    _CODECS.pop(tag, None)


def encode(value: Any, *, handle_out: HandleOut | None = None, root: str = "") -> Any:
    """``value`` as JSON-ready data; ``handle_out`` turns a :class:`HostHandle` into its ref.
    What cannot cross is a ``TypeError`` naming its path from ``root`` (``args[1][2]``)."""
    try:
        return _encode(value, handle_out)
    except Uncrossable as exc:
        raise TypeError(exc.text(root)) from None


def _encode(value: Any, handle_out: HandleOut | None) -> Any:
    kind = type(value)
    if kind in _SCALARS:
        return value
    if kind is int:
        return value if _INT_MIN <= value <= _INT_MAX else {TAG: "int", "v": hex(value)}
    if kind is float:
        if math.isfinite(value):
            return value
        return {TAG: "float", "v": "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")}
    try:  # a container that fails finds which of its items did (see uncrossable)
        if kind is list:
            return [_encode(item, handle_out) for item in value]
        if kind is dict:
            if TAG not in value and all(type(k) is str for k in value):
                return {k: _encode(v, handle_out) for k, v in value.items()}
            pairs = [[_encode(k, handle_out), _encode(v, handle_out)] for k, v in value.items()]
            return {TAG: "dict", "v": pairs}
        if kind is tuple:
            return {TAG: "tuple", "v": [_encode(item, handle_out) for item in value]}
    except Uncrossable as exc:
        raise exc.within(value) from None
    for codec in reversed(_CODECS.values()):
        if codec.matches(value):
            try:
                return {TAG: codec.tag, "v": _encode(codec.encode(value), handle_out)}
            except Uncrossable as exc:
                raise exc.as_field(value) if codec.tag == RECORD else exc.seen_as(value) from None
    return _encode_other(value, handle_out)


def dumps(value: Any, *, handle_out: HandleOut | None = None, root: str = "") -> msgspec.Raw:
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
            data = pack(value)
            if TAGGED not in data and _unpack(data) == value:
                return msgspec.Raw(data)
        except (TypeError, ValueError, OverflowError, RecursionError, msgspec.DecodeError):
            pass  # encode() says what it cannot take
    return msgspec.Raw(pack(encode(value, handle_out=handle_out, root=root)))


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
    try:
        if isinstance(value, set | frozenset):
            tag = "frozenset" if isinstance(value, frozenset) else "set"
            return {TAG: tag, "v": [_encode(item, handle_out) for item in value]}
    except Uncrossable as exc:
        raise exc.within(value) from None
    base = plain_base(value)
    if base is not None:  # IntEnum, a str-Enum, NamedTuple, defaultdict...: as their base type
        plain = plain_value(value, base)
        try:
            return _encode(plain, handle_out)
        except Uncrossable as exc:
            raise exc.seen_as(value) from None
    if isinstance(value, enum.Enum):  # any other Enum member: as its value
        try:
            return _encode(value.value, handle_out)
        except Uncrossable as exc:
            raise exc.seen_as(value, ".value") from None
    lend = _lend.get()
    if lend is not None:
        return {TAG: "handle", "v": lend(value)}
    failed = Uncrossable(described(value))
    failed.part = value
    raise failed


def described(value: Any) -> str:
    """``value``'s class for a message, with its article: ``a MyThing``, ``an int``; None as
    itself."""
    if value is None:
        return "None"
    kind = type_name(value)
    return f"{'an' if kind[:1] in 'AEIOUaeiou' else 'a'} {kind}"


def type_name(value: Any) -> str:
    """The name of ``value``'s class as its code writes it (``MyThing``, ``socket``): an
    object another process lent is named by its class there, not by the proxy standing for
    it here."""
    kind = getattr(value, "__vis_type_name__", None)
    if not isinstance(kind, str):
        kind = type(value).__qualname__
    return kind.rpartition(".")[2]


def plain_base(value: Any) -> type | None:
    """The plain type a subclass's value crosses as (see ``_PLAIN_BASES``), if any."""
    for base in _PLAIN_BASES:
        if isinstance(value, base):
            return base
    return None


def plain_value(value: Any, base: type) -> Any:
    """``value`` as a plain ``base``: what it holds, not what its class's own ``__str__`` or
    ``__int__`` says (a str-Enum member crosses as its value, as msgspec packs it)."""
    if base is str:
        return str.__str__(value)
    if base is int:
        return int.__index__(value)
    if base is float:
        return float.__float__(value)
    if base is bytes:
        return bytes(memoryview(value))
    return base(value)  # a container: its items as they are


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
    collection = _COLLECTIONS.get(tag)
    if collection is not None:
        return collection(decode(item, handle_in=handle_in) for item in payload)
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


# -- records ---------------------------------------------------------------------------------

RECORD = "record"
# the extension the classes met while encoding a tool's result are registered for
_owner: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "vis_record_owner", default=None
)


_NOT_OBJECTS = (
    bool,
    int,
    float,
    complex,
    str,
    bytes,
    bytearray,
    memoryview,
    list,
    tuple,
    dict,
    set,
    frozenset,
    type,
    types.ModuleType,
    BaseException,
    enum.Enum,
)


def is_record_value(value: Any) -> bool:
    """True for values the ``record`` codec encodes: dataclasses, plain objects, records."""
    if isinstance(value, Record):
        return True
    if dataclasses.is_dataclass(value):
        return not isinstance(value, type)
    return _is_plain_object(value)


def _is_plain_object(value: Any) -> bool:
    """An instance of an ordinary class: its public instance attributes cross as fields."""
    if isinstance(value, _NOT_OBJECTS) or callable(value) or not hasattr(value, "__dict__"):
        return False
    kind = type(value)
    if kind.__module__ == "builtins" or kind.__module__.startswith("vis_core.sandbox"):
        return False  # tool proxies and namespaces, host handles
    if hasattr(kind, "__vis_methods__") or "__vis_handle_ref__" in vars(value):
        return False
    return True


def encode_record(value: Any) -> dict[str, Any]:
    """The record payload of a dataclass instance (or of a sandbox ``Record``)."""
    if isinstance(value, Record):
        return _payload_of_record(value)
    cls = type(value)
    if not dataclasses.is_dataclass(value):
        public = {k: _listify(v) for k, v in vars(value).items() if not k.startswith("_")}
        return {**info_state(RecordInfo(cls.__name__, qualname=cls.__qualname__)), "fields": public}
    fields: dict[str, Any] = {}
    for field in dataclasses.fields(value):
        if field.name.startswith("_"):
            continue
        try:
            fields[field.name] = _listify(getattr(value, field.name))
        except AttributeError:
            continue  # an init=False field the constructor never set
    sequence = sequence_field_of(cls)
    if sequence is not None:
        check_backing_value(cls, sequence, getattr(value, sequence))
    derived: list[str] = []
    for name in _property_names(cls):
        if name in fields:
            continue
        try:
            fields[name] = _listify(getattr(value, name))
        except Exception:  # the spec: a property that raises is left out
            continue
        derived.append(name)
    info = RecordInfo(
        cls.__name__, _owner_for(cls), cls.__qualname__, tuple(derived), _own_text(value), sequence
    )
    return {**info_state(info), "fields": fields}


def decode_record(payload: dict[str, Any]) -> Record:
    """Build the frozen ``Record`` for a payload whose values are already decoded."""
    return restore_record(dict(payload.get("fields") or {}), payload)


def _owner_for(cls: type) -> str | None:
    owner = registry.owner_of(cls)
    if owner is not None:
        return owner
    current = _owner.get()
    if current is not None:
        registry.register(current, cls)
    return current


def _payload_of_record(record: Record) -> dict[str, Any]:
    return {**info_state(record._vis_info), "fields": dict(record._vis_fields)}  # same package


def _own_text(value: Any) -> str | None:
    if type(value).__str__ is object.__str__:
        return None
    try:
        text = str(value)
    except Exception:  # a failing __str__ falls back to repr in the sandbox
        return None
    return text if isinstance(text, str) else None


def _property_names(cls: type) -> list[str]:
    """Public ``property``/``cached_property`` names, base classes first."""
    order: list[str] = []
    for klass in reversed(cls.__mro__):
        order.extend(n for n in vars(klass) if not n.startswith("_") and n not in order)
    return [
        name
        for name in order
        if isinstance(inspect.getattr_static(cls, name, None), property | functools.cached_property)
    ]


def _listify(value: Any) -> Any:
    """Tuples become lists inside records: sandbox sequences are list-like."""
    kind = type(value)
    if kind is tuple or kind is list:
        return [_listify(item) for item in value]
    if kind is dict:
        return {key: _listify(item) for key, item in value.items()}
    return value


register_codec(RECORD, is_record_value, encode_record, decode_record)
