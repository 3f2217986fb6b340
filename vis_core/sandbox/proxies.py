"""Sandbox-side stand-ins for host tools and host handles, and rebuilt tool exceptions."""

from __future__ import annotations

import builtins
import functools
import os
from collections.abc import Awaitable, Callable, Coroutine, Iterable
from typing import Any

from vis_core.sandbox.unawaited import named

#: ``request(kind, target, args, kwargs) -> coroutine of the result``: the child's protocol
#: loop sends a ``call`` (target: its name) or ``hcall`` (target: handle and method).
Requester = Callable[
    [str, dict[str, Any], tuple[Any, ...], dict[str, Any]], Coroutine[Any, Any, Any]
]

from vis_core.extension.errors import VisToolError  # noqa: E402 - re-exported for the sandbox


def rebuild_exception(type_name: str, message: str) -> BaseException:
    """The exception a tool raised on the host, as a sandbox exception of the same builtin type;
    a VisToolError naming any other type first (its own text says one where it has one)."""
    cls = getattr(builtins, type_name, None)
    if isinstance(cls, type) and issubclass(cls, Exception) and cls is not VisToolError:
        try:
            return cls(message)
        except TypeError:  # e.g. UnicodeDecodeError needs five arguments
            pass
    own = not type_name or type_name == VisToolError.__name__
    return VisToolError(message if own else f"{type_name}: {message}", type_name)


def _described(contract: dict[str, Any] | None) -> Callable[..., Any] | None:
    """A described-only function built from a full contract's ``signature`` text, if any."""
    if not isinstance(contract, dict) or not isinstance(contract.get("signature"), str):
        return None
    from vis_core.contracts.introspect import contract_function

    try:
        return contract_function(contract)
    except (SyntaxError, ValueError, TypeError, KeyError):
        return None


_UNMADE = object()

# Tools that move the session's working copy (vis_core/drafts): their result's ``cwd`` is
# where the rest of the block works, when this process can see it (the jail shows the new
# copy from the next block on, when the sandbox starts again there).
MOVING_TOOLS = frozenset({"draft_create", "draft_approve", "draft_discard"})


async def _then_move(call: Coroutine[Any, Any, Any]) -> Any:
    result = await call
    where = result.get("cwd") if isinstance(result, dict) else None
    if isinstance(where, str) and os.path.isdir(where):
        os.chdir(where)
    return result


class ToolProxy:
    """An awaitable stand-in for one host tool; calling it runs the tool on the host.

    Its ``__wrapped__`` (which ``inspect.signature`` and ``typing.get_type_hints`` follow) and
    ``__annotations__`` are made from the contract's signature when first read: a child
    starts with dozens of tools, and most blocks ask none of them for its signature."""

    def __init__(
        self, name: str, doc: str, contract: dict[str, Any] | None, request: Requester
    ) -> None:
        self._vis_name = name
        self._vis_request = request
        self._vis_target = {"name": name}
        self._vis_hidden = False
        self.__name__ = name.rsplit(".", 1)[-1]
        self.__qualname__ = name
        self.__doc__ = doc or None
        self.contract = contract

    @functools.cached_property
    def __wrapped__(self) -> Callable[..., Any]:
        return self._vis_stub()

    @functools.cached_property
    def __annotations__(self) -> dict[str, Any]:  # pyright: ignore[reportIncompatibleVariableOverride]
        return dict(self._vis_stub().__annotations__)

    def _vis_stub(self) -> Callable[..., Any]:
        """The described-only function of the contract (made once); AttributeError when the
        contract has no signature, as for a tool without one."""
        stub = self.__dict__.get("_vis_described", _UNMADE)
        if stub is _UNMADE:
            stub = self.__dict__["_vis_described"] = _described(self.contract)
        if stub is None:
            raise AttributeError(f"tool {self._vis_name} has no signature")
        return stub

    def __call__(self, *args: Any, **kwargs: Any) -> Coroutine[Any, Any, Any]:
        """The call as a coroutine (the request itself: no wrapper frame on the hot path)."""
        call = self._vis_request("call", self._vis_target, args, kwargs)
        if self._vis_name in MOVING_TOOLS:
            call = _then_move(call)
        return named(call, self._vis_name)  # never awaited, Python's words name the tool

    def __repr__(self) -> str:
        return f"<tool {self._vis_name}>"

    def __reduce__(self) -> tuple[Any, ...]:
        return (resolve_tool, (self._vis_name,))


class ToolNamespace:
    """A dotted group of tools (``git`` for ``git.status``); members are attributes."""

    def __init__(self, name: str) -> None:
        self._vis_name = name
        self.__name__ = name.rsplit(".", 1)[-1]

    def _vis_members(self) -> list[str]:
        """Public members; a hidden tool stays callable but is not listed."""
        return sorted(
            k
            for k, v in vars(self).items()
            if not k.startswith("_") and not getattr(v, "_vis_hidden", False)
        )

    def __repr__(self) -> str:
        return f"<tools {self._vis_name}: {', '.join(self._vis_members())}>"

    def __dir__(self) -> Iterable[str]:
        return self._vis_members()

    def __reduce__(self) -> tuple[Any, ...]:
        return (resolve_tool, (self._vis_name,))


class HandleProxy:
    """A host object that stays on the host; its exposed methods are async calls back to it."""

    def __init__(self, ref: dict[str, Any], request: Requester) -> None:
        self.__vis_handle_ref__ = {"id": ref["id"]}
        self._vis_type = str(ref.get("type", "handle"))
        self._vis_repr = str(ref.get("repr", ""))
        methods = tuple(str(m) for m in ref.get("methods", ()))
        self._vis_methods = methods
        for method in methods:
            setattr(self, method, self._bind(method, request))

    def _bind(self, method: str, request: Requester) -> Callable[..., Awaitable[Any]]:
        target = {"handle": self.__vis_handle_ref__["id"], "method": method}

        async def call(*args: Any, **kwargs: Any) -> Any:
            return await request("hcall", target, args, kwargs)

        call.__name__ = method
        call.__qualname__ = f"{self._vis_type}.{method}"
        return call

    def __repr__(self) -> str:
        return self._vis_repr or f"<{self._vis_type} handle {self.__vis_handle_ref__['id']}>"

    def __dir__(self) -> Iterable[str]:
        return list(self._vis_methods)

    def __reduce__(self) -> Any:
        raise TypeError(f"{self._vis_type} is a live host handle and cannot be saved")


#: name → proxy of the current tool list (kept by the child; used to unpickle aliases)
TOOLS: dict[str, ToolProxy | ToolNamespace] = {}


def resolve_tool(name: str) -> ToolProxy | ToolNamespace:
    """The current proxy for a tool or namespace name (used when a saved alias is restored)."""
    try:
        return TOOLS[name]
    except KeyError:
        raise LookupError(f"tool {name!r} is no longer available") from None


def build_proxies(entries: Iterable[dict[str, Any]], request: Requester) -> dict[str, Any]:
    """Root name → proxy for a tool list: dotted names become nested :class:`ToolNamespace`s."""
    TOOLS.clear()
    roots: dict[str, Any] = {}
    for entry in entries:
        name = str(entry["name"])
        proxy = ToolProxy(name, str(entry.get("doc") or ""), entry.get("contract"), request)
        proxy._vis_hidden = bool(entry.get("hidden"))
        parts = name.split(".")
        parent: Any = None
        for depth, part in enumerate(parts[:-1]):
            prefix = ".".join(parts[: depth + 1])
            node = TOOLS.get(prefix)
            if node is None:
                node = ToolNamespace(prefix)
                TOOLS[prefix] = node
                _attach(roots, parent, part, node)
            parent = node
        existing = TOOLS.get(name)
        if isinstance(existing, ToolNamespace):  # "git" and "git.status" both exist
            for key, member in vars(existing).items():
                if not key.startswith("_"):
                    setattr(proxy, key, member)
        TOOLS[name] = proxy
        _attach(roots, parent, parts[-1], proxy)
    return roots


def _attach(roots: dict[str, Any], parent: Any, key: str, node: Any) -> None:
    if parent is None:
        roots[key] = node
    else:
        setattr(parent, key, node)
