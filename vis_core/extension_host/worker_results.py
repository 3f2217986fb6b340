"""Tool results crossing from an extension worker to the host: records made in the worker.

The worker encodes a tool's value with :func:`vis_core.records.encode_result` where the
extension's module lives (properties and ``str`` computed there). A value of data only is
packed there too, once (:class:`~vis_core.ipc.values.Encoded`): the host passes those bytes
on to the sandbox as they are. What is not data (a function, an iterator, a handle) is lent
by reference, so its methods still run in the worker. The host decodes data and references
only: it never needs an extension's classes, so it never imports (runs) an extension's
module to read a result.
"""

from __future__ import annotations

from typing import Any

from vis_core.ipc import values as wire
from vis_core.ipc.messages import TargetKind
from vis_core.ipc.trusted import HOME, Lent, RemoteObject
from vis_core.ipc.values import Encoded
from vis_core.model.handles import HandleMethod, HostHandle

#: the object-call name under which the host asks a lent handle's method for an encoded value
ENCODED_CALL = "__vis_encoded_call__"
_AS_IS = frozenset({type(None), bool, int, str})  # the same value on the wire: no encoding


def encode_for_host(value: Any, owner: str | None) -> Any:
    """Worker side: ``value`` as wire data with records, packed (:class:`Encoded`) when it
    is data only; non-data values lent by reference (the wire data then goes pickled)."""
    if type(value) in _AS_IS:
        return value
    from vis_core.records import encode_result

    lent = False

    def lend(obj: Any) -> dict[str, Any]:
        nonlocal lent
        lent = True
        # a host object (a shell handle from vis.shell) goes home as itself
        if isinstance(obj, RemoteObject):
            return {"lent": obj}
        kind = type(obj)  # named, so an error on the host can say which value was not data
        return {"lent": Lent(obj), "type": f"{kind.__module__}.{kind.__qualname__}"}

    def handle_out(handle: HostHandle) -> dict[str, Any]:
        nonlocal lent
        lent = True
        kind = type(handle)
        try:
            text = repr(handle)[:200]
        except Exception:  # a broken __repr__ must not break the tool result
            text = ""
        return {
            "lent": Lent(handle),
            "type": kind.__name__,
            "methods": [str(m) for m in kind.__vis_methods__],
            "activities": {
                str(m): [meta.tag, meta.label, meta.show_start]
                for m, meta in kind.__vis_activities__.items()
            },
            "repr": text,
        }

    try:
        with wire.lending(lend):
            data = encode_result(value, owner=owner, handle_out=handle_out)
    except Exception as exc:  # the call fails, as a value the sandbox cannot take does
        raise TypeError(
            f"the result ({type(value).__name__}) cannot be returned to Python: {exc}"
        ) from exc
    if lent:
        return data
    try:
        return Encoded(wire.pack(data))
    except (TypeError, ValueError, OverflowError):  # text no message carries: the host says so
        return data


def decode_from_worker(data: Any, *, keep_encoded: bool = False) -> Any:
    """Host side: the value of wire data a worker encoded (records as ``Record`` objects);
    ``keep_encoded``: a value packed in the worker stays so (it goes to the sandbox as is)."""
    kind = type(data)
    if kind in _AS_IS or (keep_encoded and kind is Encoded):
        return data
    from vis_core.records import decode  # registers the record codec

    if kind is Encoded:
        return data.decode(handle_in=_handle_in)
    return decode(data, handle_in=_handle_in)


def _handle_in(ref: dict[str, Any]) -> Any:
    value = ref.get("lent")
    if not isinstance(value, RemoteObject):
        return value  # the host's own object
    if "methods" not in ref:  # a worker object (its calls go there)
        if isinstance(ref.get("type"), str):
            object.__setattr__(value, "_kind", ref["type"])
        return value
    activities = tuple(
        (str(name), HandleMethod(str(tag), str(label), bool(show)))
        for name, (tag, label, show) in dict(ref.get("activities") or {}).items()
    )
    methods = tuple(str(m) for m in ref.get("methods") or ())
    kind = _handle_class(str(ref.get("type") or "Handle"), methods, activities)
    return kind(value, str(ref.get("repr") or ""))


class WorkerHandle(HostHandle):
    """A handle an extension tool returned: it lives in the worker; each method the sandbox
    calls runs there, its value encoded there as a tool's is."""

    def __init__(self, remote: RemoteObject, text: str) -> None:
        setattr(self, HOME, remote)  # passed back to a tool, it arrives there as itself
        self._text = text

    @property
    def _remote(self) -> RemoteObject:
        return getattr(self, HOME)

    def __repr__(self) -> str:
        return self._text

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_") or name not in type(self).__vis_methods__:
            raise AttributeError(name)

        async def method(*args: Any, **kwargs: Any) -> Any:
            answer = await self._ask(ENCODED_CALL, (name, *args), kwargs)
            return decode_from_worker(answer)

        return method

    async def _ask(self, method: str, args: tuple, kwargs: dict) -> Any:
        """Call ``method`` of the lent object in the worker, awaited on the loop (cancelling
        the awaiting task abandons the call; the worker still finishes it)."""
        from vis_core.extension_host.worker_channel import Channel, ChannelClosed

        remote = self._remote
        channel = remote._caller
        assert isinstance(channel, Channel)
        try:
            _, answer = channel.request_async(
                TargetKind.OBJECT, method, args, kwargs, ref=remote._ref
            )
            return await answer
        except ChannelClosed:  # not the channel's words: the person sees the handle's
            raise LookupError(
                f"this {type(self).__name__} is gone: the extension worker that held it was "
                "restarted (/reload, or a cancelled call that would not stop); get a new one"
            ) from None

    async def render_activity(
        self, method: str, *, phase: str, args: Any, kwargs: Any, result: Any, error: Any
    ) -> Any:
        try:
            return await self._ask(
                "render_activity",
                (method,),
                {"phase": phase, "args": args, "kwargs": kwargs, "result": result, "error": error},
            )
        except LookupError:  # the handle is gone (its call says so): the default headline
            return None


_HANDLE_CLASSES: dict[tuple[Any, ...], type[WorkerHandle]] = {}


def _handle_class(
    name: str, methods: tuple[str, ...], activities: tuple[tuple[str, HandleMethod], ...]
) -> type[WorkerHandle]:
    """A ``WorkerHandle`` class named as the extension's, with its methods and Activities
    (the sandbox and the invoker read them from the class)."""
    key = (name, methods, activities)
    kind = _HANDLE_CLASSES.get(key)
    if kind is None:
        kind = type(
            name,
            (WorkerHandle,),
            {"__vis_methods__": methods, "__vis_activities__": dict(activities)},
        )
        _HANDLE_CLASSES[key] = kind
    return kind
