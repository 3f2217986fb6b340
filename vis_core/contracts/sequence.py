"""``@vis.sequence(field=...)``: opt a result dataclass into list-like use in the sandbox."""

from __future__ import annotations

import collections.abc as cabc
import dataclasses
import typing
from collections.abc import Callable
from typing import Any, TypeVar

from vis_core.contracts.hints import UNRESOLVED, field_hints

SEQUENCE_ATTR = "__vis_sequence_field__"
"""Class attribute (set in the class's own ``__dict__``) naming the backing field."""

T = TypeVar("T", bound=type)

# Declared field types that can never hold a built-in list or tuple.
_REJECTED_ORIGINS: tuple[Any, ...] = (
    str,
    bytes,
    bytearray,
    dict,
    set,
    frozenset,
    cabc.Mapping,
    cabc.MutableMapping,
    cabc.Set,
    cabc.MutableSet,
    cabc.Iterator,
    cabc.Generator,
    cabc.AsyncIterator,
    cabc.AsyncGenerator,
)


def sequence(*, field: str) -> Callable[[T], T]:
    """Let sandbox callers iterate, index, slice and ``len()`` a record over ``field``.

    Apply it outside ``@dataclass``. Only metadata is added to the class; the named public
    field must hold a built-in ``list`` or ``tuple`` when a tool returns the value.
    """
    if not isinstance(field, str):
        raise TypeError(
            f"@vis.sequence(field=...) needs the name of a dataclass field as a string, "
            f"got {type(field).__name__}"
        )
    if not field.isidentifier():
        raise ValueError(
            f"@vis.sequence(field={field!r}): the field must be a public dataclass field name"
        )
    if field.startswith("_"):
        raise ValueError(
            f"@vis.sequence(field={field!r}): private fields do not cross into the sandbox; "
            "back the sequence with a public field"
        )

    def decorate(decorated: T) -> T:
        cls = decorated  # narrowed below; the decorator returns what it was given
        if not isinstance(cls, type):
            raise TypeError(
                f"@vis.sequence(field={field!r}) decorates a dataclass, got {type(cls).__name__}"
            )
        if not dataclasses.is_dataclass(cls):
            raise TypeError(
                f"@vis.sequence(field={field!r}) on {cls.__qualname__}: the class is not a "
                "dataclass; apply @vis.sequence outside (above) @dataclass"
            )
        names = [f.name for f in dataclasses.fields(cls)]
        if field not in names:
            public = ", ".join(n for n in names if not n.startswith("_")) or "none"
            raise ValueError(
                f"@vis.sequence(field={field!r}) on {cls.__qualname__}: no such dataclass field; "
                f"public fields: {public}"
            )
        _check_declared_type(cls, field)
        existing = cls.__dict__.get(SEQUENCE_ATTR)
        if existing is not None and existing != field:
            raise ValueError(
                f"{cls.__qualname__} is already a sequence over {existing!r}; "
                f"declare @vis.sequence once per class"
            )
        setattr(cls, SEQUENCE_ATTR, field)
        return decorated

    return decorate


def sequence_field_of(cls: type) -> str | None:
    """The backing field a class opted into with ``@vis.sequence``, else ``None``.

    Only the class's own declaration counts: subclasses must opt in themselves.
    """
    value = vars(cls).get(SEQUENCE_ATTR) if isinstance(cls, type) else None
    return value if isinstance(value, str) else None


def check_backing_value(cls: type, field: str, value: object) -> list[Any] | tuple[Any, ...]:
    """Return ``value`` if it is exactly a built-in list or tuple, else raise ``TypeError``."""
    if type(value) is list or type(value) is tuple:
        return value  # type: ignore[return-value]
    raise TypeError(
        f"{cls.__qualname__}.{field} backs a @vis.sequence, so it must hold a built-in list or "
        f"tuple when the tool returns; got {type(value).__name__}. Convert it with "
        f"list(...) or tuple(...) before returning (lazy iterators are not consumed)"
    )


def _check_declared_type(cls: type, field: str) -> None:
    """Reject a field whose resolvable annotation can never be a list or tuple."""
    annotation = field_hints(cls).get(field, UNRESOLVED)
    if annotation is UNRESOLVED:
        return  # unresolved or unannotated: checked at return time
    while typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    origin = typing.get_origin(annotation) or annotation
    if isinstance(origin, type) and any(
        origin is rejected or _subclass(origin, rejected) for rejected in _REJECTED_ORIGINS
    ):
        raise TypeError(
            f"@vis.sequence(field={field!r}) on {cls.__qualname__}: the field is declared as "
            f"{getattr(annotation, '__name__', annotation)!s}, but a sequence field must hold a "
            "built-in list or tuple (strings, mappings, sets and generators are rejected)"
        )


def _subclass(origin: type, rejected: type) -> bool:
    try:
        return issubclass(origin, rejected)
    except TypeError:
        return False
