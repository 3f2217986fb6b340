"""The host side of ``vis.tools``: an extension calls another tool of the bound session the way
the model would, refused when it could never return."""

from __future__ import annotations

from typing import Any

from vis_core.extension.context import current_call
from vis_core.extension.errors import VisToolError
from vis_core.extension.runtime import OUTSIDE
from vis_core.extension.tools_proxy import with_attributes


def _shaped(value: Any, owner: str) -> Any:
    """The result as the model sees it: records for typed objects, attribute dicts for JSON."""
    from vis_core.ipc.values import decode, encode_result

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


async def call_tool(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """Run the session tool ``name`` (``gh_runs``, ``spel.reserve``) in the bound session with
    JSON-compatible arguments, on the host's loop; its result shaped as the model sees it."""
    call = current_call()
    invoker = None if call is None else call.activities
    if call is None or invoker is None:  # no session: the runtime outside Vis says so
        return OUTSIDE.call_tool(name, args, kwargs)
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
    try:
        result = await invoker.call(
            name,
            args,
            kwargs,
            callers=waiting,
            parent_id=call.activity_id,
        )
    except VisToolError:
        raise
    except Exception as exc:
        text = str(exc)
        kind = type(exc).__name__
        raise VisToolError(f"{kind}: {text}" if text else kind, kind) from exc
    return _shaped(result, tool.owner)
