"""SDK op hook markers: ``vis.block``, ``vis.repair``, ``vis.strings_of``, OperationBlocked."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

ASK_FIRST = "Ask the user how to proceed before you retry this operation."


# -- the SDK markers ------------------------------------------------------------------------


@dataclass(frozen=True)
class Block:
    """A before hook's refusal: the model sees ``reason`` (and ``hint``) as a tool failure."""

    reason: str
    hint: str | None = None


class InvalidRepair(ValueError):
    """``vis.repair`` got something other than source text and nonblank notes."""


@dataclass(frozen=True)
class Repair:
    """A before hook's corrected complete source for a ``patch``, with its correction notes."""

    source: str
    notes: tuple[str, ...]


def block(reason: str, hint: str | None = None) -> Block:
    """Refuse the operation; ``hint`` tells the model what to do next."""
    if not isinstance(reason, str) or not reason.strip():
        raise ValueError(
            "vis.block needs a nonblank reason, such as 'generated files are read-only'"
        )
    if hint is not None and (not isinstance(hint, str) or not hint.strip()):
        raise ValueError("vis.block hint must be nonblank text or None")
    return Block(reason.strip(), None if hint is None else hint.strip())


def repair(source: str, notes: Sequence[str] | None = None) -> Repair:
    """Propose corrected complete source for a ``patch``; ``notes`` say what was corrected."""
    if not isinstance(source, str):
        raise InvalidRepair(
            f"vis.repair needs the corrected source as str, got {type(source).__name__}"
        )
    if not isinstance(notes, list | tuple) or not notes:
        raise InvalidRepair("vis.repair needs notes: a nonempty list of what was corrected")
    for note in notes:
        if not isinstance(note, str) or not note.strip():
            raise InvalidRepair("vis.repair notes must be nonblank strings")
    return Repair(source, tuple(note.strip() for note in notes))


def strings_of(value: Any) -> list[str]:
    """Every string in a nested structure (dict values, sequences, paths), in order."""
    found: list[str] = []
    stack: list[Any] = [value]
    seen: set[int] = set()
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            found.append(item)
        elif isinstance(item, os.PathLike):
            found.append(os.fspath(item))
        elif isinstance(item, bytes | bytearray | int | float | bool) or item is None:
            continue
        elif id(item) in seen:
            continue
        elif isinstance(item, Mapping):
            seen.add(id(item))
            stack.extend(reversed(list(item.values())))
        elif dataclasses.is_dataclass(item) and not isinstance(item, type):
            seen.add(id(item))
            stack.extend(reversed([getattr(item, f.name) for f in dataclasses.fields(item)]))
        elif isinstance(item, list | tuple | set | frozenset):
            seen.add(id(item))
            stack.extend(reversed(list(item)))
    return found


# -- what the model sees --------------------------------------------------------------------


class OperationBlocked(Exception):
    """An op hook refused the operation; the text names the extension, reason and next step."""

    def __init__(self, op: str, extension: str, reason: str, hint: str | None = None) -> None:
        self.op, self.extension, self.reason, self.hint = op, extension, reason, hint
        super().__init__(
            f"{op} was blocked by extension {extension!r}: {reason}. "
            + (f"Hint: {hint}" if hint else ASK_FIRST)
        )
