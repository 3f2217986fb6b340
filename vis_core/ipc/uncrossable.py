"""Where in a value the part that cannot cross the sandbox boundary sits (``args[1][2]``,
``result["conn"]``, ``result.shade``), found only once the encoding failed.

The encoder stays as fast as it was: each container it walks catches :class:`Uncrossable` on
its way out and finds, by identity, which of its items held the part that failed (the first
one, as the encoder walks them in the same order), so nothing is counted while all goes well.
"""

from __future__ import annotations

from typing import Any

_KEY_SHOWN = 40  # a longer key is cut: the path is for finding the value, not for reading it


class Uncrossable(TypeError):
    """A part of a value the encoder cannot take, with the steps from the value down to it;
    the public encoder turns it into a ``TypeError`` whose text names the path."""

    def __init__(self, kind: str) -> None:
        super().__init__(kind)
        self.kind = kind  # its class as its code names it, with an article ("a socket")
        self.steps: list[str] = []  # from the part up to the value: innermost first
        self.part: Any = None  # what failed, as the container met so far holds it

    def within(self, container: Any) -> Uncrossable:
        """The failure seen from ``container``, one of whose items (a list's or a tuple's
        element, a dict's value or key, a set's member) is :attr:`part`."""
        step = _step(container, self.part)
        if step is not None:
            self.steps.append(step)
        self.part = container
        return self

    def as_field(self, value: Any) -> Uncrossable:
        """The failure seen from ``value``, whose record payload (``{"fields": {name: …}}``)
        held the part: its two steps become the field's (``.shade``)."""
        if len(self.steps) >= 2 and self.steps[-1] == '["fields"]':
            self.steps.pop()
            name = self.steps.pop()[2:-2]
            self.steps.append(f".{name}")
        self.part = value
        return self

    def seen_as(self, value: Any, step: str = "") -> Uncrossable:
        """The failure seen from ``value``, which crossed as another value (an Enum member as
        its ``.value``, a NamedTuple as its tuple)."""
        if step:
            self.steps.append(step)
        self.part = value
        return self

    def text(self, root: str = "") -> str:
        """What failed and where, from ``root`` (``args[1]``, ``result``; else unnamed)."""
        path = "".join(reversed(self.steps))
        refusal = (
            "cannot cross the sandbox boundary; pass JSON data, tuples, sets, bytes or a "
            "registered record type"
        )
        if root:
            return f"{root}{path} is {self.kind}, which {refusal}"
        if path:
            return f"the value at {path} is {self.kind}, which {refusal}"
        return f"{self.kind} value {refusal}"


def _step(container: Any, part: Any) -> str | None:
    """The step from ``container`` to its item ``part`` (``[2]``, ``["conn"]``; ``{…}`` for
    a set's member or a dict's key), None when ``part`` is not found in it."""
    if isinstance(container, dict):
        for key, item in container.items():
            if item is part:
                return f"[{_key(key)}]"
            if key is part:
                return "{…}"
        return None
    if isinstance(container, set | frozenset):
        return "{…}"
    for index, item in enumerate(container):
        if item is part:
            return f"[{index}]"
    return None


def _key(key: Any) -> str:
    """A dict key as a path shows it: a string in double quotes, anything else as its repr."""
    if isinstance(key, str):
        shown = key if len(key) <= _KEY_SHOWN else key[: _KEY_SHOWN - 1] + "…"
        return '"' + shown.replace("\\", "\\\\").replace('"', '\\"') + '"'
    try:
        shown = repr(key)
    except Exception:  # a key's broken __repr__ must not hide the refusal
        shown = f"<{type(key).__name__}>"
    return shown if len(shown) <= _KEY_SHOWN else shown[: _KEY_SHOWN - 1] + "…"
