"""The untrusted value codec (what crosses the sandbox boundary) and contract signatures."""

from __future__ import annotations

import enum
import inspect
import math
from dataclasses import dataclass
from typing import Any

import msgspec
import pytest

from vis_core.ipc import values as wire
from vis_core.ipc.values import register_codec, unregister_codec
from vis_core.model.handles import HostHandle
from vis_core.sandbox.proxies import ToolProxy


def roundtrip(value: Any) -> Any:
    return wire.loads(msgspec.msgpack.encode(wire.encode(value)))


@pytest.mark.parametrize(
    "value",
    [
        None,
        True,
        3,
        2.5,
        "text",
        [1, [2]],
        {"a": {"b": [1]}},
        (1, (2, 3)),
        b"\x00\xff",
        {1, 2},
        frozenset({"x"}),
        {1: "int key", (1, 2): "tuple key"},
        {"$": "dollar key"},
        [(), set(), b""],
        [(1 << 63) - 1, -(1 << 63), 1 << 63, -(1 << 63) - 1, 10**5000],
    ],
)
def test_values_survive_the_wire(value: Any) -> None:
    back = roundtrip(value)
    assert back == value and type(back) is type(value)


def test_nonfinite_floats() -> None:
    back = roundtrip([math.inf, -math.inf, math.nan])
    assert back[0] == math.inf and back[1] == -math.inf and math.isnan(back[2])


def test_unknown_objects_are_refused_with_a_clear_message() -> None:
    with pytest.raises(TypeError, match="cannot cross the sandbox boundary"):
        wire.encode(object())
    with pytest.raises(TypeError, match="unknown wire tag 'nope'"):
        wire.decode({"$": "nope", "v": 1})


@dataclass(frozen=True)
class Money:
    amount: int
    currency: str


def test_registered_codec_round_trips() -> None:
    register_codec(
        "test-money", Money, lambda m: [m.amount, m.currency], lambda v: Money(v[0], v[1])
    )
    try:
        data = wire.encode({"price": Money(5, "EUR")})
        assert data == {"price": {"$": "test-money", "v": [5, "EUR"]}}
        assert wire.decode(data) == {"price": Money(5, "EUR")}
    finally:
        unregister_codec("test-money")
    with pytest.raises(ValueError, match="reserved"):
        register_codec("tuple", Money, str, str)


class Color(enum.Enum):
    RED = "red"


class Level(enum.IntEnum):
    HIGH = 3


class Name(str):
    pass


@pytest.mark.parametrize(
    "value",
    [
        [],
        {},
        [1, "two", 3.5, True, None, {"a": [{"b": {}}]}],
        {"text": '"$": inside a string', "$x": 1, "nested": [[[]]]},
        [(1, 2)],
        {"deep": [{"t": (1,)}]},
        [math.nan],
        {"f": -math.inf},
        {"$": "a dollar key"},
        [{"$": "tuple", "v": [1]}],
        {1: "int key"},
        [Level.HIGH],
        [Color.RED, {"c": (Color.RED,)}],
        {"k": Name("a str subclass")},
        [Money(5, "EUR")],
        [b"bytes", {1, 2}],
        [1 << 70],
        [0.1, -0.0, 1e300],
    ],
)
def test_plain_data_fast_path_carries_what_encode_carries(value: Any) -> None:
    fast = wire.loads(wire.dumps(value))
    slow = wire.loads(msgspec.msgpack.encode(wire.encode(value)))
    assert repr(fast) == repr(slow)  # the same values and types, all the way down (nan too)


class Shade(str, enum.Enum):  # noqa: UP042 - the mixin, whose __str__ is not the value
    DARK = "dark"


class Loud(str):
    def __str__(self) -> str:
        return "its own text"


def test_a_subclass_of_a_plain_type_crosses_as_the_value_it_holds() -> None:
    """A str-Enum member, a str with its own ``__str__``: the value they hold (what ``==``
    compares, what msgspec packs), on either path, as a worker's value crosses too."""
    value = [Shade.DARK, Loud("held"), Level.HIGH]
    for data in (wire.dumps(value), msgspec.msgpack.encode(wire.encode(value))):
        crossed = wire.loads(data)
        assert crossed == ["dark", "held", 3] and [type(v) for v in crossed] == [str, str, int]


def test_an_enum_member_crosses_as_its_value() -> None:
    """A plain Enum member (no str or int to cross as) failed: "a Color value cannot cross
    the sandbox boundary". It crosses as its value now, as a str-Enum's does."""
    for data in (wire.dumps([Color.RED]), msgspec.msgpack.encode(wire.encode([Color.RED]))):
        assert wire.loads(data) == ["red"]


def test_fast_path_refuses_what_encode_refuses() -> None:
    for value in ([object()], {"o": object()}):
        with pytest.raises(TypeError, match="cannot cross the sandbox boundary"):
            wire.dumps(value)


class Proc(HostHandle):
    __vis_methods__ = ("wait",)


def test_handles_cross_as_references() -> None:
    table: dict[str, Any] = {}
    proc = Proc()

    def out(obj: Any) -> dict[str, Any]:
        table["h1"] = obj
        return {"id": "h1", "methods": list(obj.__vis_methods__)}

    data = wire.encode([proc], handle_out=out)
    assert data == [{"$": "handle", "v": {"id": "h1", "methods": ["wait"]}}]
    assert wire.decode(data, handle_in=lambda ref: table[ref["id"]]) == [proc]
    with pytest.raises(TypeError, match="host handle"):
        wire.encode(proc)


def test_tool_proxy_signature_from_contract_text() -> None:
    async def request(*_: Any) -> None:
        return None

    contract = {"name": "greet", "signature": "(name: str, /, *, loud: bool = False) -> 'R'"}
    sig = inspect.signature(ToolProxy("greet", "", contract, request))
    assert list(sig.parameters) == ["name", "loud"]
    assert sig.parameters["loud"].default is False
    assert sig.parameters["loud"].kind is inspect.Parameter.KEYWORD_ONLY
    for unusable in (None, {"name": "greet", "signature": "not python"}):
        proxy = ToolProxy("greet", "", unusable, request)
        assert list(inspect.signature(proxy).parameters) == ["args", "kwargs"]
