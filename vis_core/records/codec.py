"""The ``record`` wire codec: dataclass → record payload on the host, payload → ``Record``.

Plain objects (instances of ordinary classes with a ``__dict__``) cross the same way with
their public instance attributes only: properties and ``str`` text are sent for dataclasses.

Registered with :func:`vis_core.ipc.values.register_codec` when ``vis_core.records`` is
imported (both the host and the sandbox child import it). Payload shape::

    {"type": "Status", "owner": "ext" | None, "qualname": "Status",
     "fields": {...public fields, then property fields...},
     "derived": ["next_phase"], "text": "DEV04: next phase 1" | None,
     "sequence": "results" | None}

The same tag carries records back: a sandbox ``Record`` (or a dataclass defined in sandbox
code) passed to a tool arrives on the host as a ``Record``, which
:func:`vis_core.records.rebuild.coerce_arguments` rebuilds into the tool's dataclass.
"""

from __future__ import annotations

import contextvars
import dataclasses
import enum
import functools
import inspect
import types
from typing import Any

from vis_core.contracts.sequence import check_backing_value, sequence_field_of
from vis_core.records import registry
from vis_core.records.record import Record, RecordInfo, make_record

TAG = "record"

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
        return {
            "type": cls.__name__,
            "owner": None,
            "qualname": cls.__qualname__,
            "fields": public,
            "derived": [],
            "text": None,
            "sequence": None,
        }
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
    return {
        "type": cls.__name__,
        "owner": _owner_for(cls),
        "qualname": cls.__qualname__,
        "fields": fields,
        "derived": derived,
        "text": _own_text(value),
        "sequence": sequence,
    }


def decode_record(payload: dict[str, Any]) -> Record:
    """Build the frozen ``Record`` for a payload whose values are already decoded."""
    fields = dict(payload.get("fields") or {})
    info = RecordInfo(
        type=str(payload.get("type") or "Record"),
        owner=payload.get("owner"),
        qualname=payload.get("qualname"),
        derived=tuple(payload.get("derived") or ()),
        text=payload.get("text"),
        sequence=payload.get("sequence"),
    )
    return make_record(fields, info)


class owner_scope:  # used as a context manager, reads like a function
    """Within ``with owner_scope("ext"):`` encoded classes are registered for ``ext``."""

    def __init__(self, owner: str | None) -> None:
        self._owner = owner
        self._token: contextvars.Token[str | None] | None = None

    def __enter__(self) -> None:
        self._token = _owner.set(self._owner)

    def __exit__(self, *exc: object) -> None:
        if self._token is not None:
            _owner.reset(self._token)


def _owner_for(cls: type) -> str | None:
    owner = registry.owner_of(cls)
    if owner is not None:
        return owner
    current = _owner.get()
    if current is not None:
        registry.register(current, cls)
    return current


def _payload_of_record(record: Record) -> dict[str, Any]:
    info = record._vis_info  # same package
    return {
        "type": info.type,
        "owner": info.owner,
        "qualname": info.qualname,
        "fields": dict(record._vis_fields),
        "derived": list(info.derived),
        "text": info.text,
        "sequence": info.sequence,
    }


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
