"""Turn resolved annotations into ``TypeSpec`` descriptions (records, unions, generics…)."""

from __future__ import annotations

import collections.abc
import dataclasses
import enum
import functools
import inspect
import types
import typing
from collections.abc import Mapping
from typing import Any

from vis_core.contracts.resolve import (
    module_namespace,
    resolve_annotation,
    unresolved_name,
)
from vis_core.contracts.sequence import sequence_field_of
from vis_core.contracts.specs import FieldSpec, TypeKind, TypeSpec

SCALARS: dict[type, str] = {
    str: "str",
    int: "int",
    float: "float",
    bool: "bool",
    bytes: "bytes",
    complex: "complex",
}

ANY = TypeSpec(TypeKind.ANY, "Any")
NULL = TypeSpec(TypeKind.NULL, "None")

_GENERIC_ORIGINS: tuple[Any, ...] = (list, tuple, dict, set, frozenset, type)
# qualifiers around a type that say nothing of its values
_WRAPPERS: tuple[Any, ...] = (typing.ClassVar, typing.Final, typing.Required, typing.NotRequired)


def describe(annotation: Any, globalns: Mapping[str, Any]) -> TypeSpec:
    """The ``TypeSpec`` of one annotation (object or text) of a callable in ``globalns``."""
    return _Describer().describe(annotation, globalns)


class _Describer:
    def __init__(self) -> None:
        self.records: list[type] = []

    def describe(self, annotation: Any, globalns: Mapping[str, Any]) -> TypeSpec:
        value = resolve_annotation(annotation, globalns)
        return self._value(value, globalns)

    def _value(self, value: Any, globalns: Mapping[str, Any]) -> TypeSpec:
        if isinstance(value, str | typing.ForwardRef):
            return self.describe(value, globalns)
        if value is None or value is type(None):
            return NULL
        if value is typing.Any:
            return ANY
        if value is object:
            return TypeSpec(TypeKind.ANY, "object")
        marker = unresolved_name(value)
        if marker is not None:
            return TypeSpec(TypeKind.UNRESOLVED, marker)
        if isinstance(value, typing.TypeVar):
            return ANY
        origin = typing.get_origin(value)
        args = typing.get_args(value)
        if origin is typing.Annotated:
            inner = self._value(args[0], globalns)
            notes = [note for note in value.__metadata__ if isinstance(note, str)]
            if not notes:
                return inner
            return dataclasses.replace(inner, description=" ".join(notes))
        if origin is typing.Union or origin is types.UnionType:
            members = tuple(self._value(arg, globalns) for arg in args)
            return TypeSpec(TypeKind.UNION, " | ".join(m.name for m in members), arguments=members)
        if origin is typing.Literal:
            values = tuple(_literal(v) for v in args)
            return TypeSpec(
                TypeKind.LITERAL,
                "Literal[" + ", ".join(_literal_text(v) for v in args) + "]",
                values=values,
            )
        if origin in _WRAPPERS:
            return self._value(args[0], globalns) if args else ANY
        if origin is not None:
            return self._generic(origin, args, globalns)
        if isinstance(value, type):
            return self._class(value)
        return TypeSpec(TypeKind.UNRESOLVED, _text(value))

    def _generic(self, origin: Any, args: tuple[Any, ...], globalns: Mapping[str, Any]) -> TypeSpec:
        name = _origin_name(origin)
        if origin is collections.abc.Callable:
            return TypeSpec(TypeKind.OPAQUE, "Callable")
        if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
            item = self._value(args[0], globalns)
            return TypeSpec(
                TypeKind.GENERIC, f"tuple[{item.name}, ...]", arguments=(item,), variadic=True
            )
        if origin is tuple and args == ((),):
            return TypeSpec(TypeKind.GENERIC, "tuple[()]")
        if not (origin in _GENERIC_ORIGINS or _is_abc(origin)):
            if isinstance(origin, type):
                return self._class(origin)
            return TypeSpec(TypeKind.UNRESOLVED, _text(origin))
        members = tuple(self._value(arg, globalns) for arg in args)
        text = f"{name}[{', '.join(m.name for m in members)}]" if members else name
        return TypeSpec(TypeKind.GENERIC, text, arguments=members)

    def _class(self, cls: type) -> TypeSpec:
        if cls in SCALARS:
            return TypeSpec(TypeKind.SCALAR, SCALARS[cls])
        if cls in _GENERIC_ORIGINS or _is_abc(cls):
            return TypeSpec(TypeKind.GENERIC, _origin_name(cls))
        if issubclass(cls, enum.Enum):
            return TypeSpec(TypeKind.LITERAL, cls.__name__, values=tuple(_literal(m) for m in cls))
        if dataclasses.is_dataclass(cls) or typing.is_typeddict(cls):
            return self._record(cls)
        return TypeSpec(TypeKind.OPAQUE, cls.__name__)

    def _record(self, cls: type) -> TypeSpec:
        """A dataclass's fields (and properties), or a TypedDict's keys, as a record."""
        if cls in self.records:
            return TypeSpec(TypeKind.REFERENCE, cls.__name__)
        self.records.append(cls)
        try:
            if typing.is_typeddict(cls):
                return TypeSpec(TypeKind.RECORD, cls.__name__, fields=self._keys(cls))
            globalns = module_namespace(cls)
            fields: list[FieldSpec] = []
            names: set[str] = set()
            for item in dataclasses.fields(cls):
                if item.name.startswith("_"):
                    continue
                names.add(item.name)
                has_default = (
                    item.default is not dataclasses.MISSING
                    or item.default_factory is not dataclasses.MISSING
                )
                fields.append(
                    FieldSpec(
                        name=item.name,
                        type=self.describe(item.type, globalns),
                        required=item.init and not has_default,
                        has_default=has_default,
                        default_is_none=item.default is None,
                    )
                )
            for name, attr in _properties(cls):
                if name in names:
                    continue
                names.add(name)
                getter = attr.fget if isinstance(attr, property) else attr.func
                fields.append(FieldSpec(name, self._returns(getter)))
        finally:
            self.records.pop()
        return TypeSpec(
            TypeKind.RECORD,
            cls.__name__,
            fields=tuple(fields),
            sequence_field=sequence_field_of(cls),
        )

    def _keys(self, cls: Any) -> tuple[FieldSpec, ...]:
        """A TypedDict's keys; ``Required``/``NotRequired`` decide where its class could not
        tell (an annotation kept as text)."""
        globalns = module_namespace(cls)
        keys: list[FieldSpec] = []
        for name, annotation in cls.__annotations__.items():
            value = bare = resolve_annotation(annotation, globalns)
            while typing.get_origin(bare) is typing.Annotated:
                bare = typing.get_args(bare)[0]
            origin = typing.get_origin(bare)
            required = (
                origin is typing.Required
                or origin is not typing.NotRequired
                and name in cls.__required_keys__
            )
            keys.append(FieldSpec(name, self._value(value, globalns), required))
        return tuple(keys)

    def _returns(self, getter: Any) -> TypeSpec:
        annotations = getattr(getter, "__annotations__", {}) or {}
        if "return" not in annotations:
            return ANY
        globalns = getattr(getter, "__globals__", {})
        return self.describe(annotations["return"], globalns)


def _properties(cls: type) -> list[tuple[str, Any]]:
    """Public ``property`` and ``cached_property`` attributes, base classes first."""
    found: dict[str, Any] = {}
    for klass in reversed(cls.__mro__):
        for name, attr in vars(klass).items():
            if name.startswith("_"):
                continue
            if isinstance(attr, property | functools.cached_property):
                found[name] = attr
            elif name in found:
                del found[name]
    return list(found.items())


def _is_abc(origin: Any) -> bool:
    return getattr(origin, "__module__", None) == "collections.abc" and isinstance(origin, type)


def _origin_name(origin: Any) -> str:
    return getattr(origin, "__name__", None) or _text(origin)


def _literal(value: Any) -> Any:
    if isinstance(value, enum.Enum):
        value = value.value
    if value is None or type(value) in (str, int, bool):
        return value
    return repr(value)


def _literal_text(value: Any) -> str:
    if isinstance(value, enum.Enum):
        return f"{type(value).__name__}.{value.name}"
    return repr(value)


def _text(value: Any) -> str:
    if isinstance(value, type):
        return value.__name__
    text = getattr(value, "__name__", None)
    return text if isinstance(text, str) else inspect.formatannotation(value)
