"""Rebuild records (and dicts) passed to a tool into the dataclasses its annotations name.

Rules (the "Accept records as arguments" section): the parameter's resolved annotation
decides; records are also rebuilt inside ``Optional``/unions (first member that fits, in
declared order), ``list``/``tuple``/``set``/``frozenset``/``dict`` and nested record fields.
A value fits a dataclass when its keys are public fields of it (property fields of the
record, ``init=False`` fields and the class's properties are ignored) and every required
constructor field is present. Anything that does not fit reaches the tool unchanged, with
sandbox records turned into plain dicts. Constructor errors propagate and fail the call.
A parameter without annotation (or ``Any``/``object``) rebuilds a record of the tool's own
extension as the live class registered for it (see :mod:`vis_core.records.registry`).
An Enum crosses as its value: a value of one of its members (of the same type: ``True`` is no
``1``) becomes that member, in the same places; any other value reaches the tool unchanged.
"""

from __future__ import annotations

import collections.abc as cabc
import contextlib
import dataclasses
import enum
import functools
import inspect
import types
import typing
import weakref
from collections.abc import Callable, Mapping
from typing import Any

from vis_core.contracts.hints import UNRESOLVED, field_hints, parameter_hints
from vis_core.records import registry
from vis_core.records.record import Record

_NO_ANNOTATION: Any = inspect.Parameter.empty

_SEQUENCE_ORIGINS = (
    list,
    tuple,
    set,
    frozenset,
    cabc.Sequence,
    cabc.MutableSequence,
    cabc.Collection,
    cabc.Iterable,
    cabc.Set,
    cabc.MutableSet,
)
_MAPPING_ORIGINS = (dict, cabc.Mapping, cabc.MutableMapping)
_CONTAINERS = (list, tuple, set, frozenset)


def coerce_arguments(
    fn: Callable[..., Any],
    args: tuple[Any, ...] | list[Any],
    kwargs: Mapping[str, Any],
    *,
    owner: str | None = None,
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """``(args, kwargs)`` for calling ``fn``, with records rebuilt per its annotations.

    ``owner`` is the extension that declared ``fn``; it lets unannotated parameters rebuild
    that extension's own records. Arguments that do not bind to ``fn``'s signature are only
    turned into plain data, so Python reports the binding error when ``fn`` is called.
    """
    try:
        plan = _plan(fn)
    except (TypeError, ValueError):
        return tuple(plain(a) for a in args), {k: plain(v) for k, v in kwargs.items()}
    signature, hints, positional, var_positional, var_keyword, takes_enum = plan
    if (
        not takes_enum
        and all(type(a) in _SCALARS for a in args)
        and all(type(v) in _SCALARS for v in kwargs.values())
    ):  # nothing to rebuild: every rule below but the Enum's hands a scalar back unchanged
        return tuple(args), dict(kwargs)
    try:
        signature.bind(*args, **kwargs)
    except TypeError:
        return tuple(plain(a) for a in args), {k: plain(v) for k, v in kwargs.items()}
    kinds = inspect.Parameter

    def annotation_of(parameter: inspect.Parameter | None) -> Any:
        return _NO_ANNOTATION if parameter is None else hints.get(parameter.name, _NO_ANNOTATION)

    new_args = tuple(
        rebuild(
            value,
            annotation_of(positional[i] if i < len(positional) else var_positional),
            owner=owner,
        )
        for i, value in enumerate(args)
    )
    new_kwargs: dict[str, Any] = {}
    for name, value in kwargs.items():
        parameter = signature.parameters.get(name)
        if parameter is None or parameter.kind in (kinds.POSITIONAL_ONLY, kinds.VAR_POSITIONAL):
            parameter = var_keyword
        new_kwargs[name] = rebuild(value, annotation_of(parameter), owner=owner)
    return new_args, new_kwargs


_SCALARS = frozenset({int, float, str, bool, bytes, type(None)})
_Plan = tuple[
    inspect.Signature,
    dict[str, Any],
    list[inspect.Parameter],
    inspect.Parameter | None,
    inspect.Parameter | None,
    bool,
]
_PLANS: weakref.WeakKeyDictionary[Any, _Plan] = weakref.WeakKeyDictionary()


def _plan(fn: Callable[..., Any]) -> _Plan:
    """``fn``'s signature, resolved parameter hints, parameters by kind and whether a hint
    names an Enum, cached per function once every hint resolved (a later-defined class may
    resolve one next time)."""
    try:
        cached = _PLANS.get(fn)
    except TypeError:  # not weakly referable (a builtin): computed each time
        cached = None
    if cached is not None:
        return cached
    signature = inspect.signature(fn)
    hints = parameter_hints(fn)
    kinds = inspect.Parameter
    parameters = list(signature.parameters.values())
    plan: _Plan = (
        signature,
        hints,
        [p for p in parameters if p.kind in (kinds.POSITIONAL_ONLY, kinds.POSITIONAL_OR_KEYWORD)],
        next((p for p in parameters if p.kind is kinds.VAR_POSITIONAL), None),
        next((p for p in parameters if p.kind is kinds.VAR_KEYWORD), None),
        any(_names_enum(hint) for hint in hints.values()),
    )
    if not any(hint is UNRESOLVED for hint in hints.values()):
        with contextlib.suppress(TypeError):
            _PLANS[fn] = plan
    return plan


def rebuild(value: Any, annotation: Any = _NO_ANNOTATION, *, owner: str | None = None) -> Any:
    """``value`` rebuilt for a resolved ``annotation`` (see the module docstring)."""
    return _Rebuilder(owner).rebuild(value, annotation)


def plain(value: Any) -> Any:
    """``value`` with every sandbox ``Record`` turned into a dict of its fields."""
    if isinstance(value, Record):
        return {k: plain(v) for k, v in value._vis_fields.items()}
    kind = type(value)
    if kind in (list, tuple, dict) and _has_record(value):
        if kind is dict:
            return {k: plain(v) for k, v in value.items()}
        return kind(plain(v) for v in value)
    return value


def _has_record(value: Any) -> bool:
    if isinstance(value, Record):
        return True
    if type(value) in (list, tuple):
        return any(_has_record(v) for v in value)
    if type(value) is dict:
        return any(_has_record(v) for v in value.values())
    return False


class _Rebuilder:
    def __init__(self, owner: str | None) -> None:
        self.owner = owner

    def rebuild(self, value: Any, annotation: Any) -> Any:
        annotation = _strip(annotation)
        if annotation is UNRESOLVED:
            return plain(value)
        if annotation is _NO_ANNOTATION or annotation is Any or annotation is object:
            return self.loose(value)
        origin = typing.get_origin(annotation)
        if origin is typing.Union or origin is types.UnionType:
            for member in typing.get_args(annotation):
                if self.fits(value, member):
                    return self.rebuild(value, member)
            return plain(value)
        if isinstance(annotation, type) and dataclasses.is_dataclass(annotation):
            return self.construct(value, annotation)
        if _is_enum(annotation):
            member = _member(value, annotation)
            return plain(value) if member is None else member
        if origin in _SEQUENCE_ORIGINS:
            return self.sequence(value, annotation, origin)
        if origin in _MAPPING_ORIGINS:
            return self.mapping(value, annotation)
        return plain(value)

    def loose(self, value: Any) -> Any:
        """No annotation: rebuild this extension's records as their live classes."""
        if isinstance(value, Record):
            info = value._vis_info
            cls = registry.lookup(info.owner, info.qualname) if info.owner == self.owner else None
            if cls is not None and _fields_of(value, cls) is not None:
                return self.construct(value, cls)
            return plain(value)
        kind = type(value)
        if kind is list or kind is tuple:
            return kind(self.loose(v) for v in value)
        if kind is dict:
            return {k: self.loose(v) for k, v in value.items()}
        return value

    def fits(self, value: Any, member: Any) -> bool:
        member = _strip(member)
        if member is UNRESOLVED:
            return False
        if member is Any or member is object:
            return True
        if member is None or member is type(None):
            return value is None
        origin = typing.get_origin(member)
        if origin is typing.Union or origin is types.UnionType:
            return any(self.fits(value, m) for m in typing.get_args(member))
        if origin is typing.Literal:
            return any(value == v and type(value) is type(v) for v in typing.get_args(member))
        if isinstance(member, type) and dataclasses.is_dataclass(member):
            return isinstance(value, member) or _fields_of(value, member) is not None
        if _is_enum(member):
            return _member(value, member) is not None
        if origin in _SEQUENCE_ORIGINS:
            return isinstance(value, _CONTAINERS)
        if origin in _MAPPING_ORIGINS:
            return isinstance(value, dict | Record)
        if member in _MAPPING_ORIGINS:
            return isinstance(value, dict | Record)
        if isinstance(member, type):
            try:
                return isinstance(value, member)
            except TypeError:
                return False
        return False

    def construct(self, value: Any, cls: type) -> Any:
        if isinstance(value, cls):
            return value
        found = _fields_of(value, cls)
        if found is None:
            return plain(value)
        hints = field_hints(cls)
        init = _init_fields(cls)
        kwargs = {
            name: self.rebuild(item, hints.get(name, _NO_ANNOTATION))
            for name, item in found.items()
            if name in init
        }
        return cls(**kwargs)

    def sequence(self, value: Any, annotation: Any, origin: Any) -> Any:
        if not isinstance(value, _CONTAINERS):
            return plain(value)
        args = typing.get_args(annotation)
        items = list(value)
        if origin is tuple and args and not (len(args) == 2 and args[1] is Ellipsis):
            if args == ((),) or len(args) != len(items):
                return plain(value)
            rebuilt = [self.rebuild(v, a) for v, a in zip(items, args, strict=True)]
        else:
            item_type = args[0] if args else _NO_ANNOTATION
            rebuilt = [self.rebuild(v, item_type) for v in items]
        target = origin if origin in _CONTAINERS else type(value)
        try:
            return target(rebuilt)
        except TypeError:  # unhashable items for a set annotation stay a list
            return rebuilt

    def mapping(self, value: Any, annotation: Any) -> Any:
        if isinstance(value, Record):
            value = dict(value._vis_fields)
        if not isinstance(value, dict):
            return plain(value)
        args = typing.get_args(annotation)
        key_type, item_type = args if len(args) == 2 else (_NO_ANNOTATION, _NO_ANNOTATION)
        return {self.rebuild(k, key_type): self.rebuild(v, item_type) for k, v in value.items()}


def _strip(annotation: Any) -> Any:
    """Drop ``Annotated`` metadata and ``NewType`` wrappers."""
    while True:
        if typing.get_origin(annotation) is typing.Annotated:
            annotation = typing.get_args(annotation)[0]
        elif hasattr(annotation, "__supertype__"):
            annotation = annotation.__supertype__
        else:
            return annotation


def _is_enum(annotation: Any) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, enum.Enum)


def _names_enum(annotation: Any) -> bool:
    """Whether an Enum is ``annotation`` or inside it (a scalar argument may become one)."""
    annotation = _strip(annotation)
    return _is_enum(annotation) or any(_names_enum(a) for a in typing.get_args(annotation))


def _member(value: Any, cls: type[enum.Enum]) -> enum.Enum | None:
    """The member of ``cls`` that ``value`` is, or whose value it is (of the same type)."""
    if isinstance(value, cls):
        return value
    for member in cls:
        if type(member.value) is type(value) and member.value == value:
            return member
    return None


def _init_fields(cls: type) -> set[str]:
    return {f.name for f in dataclasses.fields(cls) if f.init and not f.name.startswith("_")}


def _fields_of(value: Any, cls: type) -> dict[str, Any] | None:
    """The fields ``value`` offers for building ``cls``, or ``None`` when it does not fit."""
    ignored: tuple[str, ...] = ()
    if isinstance(value, Record):
        mapping: Mapping[Any, Any] = value._vis_fields
        ignored = value._vis_info.derived
    elif isinstance(value, dict):
        mapping = value
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        mapping = {
            f.name: getattr(value, f.name)
            for f in dataclasses.fields(value)
            if not f.name.startswith("_") and hasattr(value, f.name)
        }
    else:
        return None
    fields = dataclasses.fields(cls)
    public = {f.name for f in fields if not f.name.startswith("_")}
    skip = set(ignored) | _property_names(cls) | {f.name for f in fields if not f.init}
    if any(not isinstance(k, str) or (k not in public and k not in skip) for k in mapping):
        return None
    for f in fields:
        required = (
            f.init and f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        )
        if required and f.name not in mapping:
            return None
    return {k: v for k, v in mapping.items() if k in public}


def _property_names(cls: type) -> frozenset[str]:
    return frozenset(
        name
        for klass in cls.__mro__
        for name, attr in vars(klass).items()
        if isinstance(attr, property | functools.cached_property)
    )
