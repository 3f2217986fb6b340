"""``vis.Symbol`` and ``vis.method``: export functions and object namespaces as tools."""

from __future__ import annotations

import enum
import functools
import inspect
import keyword
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from vis_core.contracts.resolve import unwrap_chain
from vis_core.model.activity import Activity, SymbolTag

if TYPE_CHECKING:
    from vis_core.contracts.specs import ToolSpec

F = TypeVar("F")

METHOD_ATTR = "__vis_method__"
_TAGS = ", ".join(t.value for t in SymbolTag)
_SCALARS = (type(None), bool, int, float, complex, str, bytes, bytearray, enum.Enum)
_COLLECTIONS = (list, tuple, dict, set, frozenset)


def _tag(value: object, where: str) -> SymbolTag:
    if isinstance(value, SymbolTag):
        return value
    try:
        return SymbolTag(value)
    except ValueError:
        raise ValueError(f"{where}: tag must be one of {_TAGS}; got {value!r}") from None


def _hidden(value: object, where: str) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"{where}: is_hidden must be True or False; got {value!r}")
    return value


def _activity(value: object, where: str) -> Activity | None:
    if value is not None and not isinstance(value, Activity):
        raise ValueError(
            f"{where}: activity must be a vis.Activity(label=...) or None; "
            f"got {type(value).__name__}"
        )
    return value


@dataclass(frozen=True)
class MethodMeta:
    """Metadata ``@vis.method`` attaches to one method; the method itself is unchanged."""

    tag: SymbolTag = SymbolTag.OBSERVATION
    is_hidden: bool = False
    activity: Activity | None = None


def method(
    tag: SymbolTag | str = "observation",
    is_hidden: bool = False,
    activity: Activity | None = None,
) -> Callable[[F], F]:
    """Override tag, visibility and Activity for one namespace method (``@vis.method(...)``)."""
    if callable(tag) and not isinstance(tag, str):
        raise TypeError("use @vis.method(...) with parentheses, e.g. @vis.method(tag='mutation')")
    meta = MethodMeta(
        _tag(tag, "vis.method"),
        _hidden(is_hidden, "vis.method"),
        _activity(activity, "vis.method"),
    )

    def decorate(fn: F) -> F:
        target = fn.__func__ if isinstance(fn, staticmethod | classmethod) else fn
        if not callable(target):
            raise TypeError(f"@vis.method decorates a method, got {type(fn).__name__}")
        try:
            setattr(target, METHOD_ATTR, meta)
        except (AttributeError, TypeError):
            raise TypeError(
                f"@vis.method cannot annotate {type(fn).__name__}; put it directly on a def"
            ) from None
        return fn

    return decorate


@dataclass(frozen=True)
class SymbolEntry:
    """One exported callable of a declaration, with its full dotted name."""

    path: str
    fn: Callable[..., Any]
    tag: SymbolTag
    is_hidden: bool
    activity: Activity | None

    def spec(self) -> ToolSpec:
        # here: a session's worker loads extensions without describing their tools
        from vis_core.contracts.build import callable_spec

        return callable_spec(self.fn, name=self.path, tag=self.tag)


def _is_function(value: object) -> bool:
    return inspect.isroutine(value) or isinstance(value, functools.partial)


def _check_name(name: object, where: str) -> str:
    if not isinstance(name, str) or not name.isidentifier() or keyword.iskeyword(name):
        raise ValueError(
            f"{where}: name must be a Python identifier such as 'report'; got {name!r}"
        )
    if name.startswith("_"):
        raise ValueError(f"{where}: name {name!r} must not start with '_'; such names are private")
    return name


def _check_callable(fn: Callable[..., Any], path: str) -> None:
    doc = inspect.getdoc(fn)
    if not doc or not doc.strip():
        raise ValueError(
            f"tool {path!r} needs a nonblank docstring: describe in one line what it does, "
            "its effects and limits"
        )
    unwrap_chain(fn)


@dataclass(frozen=True)
class Symbol:
    """One exported function, or an object namespace whose public methods become tools."""

    fn_or_object: Any
    name: str | None = None
    tag: SymbolTag | str = SymbolTag.OBSERVATION
    is_hidden: bool = False
    activity: Activity | None = None
    entries: tuple[SymbolEntry, ...] = field(init=False, repr=False, compare=False)
    namespaces: tuple[str, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        target = self.fn_or_object
        where = f"vis.Symbol({self.name or _short(target)})"
        tag = _tag(self.tag, where)
        hidden = _hidden(self.is_hidden, where)
        activity = _activity(self.activity, where)
        object.__setattr__(self, "tag", tag)
        _reject_non_exportable(target, where)
        if _is_function(target):
            name = self.name if self.name is not None else getattr(target, "__name__", None)
            if self.name is None and (not isinstance(name, str) or not name.isidentifier()):
                raise ValueError(f"{where}: this callable has no usable name; set name= explicitly")
            name = _check_name(name, where)
            _check_callable(target, name)
            meta = getattr(target, METHOD_ATTR, None)
            if isinstance(meta, MethodMeta):
                tag = tag if self.tag != SymbolTag.OBSERVATION else meta.tag
                hidden = hidden or meta.is_hidden
                activity = activity or meta.activity
            entries = (SymbolEntry(name, target, tag, hidden, activity),)
            namespaces: tuple[str, ...] = ()
        else:
            if self.name is None:
                raise ValueError(
                    f"{where} exports an object namespace; set name= explicitly, such as "
                    "vis.Symbol(Greeter(), name='greet')"
                )
            name = _check_name(self.name, where)
            if activity is not None:
                raise ValueError(
                    f"vis.Symbol({name!r}): namespace-level Activity is rejected; put "
                    "@vis.method(activity=vis.Activity(...)) on each exported method instead"
                )
            walker = _Walker(tag, hidden)
            walker.walk(target, name)
            if walker.problems:
                raise ValueError(
                    f"vis.Symbol({name!r}) cannot export this object:\n- "
                    + "\n- ".join(walker.problems)
                )
            entries = tuple(walker.entries)
            namespaces = tuple(walker.namespaces)
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "is_hidden", hidden if not namespaces else self.is_hidden)
        object.__setattr__(self, "entries", entries)
        object.__setattr__(self, "namespaces", namespaces)

    @property
    def is_namespace(self) -> bool:
        return bool(self.namespaces)

    @property
    def missing_activity(self) -> tuple[str, ...]:
        """Exported callables without an Activity: they leave only engine execution evidence."""
        return tuple(e.path for e in self.entries if e.activity is None)

    def specs(self, *, include_hidden: bool = False) -> tuple[ToolSpec, ...]:
        """Fresh ``ToolSpec`` of each public (or every) callable, fully named."""
        return tuple(e.spec() for e in self.entries if include_hidden or not e.is_hidden)

    @property
    def contract(self) -> dict[str, Any]:
        """Fresh portable data: a callable contract, or a namespace with its public members."""
        if not self.is_namespace:
            return self.entries[0].spec().to_contract()
        from vis_core.contracts.specs import CONTRACT_VERSION

        return {
            "version": CONTRACT_VERSION,
            "name": self.name,
            "members": [s.to_contract() for s in self.specs()],
        }


def _short(target: object) -> str:
    name = getattr(target, "__name__", None)
    return name if isinstance(name, str) else f"<{type(target).__name__} object>"


def _reject_non_exportable(target: object, where: str) -> None:
    if isinstance(target, type):
        raise ValueError(
            f"{where}: got the class {target.__name__}; export an instance such as "
            f"vis.Symbol({target.__name__}(), name=...) or a function"
        )
    if isinstance(target, types.ModuleType):
        raise ValueError(f"{where}: got the module {target.__name__}; export its functions")
    if isinstance(target, _SCALARS + _COLLECTIONS):
        raise ValueError(
            f"{where}: got a {type(target).__name__} value; export a function or an object"
        )


class _Walker:
    """Collects a namespace's public methods and nested namespaces, or problems with paths."""

    def __init__(self, tag: SymbolTag, hidden: bool) -> None:
        self.tag = tag
        self.hidden = hidden
        self.entries: list[SymbolEntry] = []
        self.namespaces: list[str] = []
        self.problems: list[str] = []
        self.seen: dict[int, str] = {}
        self.seen_functions: dict[tuple[int, int], str] = {}

    def walk(self, obj: object, path: str, ancestors: tuple[int, ...] = ()) -> None:
        self.seen[id(obj)] = path
        self.namespaces.append(path)
        before = len(self.entries)
        problems_before = len(self.problems)
        for name in _public_names(obj):
            member_path = f"{path}.{name}"
            try:
                static = inspect.getattr_static(obj, name)
            except AttributeError:
                continue
            if isinstance(static, property | functools.cached_property):
                self.problems.append(
                    f"{member_path} is a property; make it a method or give it a '_' name"
                )
                continue
            try:
                value = getattr(obj, name)
            except Exception as exc:  # reported with the path
                self.problems.append(f"{member_path} could not be read: {exc}")
                continue
            self._member(value, member_path, (*ancestors, id(obj)))
        exported = len(self.entries) > before
        if not exported and len(self.problems) == problems_before:
            self.problems.append(f"{path} has no public methods to export")

    def _member(self, value: object, path: str, ancestors: tuple[int, ...]) -> None:
        if isinstance(value, type):
            self.problems.append(f"{path} is a class; export an instance or make it private")
        elif isinstance(value, types.ModuleType):
            self.problems.append(f"{path} is a module; modules cannot be exported")
        elif isinstance(value, _SCALARS):
            self.problems.append(
                f"{path} is a public scalar ({type(value).__name__}); give it a '_' name"
            )
        elif isinstance(value, _COLLECTIONS):
            self.problems.append(
                f"{path} is a public {type(value).__name__}; give it a '_' name or expose it "
                "through a method"
            )
        elif _is_function(value):
            self._function(value, path)
        elif id(value) in ancestors:
            self.problems.append(f"{path} is a cycle: it refers back to {self.seen[id(value)]}")
        elif id(value) in self.seen:
            self.problems.append(
                f"{path} repeats the object already exported as {self.seen[id(value)]}"
            )
        else:
            self.walk(value, path, ancestors)

    def _function(self, fn: Any, path: str) -> None:
        key = (id(getattr(fn, "__self__", None)), id(getattr(fn, "__func__", fn)))
        if key in self.seen_functions:
            self.problems.append(
                f"{path} repeats the method already exported as {self.seen_functions[key]}"
            )
            return
        self.seen_functions[key] = path
        try:
            _check_callable(fn, path)
        except ValueError as exc:
            self.problems.append(str(exc))
            return
        meta = getattr(fn, METHOD_ATTR, None)
        if isinstance(meta, MethodMeta):
            entry = SymbolEntry(path, fn, meta.tag, self.hidden or meta.is_hidden, meta.activity)
        else:
            entry = SymbolEntry(path, fn, self.tag, self.hidden, None)
        self.entries.append(entry)


def _public_names(obj: object) -> list[str]:
    """Public attribute names in definition order: base classes first, then the instance."""
    names: dict[str, None] = {}
    for klass in reversed(type(obj).__mro__):
        if klass is object:
            continue
        for name in vars(klass):
            if not name.startswith("_"):
                names[name] = None
    instance = getattr(obj, "__dict__", None)
    if isinstance(instance, dict):
        for name in instance:
            if isinstance(name, str) and not name.startswith("_"):
                names[name] = None
    return list(names)
