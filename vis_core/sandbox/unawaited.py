"""Calls the model's code made and never awaited, said in words it acts on: Python shows a tool
call left unawaited as ``<coroutine object Child.request at 0x…>``, and warns about it, once it is
dropped, with a hint about tracemalloc."""

from __future__ import annotations

import inspect
import re
import warnings
from collections.abc import Coroutine, Mapping
from typing import Any, TextIO, TypeVar
from weakref import WeakSet

_NEVER_AWAITED = re.compile(r"coroutine '([^']+)' was never awaited")
_python_show_warning = warnings.showwarning
C = TypeVar("C", bound=Coroutine[Any, Any, Any])


def named(call: C, name: str) -> C:
    """``call`` named after the tool it runs, so that Python's words for it name the tool
    (a coroutine; another awaitable a requester returns keeps its own name)."""
    if inspect.iscoroutine(call):
        call.__name__ = call.__qualname__ = name
    return call


def advice(name: str) -> str:
    return f"{name}(…) was never awaited, so it did not run: write await {name}(…)"


def show_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: TextIO | None = None,
    line: str | None = None,
) -> None:
    """:func:`warnings.showwarning` that says what to do about a coroutine never awaited."""
    found = _NEVER_AWAITED.fullmatch(str(message)) if category is RuntimeWarning else None
    if found is None:
        _python_show_warning(message, category, filename, lineno, file, line)
        return
    import sys

    try:
        (file or sys.stderr).write(f"{filename}:{lineno}: {advice(found[1])}\n")
    except (OSError, ValueError):  # a stream the block closed
        pass


def left_unawaited(namespace: Mapping[str, Any], told: WeakSet[Any]) -> list[str]:
    """A note for each variable that holds a call never awaited (``x = cat("a")``) and was not
    told of before (``told``, kept by the caller)."""
    notes: list[str] = []
    for key, value in list(namespace.items()):
        if (
            inspect.iscoroutine(value)
            and value not in told
            and inspect.getcoroutinestate(value) == inspect.CORO_CREATED
        ):
            told.add(value)
            name = value.__qualname__
            notes.append(
                f"[vis: {key} holds {name}(…), which was never awaited, so it did not run: "
                f"write {key} = await {name}(…)]"
            )
    return notes
