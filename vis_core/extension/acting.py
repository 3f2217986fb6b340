"""Which extension Vis is running now: the acting extension of a call, callback or load."""

from __future__ import annotations

import contextvars
from collections.abc import Iterator
from contextlib import contextmanager

from vis_core.extension.context import current_call

_acting: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "vis_acting_extension", default=None
)


@contextmanager
def acting_as(name: str) -> Iterator[str]:
    """Run the body on behalf of extension ``name`` (state, logs and notifications use it)."""
    token = _acting.set(name)
    try:
        yield name
    finally:
        _acting.reset(token)


def loading_extension() -> tuple[bool, str | None]:
    """``(loading, name)``: whether an entry file is being loaded, and its registered name."""
    from vis_core.extension.declarations import _loading

    registration = _loading.get()
    if registration is None:
        return False, None
    declaration = registration.declaration
    return True, None if declaration is None else declaration.name


def current_extension() -> str | None:
    """The extension Vis runs now, or ``None`` outside Vis (and for Vis's own tools)."""
    name = _acting.get()
    if name:
        return name
    call = current_call()
    if call is not None and call.owner != "vis":
        return call.owner
    return loading_extension()[1]
