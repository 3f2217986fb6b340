"""Plain data: what ``vis.state`` and the store keep (dicts with text keys, lists, text, numbers,
booleans, None)."""

from __future__ import annotations

from typing import Any


def check_plain(value: Any, what: str) -> None:
    """Raise ``ValueError`` naming ``what`` unless ``value`` is plain data JSON can hold."""
    if value is None or isinstance(value, str | bool | int):
        return
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise ValueError(f"{what} holds {value!r}; JSON has no NaN or infinity")
        return
    if isinstance(value, list | tuple):
        for item in value:
            check_plain(item, what)
        return
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise ValueError(f"{what} has the dict key {key!r}; keys must be strings")
            check_plain(item, what)
        return
    name = type(value).__name__
    article = "an" if name[:1].lower() in "aeiou" else "a"
    raise ValueError(
        f"{what} holds {article} {name}; values must be plain data: dicts, lists, "
        "strings, numbers, booleans and None"
    )
