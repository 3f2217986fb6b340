"""The value codec, trusted policy: between the host and an extension worker, data by value
(pickled), live objects by reference.

Both sides are trusted Vis processes, so data travels pickled: Vis's own types arrive as
themselves. The host never loads an extension's module, so what an extension's code answers
travels as data the host can read: a tool's value as records made in the worker
(:func:`encode_for_host`), an exception of the extension's own class as its name and text
(:class:`ForeignError`), any other object of its own classes (a command's ``data``, a ``ctx``
value, a ``vis.tools`` argument) as the record a tool result would be (the ``record`` tag of
:mod:`vis_core.ipc.values`). What is not data (a function, a live view, a session handle, an
iterator) stays where it lives: it is exported under a number and the other side gets a
:class:`RemoteObject` whose calls come back over the channel.
"""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import enum
import importlib
import io
import itertools
import pickle
import sys
import threading
import types
import uuid
from collections.abc import Awaitable, Callable, Iterable
from pathlib import PurePath
from typing import Any, Protocol

from vis_core.ipc import values
from vis_core.ipc.kinds import ChannelClosed
from vis_core.ipc.values import Encoded
from vis_core.model.handles import HandleMethod, HostHandle

RECORD = values.RECORD

_EXACT_DATA = frozenset(
    {
        Encoded,  # a tool's result packed for the sandbox
        type(None),
        bool,
        int,
        float,
        complex,
        str,
        bytes,
        bytearray,
        range,
        slice,
        type(Ellipsis),
    }
)
_DATA_BASES = (
    list,
    tuple,
    dict,
    set,
    frozenset,
    str,
    int,
    float,
    bytes,
    type,
    enum.Enum,
    BaseException,
    PurePath,
    datetime.date,
    datetime.time,
    datetime.timedelta,
    decimal.Decimal,
    uuid.UUID,
)
# modules whose plain objects are data (an extension's own classes, the shared model types)
_DATA_MODULES = ("vis_ext_", "vis_extensions", "vis_core.model", "vis_core.records")
_CODE_MODULES = ("vis_ext_", "vis_extensions")  # functions of these run on their own side


class Caller(Protocol):
    """The channel side a :class:`RemoteObject` calls through."""

    def call_object(self, ref: int, method: str, args: tuple, kwargs: dict) -> Any: ...

    def call_object_async(self, ref: int, method: str, args: tuple, kwargs: dict) -> Awaitable[Any]:
        """The answer of the call, to await on the loop (cancelling it abandons the call)."""
        ...

    def released(self, ref: int) -> None:
        """A proxy of the other side's object ``ref`` was dropped here."""


def is_data(value: object) -> bool:
    """Whether ``value`` crosses by value (pickled) rather than as a reference."""
    kind = type(value)
    if kind in _EXACT_DATA:
        return True
    if isinstance(value, _DATA_BASES):
        return True
    if dataclasses.is_dataclass(value) or kind is _ErrorCarrier:
        return True
    if isinstance(value, types.FunctionType | types.BuiltinFunctionType):
        # a module-level function of Vis or the standard library travels by name (pickle's
        # rebuilders are such functions); an extension's own function, a lambda or a local
        # function runs where it lives
        qualname = getattr(value, "__qualname__", "") or ""
        module = getattr(value, "__module__", "") or ""
        return "<" not in qualname and not module.startswith(_CODE_MODULES)
    if callable(value):  # bound methods, callable objects: they run where they live
        return False
    module = getattr(kind, "__module__", "") or ""
    return module.startswith(_DATA_MODULES)


#: the attribute of a host object that stands for an object of the other side (a
#: ``WorkerHandle``): its ``RemoteObject``, sent back as that object itself
HOME = "_vis_home"


class Lent:
    """Wraps a value that crosses as a reference even when it is data (an extension's handle:
    its methods must run where its module lives); ``kind``: its class as the other side's
    :class:`RemoteObject` names it."""

    __slots__ = ("kind", "value")

    def __init__(self, value: Any, kind: str | None = None) -> None:
        self.value = value
        self.kind = kind


class Exports:
    """The objects this side lent to the other, by number, each held while the other side has
    a proxy of it: every send counts one proxy, every release frame drops one."""

    def __init__(self) -> None:
        self._objects: dict[int, Any] = {}
        self._numbers: dict[int, int] = {}
        self._proxies: dict[int, int] = {}  # number -> proxies the other side holds
        self._next = itertools.count(1)
        self._lock = threading.Lock()

    def export(self, value: Any) -> int:
        with self._lock:
            number = self._numbers.get(id(value))
            if number is None or self._objects.get(number) is not value:
                number = next(self._next)
                self._objects[number] = value
                self._numbers[id(value)] = number
            self._proxies[number] = self._proxies.get(number, 0) + 1
            return number

    def get(self, number: int) -> Any:
        with self._lock:
            if number not in self._objects:
                raise _gone(number)
            return self._objects[number]

    def hold(self, number: int) -> None:
        """Keep object ``number`` while a call on it runs (one more hold, dropped by release);
        ``LookupError`` when it is gone."""
        with self._lock:
            if number not in self._objects:
                raise _gone(number)
            self._proxies[number] = self._proxies.get(number, 0) + 1

    def release(self, numbers: Iterable[int]) -> None:
        """The other side dropped one proxy of each of ``numbers``; unheld objects are let go."""
        with self._lock:
            for number in numbers:
                left = self._proxies.get(number, 0) - 1
                if left > 0:
                    self._proxies[number] = left
                    continue
                self._proxies.pop(number, None)
                value = self._objects.pop(number, None)
                if value is not None and self._numbers.get(id(value)) == number:
                    del self._numbers[id(value)]

    def __len__(self) -> int:
        with self._lock:
            return len(self._objects)

    def clear(self) -> None:
        with self._lock:
            self._objects.clear()
            self._numbers.clear()
            self._proxies.clear()


def _gone(number: int) -> LookupError:
    return LookupError(f"object #{number} is gone (its extension worker was restarted)")


def _forward(method: str, convert: Callable[[Any], Any] | None = None) -> Any:
    """A :class:`RemoteObject` method that runs ``method`` on the other side with the arguments
    it is given; ``convert`` makes the answer the type the protocol asks (``len()``: an int)."""

    def forwarded(self: RemoteObject, *args: Any) -> Any:
        value = self._run(method, *args)
        return value if convert is None else convert(value)

    forwarded.__name__ = method
    return forwarded


class RemoteObject:
    """An object that lives on the other side; attribute reads, calls and the container and
    context-manager protocols run there."""

    __slots__ = ("_caller", "_kind", "_ref")

    def __init__(self, caller: Caller, ref: int, kind: str | None = None) -> None:
        object.__setattr__(self, "_caller", caller)
        object.__setattr__(self, "_ref", ref)
        object.__setattr__(self, "_kind", kind)  # the object's class, as the other side named it

    @property
    def __vis_type_name__(self) -> str | None:
        """The class of the object on the other side (``module.Class``), when it was named."""
        return self._kind

    def _run(self, method: str, *args: Any, **kwargs: Any) -> Any:
        return self._caller.call_object(self._ref, method, args, kwargs)

    def __del__(self) -> None:
        try:
            self._caller.released(self._ref)
        except Exception:
            pass

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return self._run("__getattr__", name)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._run("__call__", *args, **kwargs)

    def __next__(self) -> Any:
        try:
            return self._run("__next__")
        except IteratorEnded:
            raise StopIteration from None

    def __exit__(self, kind: Any, error: Any, _traceback: Any) -> Any:
        return self._run("__exit__", kind, error, None)

    __getitem__ = _forward("__getitem__")
    __setitem__ = _forward("__setitem__")
    __delitem__ = _forward("__delitem__")
    __contains__ = _forward("__contains__", bool)
    __len__ = _forward("__len__", int)
    __setattr__ = _forward("__setattr__")
    __bool__ = _forward("__bool__", bool)
    __iter__ = _forward("__iter__")
    __enter__ = _forward("__enter__")
    __repr__ = _forward("__repr__", str)
    __str__ = _forward("__str__", str)


# what a RemoteObject's call of these means: the builtin, not a method looked up by name
_BUILTINS: dict[str, Any] = {
    "__getattr__": getattr,
    "__setattr__": setattr,
    "__bool__": bool,
    "__len__": len,
    "__iter__": iter,
    "__next__": next,
    "__repr__": repr,
    "__str__": str,
    "__contains__": lambda value, key: key in value,
}


class IteratorEnded(Exception):
    """A lent iterator's end on its way to the proxy, whose ``next()`` raises StopIteration
    again: StopIteration itself cannot end a Future (asyncio refuses it, and its waiter
    waits forever)."""


def run_method(value: Any, method: str, args: tuple, kwargs: dict) -> Any:
    """What a :class:`RemoteObject` call means on the side that owns ``value``; a
    StopIteration it raises comes out as :class:`IteratorEnded`."""
    try:
        if method == "__call__":
            return value(*args, **kwargs)
        builtin = _BUILTINS.get(method)
        if builtin is not None:
            return builtin(value, *args)
        return getattr(value, method)(*args, **kwargs)
    except StopIteration as end:
        raise IteratorEnded(*end.args) from None


class _Pickler(pickle.Pickler):
    def __init__(self, file: io.BytesIO, exports: Exports, caller: Caller) -> None:
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self._exports = exports
        self._caller = caller
        self.exported: list[int] = []  # numbers lent by this pickle, to take back if unsent
        self.referenced = False  # whether it holds a reference (read back by _Unpickler)

    def reducer_override(self, obj: Any) -> Any:
        kind = type(obj)
        if kind is type:
            if _named_elsewhere(obj):
                return _class_by_name, _where(obj)
        elif kind.__module__.startswith(_FOREIGN_MODULES) and not isinstance(obj, BaseException):
            return _as_record(obj)
        return NotImplemented

    def persistent_id(self, obj: Any) -> Any:
        kind = None  # the lent object's class, named for the other side's errors
        if type(obj) is Lent:
            obj, kind = obj.value, obj.kind
        elif type(obj) is RemoteObject:
            if obj._caller is self._caller:
                self.referenced = True
                return ("theirs", obj._ref, None)  # back home: the other side owns it
        elif is_data(obj):
            return None
        else:  # a host handle of an object of the other side (WorkerHandle) goes home too
            home = getattr(obj, "__dict__", {}).get(HOME)
            if type(home) is RemoteObject and home._caller is self._caller:
                self.referenced = True
                return ("theirs", home._ref, None)
        number = self._exports.export(obj)
        self.exported.append(number)
        self.referenced = True
        if kind is None:
            kind = f"{type(obj).__module__}.{type(obj).__qualname__}"
        return ("mine", number, kind)


def _as_record(obj: Any) -> Any:
    """An object of an extension's own class, for a side that does not load its module (the
    host): the record its tool result would be (fields, properties, ``str``); a subclass of a
    plain type (a ``str``-Enum, an ``IntEnum``, a ``NamedTuple``...) as that type, and any other
    Enum member as its value, as the sandbox wire sends them."""
    base = values.plain_base(obj)
    if base is not None:
        return base, (values.plain_value(obj, base),)
    if isinstance(obj, enum.Enum):
        return _itself, (obj.value,)
    codec = values.codec_for(obj)
    if codec is None or codec.tag != RECORD:
        return NotImplemented
    return values.decode, (values.encode(obj),)  # rebuilt there as a Record


def _itself(value: Any) -> Any:
    return value


def _named_elsewhere(kind: type) -> bool:
    """Whether ``kind``'s ``__module__`` does not hold it (``VisToolError`` says builtins)."""
    module = sys.modules.get(kind.__module__)
    return getattr(module, kind.__qualname__, None) is not kind


def _where(kind: type) -> tuple[str, str]:
    for name, module in list(sys.modules.items()):
        if getattr(module, kind.__qualname__, None) is kind:
            return name, kind.__qualname__
    raise pickle.PicklingError(f"class {kind.__qualname__} is not found in any module")


def _class_by_name(module: str, qualname: str) -> type:
    return getattr(importlib.import_module(module), qualname)


class _Unpickler(pickle.Unpickler):
    def __init__(self, file: io.BytesIO, exports: Exports, caller: Caller) -> None:
        super().__init__(file)
        self._exports = exports
        self._caller = caller

    def persistent_load(self, pid: Any) -> Any:
        whose, number, kind = pid
        if whose == "theirs":  # the sender's "theirs" is ours
            return self._exports.get(int(number))
        return RemoteObject(self._caller, int(number), kind if isinstance(kind, str) else None)


def dumps(value: Any, exports: Exports, caller: Caller) -> bytes:
    """``value`` pickled; what cannot be pickled as a whole crosses as one reference."""
    if type(value) in _SCALARS:
        return pickle.dumps(value, protocol=_PROTOCOL)
    return _dump(value, exports, caller)[0]


def scalar_arguments(args: tuple, kwargs: dict) -> bool:
    """Whether a call's arguments are scalars by keyword names: nothing to walk through."""
    for value in args:
        if type(value) not in _SCALARS:
            return False
    for key, value in kwargs.items():
        if type(value) not in _SCALARS or type(key) is not str:
            return False
    return True


def dumps_arguments(args: tuple, kwargs: dict, exports: Exports, caller: Caller) -> bytes:
    """A call's ``(args, kwargs)`` pickled (:func:`dumps`), scalars with no walk through them."""
    if scalar_arguments(args, kwargs):
        return pickle.dumps((args, kwargs), protocol=_PROTOCOL)
    return dumps((args, kwargs), exports, caller)


# A pickle that ``pickle.loads`` reads back alone (no reference in it) crosses as it is: it
# starts with the PROTO opcode. One that holds references starts with ``P`` (read back by an
# unpickler that resolves them); a value that crosses as one reference, with ``R``.
_PROTOCOL = pickle.HIGHEST_PROTOCOL
_PROTO = pickle.PROTO[0]
_REFERENCING = b"P"
_WHOLE_REF = b"R"
_SCALARS = frozenset({type(None), bool, int, float, str, bytes})
_PLAIN_DEPTH = 3  # containers looked through for plain data before pickling it the long way


def _plain(value: Any, depth: int = _PLAIN_DEPTH) -> bool:
    """Whether ``value`` is scalars in tuples, lists and dicts, which pickle as themselves with
    no reference and no reducer of ours (most calls' arguments and answers): ``pickle.dumps``
    alone makes the same pickle, without a call back into Python for every object in it."""
    kind = type(value)
    if kind in _SCALARS:
        return True
    if not depth:
        return False
    if kind is tuple or kind is list:
        for item in value:
            if type(item) not in _SCALARS and not _plain(item, depth - 1):
                return False
        return True
    if kind is dict:
        for key, item in value.items():
            if type(key) not in _SCALARS:
                return False
            if type(item) not in _SCALARS and not _plain(item, depth - 1):
                return False
        return True
    return False


def _dump(value: Any, exports: Exports, caller: Caller) -> tuple[bytes, list[int]]:
    """``value`` pickled, and the numbers of the objects it lends (to take back if unsent)."""
    if _plain(value):
        return pickle.dumps(value, protocol=_PROTOCOL), []
    buffer = io.BytesIO()
    pickler = _Pickler(buffer, exports, caller)
    try:
        pickler.dump(value)
    except (pickle.PicklingError, TypeError, AttributeError, RecursionError):
        exports.release(pickler.exported)
        number = exports.export(value)
        return _WHOLE_REF + pickle.dumps(_Ref(number), protocol=_PROTOCOL), [number]
    data = buffer.getvalue()
    return (_REFERENCING + data if pickler.referenced else data), pickler.exported


@dataclasses.dataclass(frozen=True)
class _Ref:
    """A value that crosses as a reference to an exported object."""

    number: int


def loads(data: bytes, exports: Exports, caller: Caller) -> Any:
    if data[0] == _PROTO:
        return pickle.loads(data)
    kind, body = data[:1], memoryview(data)[1:]
    if kind == _WHOLE_REF:
        ref = pickle.loads(body)
        return RemoteObject(caller, ref.number)
    return _Unpickler(io.BytesIO(body), exports, caller).load()


def dumps_error(exc: BaseException, exports: Exports, caller: Caller) -> bytes:
    """An exception for the other side: itself when it pickles and loads, else its text.

    ``SystemExit``, ``KeyboardInterrupt`` and the like end only the call: they cross as a
    ``RuntimeError`` that names them, never as themselves; so does ``StopIteration``, which
    no Future can hold (a lent iterator's end crosses as :class:`IteratorEnded`)."""
    if not isinstance(exc, Exception) or isinstance(exc, StopIteration):
        exc = _as_runtime_error(exc)
    if type(exc).__module__.startswith(_FOREIGN_MODULES):
        exc = foreign_error(type(exc).__name__, type(exc).__module__, _text(exc))
    for candidate in (exc, _ErrorCarrier(exc)):
        try:  # the exception itself; else rebuilt from args and fields (a custom __init__)
            data, lent = _dump(candidate, exports, caller)
        except Exception:  # an exception that cannot cross becomes a RuntimeError of its text
            continue
        if data[:1] != _WHOLE_REF and _loads_back(data):
            return data
        exports.release(lent)
    return dumps(_as_runtime_error(exc), exports, caller)


# modules the host never loads (an extension's own entry file): their exceptions cross as
# their class name and text
_FOREIGN_MODULES = ("vis_ext_",)
_FOREIGN_CLASSES: dict[tuple[str, str], type[ForeignError]] = {}


class ForeignError(Exception):
    """An exception of a class the receiving side does not load (an extension's own), rebuilt
    as a class of the same name and module with the same text."""

    def __reduce__(self) -> Any:
        kind = type(self)
        return (foreign_error, (kind.__name__, kind.__module__, str(self)))


def foreign_error(name: str, module: str, text: str) -> ForeignError:
    """An exception named ``name`` of ``module`` saying ``text`` (see :class:`ForeignError`)."""
    kind = _FOREIGN_CLASSES.get((module, name))
    if kind is None:
        kind = type(name, (ForeignError,), {"__module__": module, "__qualname__": name})
        _FOREIGN_CLASSES[(module, name)] = kind
    return kind(text)


def _text(exc: BaseException) -> str:
    """``str(exc)``, or what stands for it when the class's ``__str__`` raises (the call must
    still be answered)."""
    try:
        return str(exc)
    except Exception as broken:
        return f"(its text could not be made: {type(broken).__name__} in __str__)"


def _as_runtime_error(exc: BaseException) -> RuntimeError:
    """``exc`` as a ``RuntimeError`` of its class name and text (what always crosses)."""
    text = _text(exc)
    name = type(exc).__name__
    return RuntimeError(f"{name}: {text}" if text else name)


class _ErrorCarrier:
    """Pickles an exception as its class, ``args`` and fields, without calling ``__init__``."""

    def __init__(self, error: BaseException) -> None:
        self.error = error

    def __reduce__(self) -> Any:
        error = self.error
        return (rebuild_error, (type(error), error.args, dict(vars(error))))


def rebuild_error(kind: type[BaseException], args: tuple, fields: dict[str, Any]) -> BaseException:
    error = kind.__new__(kind, *args)
    error.args = args
    error.__dict__.update(fields)
    return error


class _Probe(pickle.Unpickler):
    def persistent_load(self, pid: Any) -> Any:
        return None


def _loads_back(data: bytes) -> bool:
    """Whether the pickled exception ``data`` can be rebuilt (a custom ``__init__`` may not)."""
    body = memoryview(data)[data[0] != _PROTO :]
    try:
        _Probe(io.BytesIO(body)).load()
    except Exception:
        return False
    return True


# -- tool results from a worker ------------------------------------------------------------
# The worker encodes a tool's value where the extension's module lives (records: properties
# and ``str`` computed there). A value of data only is packed there too, once (``Encoded``): the
# host passes those bytes on to the sandbox as they are. What is not data (a function, an
# iterator, a handle) is lent by reference, so its methods still run in the worker. The host
# decodes data and references only: it never imports (runs) an extension's module to read one.


#: the object-call name under which the host asks a lent handle's method for an encoded value
ENCODED_CALL = "__vis_encoded_call__"
_AS_IS = frozenset({type(None), bool, int, str})  # the same value on the wire: no encoding


def encode_for_host(value: Any, owner: str | None) -> Any:
    """Worker side: ``value`` as wire data with records, packed (:class:`Encoded`) when it
    is data only; non-data values lent by reference (the wire data then goes pickled)."""
    if type(value) in _AS_IS:
        return value
    lent = False

    def lend(obj: Any) -> dict[str, Any]:
        nonlocal lent
        lent = True
        # a host object (a shell handle from vis.shell) goes home as itself
        if isinstance(obj, RemoteObject):
            return {"lent": obj}
        kind = type(obj)  # named, so an error on the host can say which value was not data
        return {"lent": Lent(obj, f"{kind.__module__}.{kind.__qualname__}")}

    def handle_out(handle: HostHandle) -> dict[str, Any]:
        nonlocal lent
        lent = True
        activities = type(handle).__vis_activities__.items()
        return {
            **values.describe_handle(handle),
            "lent": Lent(handle),
            "activities": {str(m): [a.tag, a.label, a.show_start] for m, a in activities},
        }

    try:
        with values.lending(lend):
            data = values.encode_result(value, owner=owner, handle_out=handle_out)
    except Exception as exc:  # the call fails, as a value the sandbox cannot take does
        raise TypeError(
            f"the result ({type(value).__name__}) cannot be returned to Python: {exc}"
        ) from exc
    if lent:
        return data
    try:
        return Encoded(values.pack(data))
    except (TypeError, ValueError, OverflowError):  # text no message carries: the host says so
        return data


def encode_answer_for_host(value: Any, owner: str | None) -> Any:
    """Worker side: a tool's whole answer as :func:`encode_for_host` makes it, a scalar packed
    too: the host passes it to the sandbox as it is (no unpickling and packing there)."""
    if type(value) in _AS_IS:
        try:
            return Encoded(values.pack(value))
        except (TypeError, ValueError, OverflowError):  # (an int past 64 bits, a lone surrogate)
            return value
    return encode_for_host(value, owner)


def decode_from_worker(data: Any, *, keep_encoded: bool = False) -> Any:
    """Host side: the value of wire data a worker encoded (records as ``Record`` objects);
    ``keep_encoded``: a value packed in the worker stays so (it goes to the sandbox as is)."""
    kind = type(data)
    if kind in _AS_IS or (keep_encoded and kind is Encoded):
        return data
    if kind is Encoded:
        return data.decode(handle_in=_handle_in)
    return values.decode(data, handle_in=_handle_in)


def _handle_in(ref: dict[str, Any]) -> Any:
    value = ref.get("lent")
    if not isinstance(value, RemoteObject):
        return value  # the host's own object
    if "methods" not in ref:  # a worker object (its calls go there), named by its Lent
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
            return decode_from_worker(await self._ask(ENCODED_CALL, (name, *args), kwargs))

        return method

    async def _ask(self, method: str, args: tuple, kwargs: dict) -> Any:
        """Call ``method`` of the lent object in the worker, awaited on the loop (nothing on
        the loop waits on the worker; cancelling the awaiting task abandons the call)."""
        remote = self._remote
        try:
            return await remote._caller.call_object_async(remote._ref, method, args, kwargs)
        except ChannelClosed:  # not the channel's words: the person sees the handle's
            raise LookupError(
                f"this {type(self).__name__} is gone: the extension worker that held it was "
                "restarted (/reload, or a cancelled call that would not stop); get a new one"
            ) from None

    async def render_activity(
        self, method: str, *, phase: str, args: Any, kwargs: Any, result: Any, error: Any
    ) -> Any:
        what = {"phase": phase, "args": args, "kwargs": kwargs, "result": result, "error": error}
        try:
            return await self._ask("render_activity", (method,), what)
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
