"""``vis.tools``: an extension calls another tool of the bound session the way the model would."""

from __future__ import annotations

import dataclasses
import threading
from collections import Counter
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from vis_core.extension.context import CallContext, current_call
from vis_core.extension_host.gateway import bound_call, run_on_loop
from vis_core.sandbox.proxies import VisToolError

__all__ = ["AttrDict", "Tools", "VisToolError", "call_tool", "tools"]

# -- who waits on what ----------------------------------------------------------------------
# An extension's calls are serialized by its lock. A call that holds the lock and waits on Vis
# (``vis.tools``, a turn through ``vis.run``) must not be answered by a call back into the same
# extension: that call would wait on the lock forever. ``callers`` (of a call's context) names
# the extensions waiting on that call; ``_awaited`` names those waiting on a session's turn.

_awaited: dict[str, Counter[str]] = {}
_awaited_lock = threading.Lock()


@contextmanager
def awaiting_turn(session_id: str, owners: Iterable[str]) -> Iterator[None]:
    """Mark ``owners`` as waiting on the running turn of ``session_id`` for the body."""
    names = [name for name in dict.fromkeys(owners) if name and name != "vis"]
    with _awaited_lock:
        _awaited.setdefault(session_id, Counter()).update(names)
    try:
        yield
    finally:
        with _awaited_lock:
            waiting = _awaited.get(session_id)
            if waiting is not None:
                waiting.subtract(names)
                if not +waiting:
                    del _awaited[session_id]


def awaited_by(session_id: str | None) -> frozenset[str]:
    """The extensions whose calls wait on a turn of ``session_id`` (through ``vis.run``)."""
    if session_id is None:
        return frozenset()
    with _awaited_lock:
        return frozenset(name for name, n in _awaited.get(session_id, Counter()).items() if n > 0)


def waiting_owners(call: CallContext | None = None) -> tuple[str, ...]:
    """The extensions that wait on ``call`` (default: the running call) to return."""
    call = current_call() if call is None else call
    if call is None:
        return ()
    return call.callers


def refuse_waiting(owner: str, session_id: str | None, name: str) -> None:
    """Refuse a call of tool ``name`` of ``owner`` in ``session_id`` while ``owner`` waits on
    that session's turn; raise ``RuntimeError`` saying why."""
    if owner in awaited_by(session_id):
        raise RuntimeError(
            f"{name} was refused: its extension {owner!r} waits for this session's turn to end "
            "(it started the turn with vis.run or Session.run), so a call back into it would "
            "never return. Answer without this tool"
        )


class AttrDict(dict[str, Any]):
    """A JSON object from a tool result: a dict that also allows ``page.meta.total``."""

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(
                f"no field {name!r}; the available fields are {', '.join(map(str, self)) or 'none'}"
            ) from None


def _attrs(value: Any) -> Any:
    if type(value) is dict:
        return AttrDict({k: _attrs(v) for k, v in value.items()})
    if type(value) is list:
        return [_attrs(item) for item in value]
    return value


def _argument(value: Any) -> Any:
    """JSON-compatible data; a dataclass is sent as a dict of its public fields."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            f.name: _argument(getattr(value, f.name))
            for f in dataclasses.fields(value)
            if not f.name.startswith("_")
        }
    if isinstance(value, dict):
        return {k: _argument(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_argument(v) for v in value]
    return value


def _shaped(value: Any, owner: str) -> Any:
    """The result as the model sees it: records for typed objects, attribute dicts for JSON."""
    from vis_core.records import decode, encode_result

    handles: dict[str, Any] = {}

    def out(obj: Any) -> dict[str, Any]:
        key = f"h{len(handles) + 1}"
        handles[key] = obj
        return {"id": key}

    def back(ref: dict[str, Any]) -> Any:
        return handles[str(ref["id"])]

    return _attrs(decode(encode_result(value, owner=owner, handle_out=out), handle_in=back))


def call_tool(name: str, *args: Any, **kwargs: Any) -> Any:
    """Run the session tool ``name`` (``gh_runs``, ``spel.reserve``) in the bound session."""
    call = bound_call()
    invoker = None if call is None else call.activities
    if call is None or invoker is None:
        raise RuntimeError(
            f"vis.tools.{name} works only while a Vis session runs your extension; outside a "
            "session (for example in unit tests), import and call the other package directly"
        )
    registry = invoker.registry()
    tool = registry.get(name)
    if tool is None:
        similar = registry.similar(name, n=5)
        hint = f"; similar active tools: {', '.join(similar)}" if similar else ""
        raise VisToolError(
            f"NameError: no active tool named {name!r} in this session{hint}", "NameError"
        )
    waiting = (*call.callers, call.owner)
    if tool.owner == call.owner:
        raise VisToolError(
            f"vis.tools refused {name}: it belongs to your own extension {call.owner!r}, and a "
            "call back into it would never return; call your own function directly instead"
        )
    if tool.owner in waiting:
        raise VisToolError(
            f"vis.tools refused {name}: its extension {tool.owner!r} waits on this call, so the "
            "call would never return"
        )
    coro = invoker.call(
        name,
        tuple(_argument(a) for a in args),
        {k: _argument(v) for k, v in kwargs.items()},
        callers=waiting,
        parent_id=call.activity_id,
    )
    try:
        result = run_on_loop(call.loop, coro)
    except VisToolError:
        raise
    except Exception as exc:
        text = str(exc)
        kind = type(exc).__name__
        raise VisToolError(f"{kind}: {text}" if text else kind, kind) from exc
    return _shaped(result, tool.owner)


class ToolPath:
    """``vis.tools.spel`` or ``vis.tools.spel.reserve``: call it, or go one name deeper."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, name: str) -> ToolPath:
        if name.startswith("__"):
            raise AttributeError(name)
        return ToolPath(f"{self._name}.{name}")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return call_tool(self._name, *args, **kwargs)

    def __repr__(self) -> str:
        return f"<vis.tools.{self._name}>"


class Tools:
    """``vis.tools``: the tools of the bound session, named as the model names them."""

    def __getattr__(self, name: str) -> ToolPath:
        if name.startswith("__"):
            raise AttributeError(name)
        return ToolPath(name)

    def __getitem__(self, name: str) -> ToolPath:
        if not isinstance(name, str) or not name.strip():
            raise KeyError(f"vis.tools[...] takes a tool name such as 'spel.reserve', got {name!r}")
        return ToolPath(name.strip())

    def __repr__(self) -> str:
        return "<vis.tools>"


tools = Tools()
