"""Sandbox-side introspection: a real ``inspect.Signature`` and annotations from a contract."""

from __future__ import annotations

import ast
import builtins
import collections.abc
import inspect
import typing
from collections.abc import Callable, Mapping
from typing import Any


def _static_names() -> dict[str, Any]:
    names: dict[str, Any] = {}
    for module in (typing, collections.abc):
        for name in getattr(module, "__all__", ()):
            names[name] = getattr(module, name)
    names.update(
        {n: getattr(builtins, n) for n in dir(builtins) if isinstance(getattr(builtins, n), type)}
    )
    names["None"] = None
    return names


_NAMES = _static_names()


def _annotation(node: ast.expr) -> Any:
    """An annotation resolved statically: builtins, ``typing`` and ``collections.abc`` names,
    unions and subscripts become real objects; other names stay forward-reference strings."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        return _NAMES.get(node.id, node.id)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        left, right = _annotation(node.left), _annotation(node.right)
        try:
            return left | right
        except TypeError:
            return typing.Union[left, right]  # noqa: UP007 - a member is a forward reference
    if isinstance(node, ast.Subscript):
        base = _annotation(node.value)
        if isinstance(base, str):
            return ast.unparse(node)
        items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        args = tuple(_annotation(item) for item in items)
        if isinstance(node.slice, ast.Tuple) and not items:
            args = ((),)
        try:
            return base[args] if len(args) != 1 else base[args[0]]
        except TypeError:
            return ast.unparse(node)
    if isinstance(node, ast.List):
        return [_annotation(item) for item in node.elts]
    return ast.unparse(node)


def _declared(node: ast.expr) -> Any:
    """A parameter's or the return's annotation (:func:`_annotation`); one quoted whole
    because it holds a quoted name, ``'Result | None'``, is the union of its members."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        try:
            inner = ast.parse(node.value, mode="eval").body
        except SyntaxError:
            return node.value
        if isinstance(inner, ast.BinOp) and isinstance(inner.op, ast.BitOr):
            return _annotation(inner)
    return _annotation(node)


def _default(node: ast.expr) -> Any:
    class _Ellipsis(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.AST:  # ast visitor API
            if node.id == "Ellipsis":
                return ast.copy_location(ast.Constant(Ellipsis), node)
            return node

    tree = _Ellipsis().visit(node)
    try:
        return ast.literal_eval(tree)
    except (ValueError, SyntaxError):
        return Ellipsis


def signature_from_contract(contract: Mapping[str, Any]) -> inspect.Signature:
    """The callable's ``inspect.Signature``: names, kinds, annotations, literal defaults.

    Opaque defaults become ``Ellipsis`` placeholders (omit the argument to use the default).
    """
    text = str(contract["signature"])
    tree = ast.parse(f"def _tool{text}:\n    pass\n")
    fn = tree.body[0]
    assert isinstance(fn, ast.FunctionDef)
    args = fn.args
    params: list[inspect.Parameter] = []
    positional = [*args.posonlyargs, *args.args]
    pos_defaults: list[ast.expr | None] = [None] * (len(positional) - len(args.defaults))
    pos_defaults += list(args.defaults)
    for index, arg in enumerate(positional):
        kind = inspect.Parameter.POSITIONAL_ONLY
        if index >= len(args.posonlyargs):
            kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
        params.append(_parameter(arg, kind, pos_defaults[index]))
    if args.vararg is not None:
        params.append(_parameter(args.vararg, inspect.Parameter.VAR_POSITIONAL, None))
    for arg, default in zip(args.kwonlyargs, args.kw_defaults, strict=True):
        params.append(_parameter(arg, inspect.Parameter.KEYWORD_ONLY, default))
    if args.kwarg is not None:
        params.append(_parameter(args.kwarg, inspect.Parameter.VAR_KEYWORD, None))
    returns = inspect.Signature.empty if fn.returns is None else _declared(fn.returns)
    return inspect.Signature(params, return_annotation=returns)


def _parameter(arg: ast.arg, kind: Any, default: ast.expr | None) -> inspect.Parameter:
    annotation = inspect.Parameter.empty if arg.annotation is None else _declared(arg.annotation)
    value = inspect.Parameter.empty if default is None else _default(default)
    return inspect.Parameter(arg.arg, kind, default=value, annotation=annotation)


def annotations_from_signature(signature: inspect.Signature) -> dict[str, Any]:
    """``__annotations__`` for a proxy: declared parameter and return annotations."""
    result = {
        name: param.annotation
        for name, param in signature.parameters.items()
        if param.annotation is not inspect.Parameter.empty
    }
    if signature.return_annotation is not inspect.Signature.empty:
        result["return"] = signature.return_annotation
    return result


def contract_function(contract: Mapping[str, Any]) -> Callable[..., Any]:
    """A described-only function for a proxy's ``__wrapped__``: ``inspect.signature(proxy)``
    and ``typing.get_type_hints(proxy)`` follow it; calling it raises ``TypeError``."""
    name = str(contract["name"])
    namespace: dict[str, Any] = {"__builtins__": builtins, "__name__": "vis.tools"}
    exec(  # fixed source; gives the stub an empty module namespace
        "def _described(*args, **kwargs):\n    raise TypeError(_MESSAGE)\n",
        namespace,
    )
    namespace["_MESSAGE"] = f"{name} here only describes the tool; await {name}(...) instead"
    stub = namespace["_described"]
    signature = signature_from_contract(contract)
    stub.__signature__ = signature
    stub.__annotations__ = annotations_from_signature(signature)
    stub.__name__ = name.rsplit(".", 1)[-1]
    stub.__qualname__ = name
    stub.__doc__ = contract.get("description") or None
    stub.__module__ = "vis.tools"
    return stub
