"""The host side of ``vis.tools``: an extension calls another tool of the bound session the way
the model would, refused when it could never return."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from vis_core.extension.context import CallContext, current_call
from vis_core.extension.errors import VisToolError
from vis_core.extension.tools_proxy import with_attributes
from vis_core.extension_host.gateway import bound_call, run_on_loop

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

    return with_attributes(
        decode(encode_result(value, owner=owner, handle_out=out), handle_in=back)
    )


def call_tool(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """Run the session tool ``name`` (``gh_runs``, ``spel.reserve``) in the bound session with
    JSON-compatible arguments; its result shaped as the model sees it."""
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
        args,
        kwargs,
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
