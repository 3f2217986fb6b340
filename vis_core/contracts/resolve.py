"""Resolve annotations statically, without evaluating code, in the defining function's module."""

from __future__ import annotations

import ast
import builtins
import enum
import inspect
import sys
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

MAX_TEXT_DEPTH = 8
"""How many nested string annotations (``'list["X"]'``) are followed."""

_SAFE_MODULES = frozenset({"builtins", "typing", "typing_extensions", "collections.abc", "types"})

_unresolved_cache: dict[str, type] = {}


def unresolved(name: str) -> type:
    """A marker class standing for an annotation that could not be resolved safely."""
    marker = _unresolved_cache.get(name)
    if marker is None:
        marker = type(name, (), {"__vis_unresolved__": name, "__module__": "vis.unresolved"})
        _unresolved_cache[name] = marker
    return marker


def unresolved_name(obj: Any) -> str | None:
    """The annotation text of an :func:`unresolved` marker, else ``None``."""
    if isinstance(obj, type):
        value = obj.__dict__.get("__vis_unresolved__")
        return value if isinstance(value, str) else None
    return None


@dataclass(frozen=True)
class Target:
    """What describes a callable: its innermost function and the names its module defines."""

    function: Callable[..., Any]
    signature: inspect.Signature
    globalns: Mapping[str, Any]
    description: str


def unwrap_chain(fn: Callable[..., Any]) -> tuple[Callable[..., Any], bool]:
    """Follow ``functools.wraps`` chains (and bound methods) to the defining function.

    Returns the function and whether it was reached through a bound method. A cyclic
    ``__wrapped__`` chain raises ``ValueError``.
    """
    bound = isinstance(fn, types.MethodType)
    current: Any = fn.__func__ if bound else fn  # type: ignore[union-attr]
    seen = {id(current)}
    while True:
        try:
            nxt = inspect.getattr_static(current, "__wrapped__")
        except AttributeError:
            break
        if isinstance(nxt, types.MethodType) and not bound:
            bound = True
            nxt = nxt.__func__
        if id(nxt) in seen:
            name = getattr(fn, "__qualname__", repr(fn))
            raise ValueError(
                f"cyclic __wrapped__ chain while describing {name}: a decorator's __wrapped__ "
                "leads back to itself; fix the decorator so it wraps the original function"
            )
        seen.add(id(nxt))
        current = nxt
    return current, bound


def describe_target(fn: Callable[..., Any]) -> Target:
    """The innermost function of ``fn``, its signature (without ``self`` when bound) and module."""
    inner, bound = unwrap_chain(fn)
    try:
        signature = inspect.signature(inner, follow_wrapped=False)
    except (TypeError, ValueError):
        signature = inspect.Signature(
            [
                inspect.Parameter("args", inspect.Parameter.VAR_POSITIONAL),
                inspect.Parameter("kwargs", inspect.Parameter.VAR_KEYWORD),
            ]
        )
        bound = False
    if bound:
        params = list(signature.parameters.values())
        if params and params[0].kind in (
            inspect.Parameter.POSITIONAL_ONLY,
            inspect.Parameter.POSITIONAL_OR_KEYWORD,
        ):
            signature = signature.replace(parameters=params[1:])
    globalns = getattr(inner, "__globals__", None)
    if not isinstance(globalns, Mapping):
        globalns = module_namespace(inner)
    description = inspect.getdoc(fn) or inspect.getdoc(inner) or ""
    return Target(inner, signature, globalns, description)


def module_namespace(owner: Any) -> Mapping[str, Any]:
    """The global names of the module that defines ``owner`` (a class or function); none
    when it names no module that is loaded."""
    module = sys.modules.get(getattr(owner, "__module__", None) or "")
    return vars(module) if module is not None else {}


def resolve_text(text: str, globalns: Mapping[str, Any], depth: int = 0) -> Any:
    """Resolve annotation source text against ``globalns`` and builtins, without evaluating it.

    Names, dotted module/class attributes, subscripts of typing and built-in generics, ``|``
    unions and constants are resolved; anything else becomes an :func:`unresolved` marker.
    """
    if depth > MAX_TEXT_DEPTH:
        return unresolved(text)
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except SyntaxError:
        return unresolved(text)
    return _Resolver(globalns, depth).node(node)


class _Resolver:
    def __init__(self, globalns: Mapping[str, Any], depth: int) -> None:
        self.globalns = globalns
        self.depth = depth

    def node(self, node: ast.expr) -> Any:
        try:
            return self._node(node)
        except Exception:  # a typing construct refused these arguments
            return unresolved(ast.unparse(node))

    def _node(self, node: ast.expr) -> Any:
        if isinstance(node, ast.Constant):
            if isinstance(node.value, str):
                return resolve_text(node.value, self.globalns, self.depth + 1)
            return node.value
        if isinstance(node, ast.Name):
            if node.id in self.globalns:
                return self.globalns[node.id]
            if hasattr(builtins, node.id):
                return getattr(builtins, node.id)
            return unresolved(node.id)
        if isinstance(node, ast.Attribute):
            base = self._node(node.value)
            if unresolved_name(base) is not None:
                return unresolved(ast.unparse(node))
            return _static_attribute(base, node.attr, ast.unparse(node))
        if isinstance(node, ast.Subscript):
            return self._subscript(node)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
            left, right = self._node(node.left), self._node(node.right)
            return typing.Union[left, right]  # noqa: UP007 - members may be strings or markers
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            value = self._node(node.operand)
            if type(value) in (int, float, complex):
                return -value
        if isinstance(node, ast.List):
            return [self._node(item) for item in node.elts]
        if isinstance(node, ast.Tuple):
            return tuple(self._node(item) for item in node.elts)
        return unresolved(ast.unparse(node))

    def _subscript(self, node: ast.Subscript) -> Any:
        base = self._node(node.value)
        if unresolved_name(base) is not None:
            return unresolved(ast.unparse(node))
        items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if base is typing.Literal:
            values = tuple(_literal_value(self, item) for item in items)
            return typing.Literal[values]
        if base is typing.Annotated:
            inner = self._node(items[0])
            notes = [
                item.value
                for item in items[1:]
                if isinstance(item, ast.Constant) and isinstance(item.value, str)
            ]
            return typing.Annotated[(inner, *notes)] if notes else inner
        if not _safe_generic(base):
            return base if isinstance(base, type) else unresolved(ast.unparse(node))
        args = [self._node(item) for item in items]
        if isinstance(node.slice, ast.Tuple) and not node.slice.elts:
            return base[()]
        return base[tuple(args)] if len(args) > 1 else base[args[0]]


def _literal_value(resolver: _Resolver, node: ast.expr) -> Any:
    if isinstance(node, ast.Constant):
        return node.value
    value = resolver._node(node)
    if isinstance(value, enum.Enum) or type(value) in (int, float, complex):
        return value
    raise ValueError("Literal holds a non-literal value")


def _static_attribute(base: Any, attr: str, text: str) -> Any:
    if isinstance(base, types.ModuleType):
        namespace = vars(base)
        return namespace[attr] if attr in namespace else unresolved(text)
    if isinstance(base, enum.EnumMeta):
        member = base.__members__.get(attr)
        if member is not None:
            return member
    if isinstance(base, type):
        try:
            return inspect.getattr_static(base, attr)
        except AttributeError:
            return unresolved(text)
    return unresolved(text)


def _safe_generic(base: Any) -> bool:
    """Subscripting these runs no author code."""
    if isinstance(base, typing._SpecialForm):  # Optional, Union, ClassVar…
        return True
    module = getattr(base, "__module__", None)
    return module in _SAFE_MODULES


def resolve_annotation(annotation: Any, globalns: Mapping[str, Any]) -> Any:
    """An annotation object or text, with text resolved statically in ``globalns``."""
    if isinstance(annotation, str):
        return resolve_text(annotation, globalns)
    if isinstance(annotation, typing.ForwardRef):
        return resolve_text(annotation.__forward_arg__, globalns)
    return annotation
