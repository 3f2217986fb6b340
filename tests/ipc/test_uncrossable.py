"""A value that cannot cross the sandbox boundary is named by its path in what was sent
(``args[1][2]``, ``result["conn"]``, ``result.shade``), as a typed contract's user reads it."""

from __future__ import annotations

import enum
import socket
from dataclasses import dataclass
from typing import Any, NamedTuple

import pytest

from vis_core.ipc import values as wire

LEAF = object()


@dataclass
class Paint:
    name: str
    shade: Any


class Pair(NamedTuple):
    left: int
    right: Any


class Odd(enum.Enum):
    ONE = (1, LEAF)


@pytest.mark.parametrize(
    ("value", "root", "path"),
    [
        ([0, 1, LEAF], "args[1]", "args[1][2]"),
        ({"ok": True, "conn": LEAF}, "result", 'result["conn"]'),
        ({"a": [{"b": (1, LEAF)}]}, "result", 'result["a"][0]["b"][1]'),
        ({1: "x", 2: LEAF}, "result", "result[2]"),  # a dict with other keys than strings
        ({LEAF: 1}, "result", "result{…}"),  # a key
        ({"x", LEAF}, "result", "result{…}"),  # a set's member
        (Paint("ink", [1, (2, LEAF)]), "result", "result.shade[1][1]"),
        (Pair(1, LEAF), "result", "result[1]"),
        ([Odd.ONE], "result", "result[0].value[1]"),
        ({'say "hi"': LEAF}, "kwargs", 'kwargs["say \\"hi\\""]'),
        (LEAF, "result", "result"),
    ],
)
def test_the_part_that_cannot_cross_is_named_by_its_path(value: Any, root: str, path: str) -> None:
    for encode in (wire.encode, wire.dumps):  # the fast path says it too
        with pytest.raises(TypeError) as failed:
            encode(value, root=root)
        assert str(failed.value).startswith(f"{path} is an object, which cannot cross the ")


def test_without_a_root_the_path_is_still_said() -> None:
    with socket.socket() as conn, pytest.raises(TypeError) as failed:
        wire.encode({"conn": conn})
    assert str(failed.value).startswith('the value at ["conn"] is a socket, which cannot cross')
    with pytest.raises(TypeError, match="^an object value cannot cross the sandbox boundary"):
        wire.encode(LEAF)


def test_the_first_of_two_failing_items_is_named() -> None:
    with pytest.raises(TypeError, match=r"^args\[0\]\[1\] is an object"):
        wire.encode([1, LEAF, LEAF], root="args[0]")
