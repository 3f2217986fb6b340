"""A value a worker already encoded for the sandbox; without msgspec, for the start path."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class Encoded:
    """A value already encoded by :func:`~vis_core.ipc.values.dumps` where it was made (a tool's
    result, in its extension worker, with its records): the host passes it on to the sandbox as
    it is, and decodes it (:meth:`decode`) only for a reader of its own."""

    __slots__ = ("data",)

    def __init__(self, data: bytes) -> None:
        self.data = data

    def __reduce__(self) -> tuple[Any, ...]:
        return (Encoded, (self.data,))

    def decode(self, *, handle_in: Callable[[dict[str, Any]], Any] | None = None) -> Any:
        """The value (records as ``Record`` objects, once their codec is registered)."""
        from vis_core.ipc.values import loads

        return loads(self.data, handle_in=handle_in)


#: the value of a call whose answer its extension worker sent to the sandbox child itself (on
#: their direct channel): no value packs to no bytes
SENT = Encoded(b"")


def was_sent(value: object) -> bool:
    """Whether ``value`` is :data:`SENT`: the sandbox child has the answer already."""
    return type(value) is Encoded and not value.data
