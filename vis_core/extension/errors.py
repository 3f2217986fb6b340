"""Errors the SDK raises for host calls: ``GatewayError`` (403), ``VisToolError`` and the text
outside Vis; and the refusal of a declared value that names no member of a closed set."""

from __future__ import annotations

from enum import StrEnum
from typing import TypeVar

E = TypeVar("E", bound=StrEnum)

OUTSIDE_VIS = (
    "runs only inside a Vis process (an extension tool, command or callback); outside Vis, "
    "use the SDK client or import the other package directly"
)


class GatewayCode(StrEnum):
    """Why Vis refused a host call (status 403)."""

    FORBIDDEN_ROUTE = "forbidden-route"
    FORBIDDEN_SESSION = "forbidden-session"
    SESSION_NOT_BOUND = "session-not-bound"


class GatewayError(RuntimeError):
    """A host call that Vis refused; ``status`` is 403 and ``code`` says why."""

    def __init__(self, code: GatewayCode | str, message: str) -> None:
        self.status = 403
        self.code = GatewayCode(code)
        super().__init__(f"{self.code.value}: {message}")


class VisToolError(RuntimeError):
    """A tool failed with an exception type that the sandbox does not have (``vis.tools``
    raises it with the tool's own error)."""

    def __init__(self, message: str, type_name: str = "") -> None:
        super().__init__(message)
        self.type_name = type_name


VisToolError.__module__ = "builtins"  # tracebacks show ``VisToolError: …``


def member(kind: type[E], value: object, what: str) -> E:
    """``value`` as a member of ``kind``; else ``ValueError``: ``<what> 'x' is unknown; use
    'a', 'b' or 'c'`` (the members' values, in declared order)."""
    try:
        return kind(value)
    except ValueError:
        names = [f"'{item.value}'" for item in kind]
        choices = f"{', '.join(names[:-1])} or {names[-1]}"
        raise ValueError(f"{what} {value!r} is unknown; use {choices}") from None
