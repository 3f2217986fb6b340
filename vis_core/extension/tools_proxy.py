"""``vis.tools``: an extension calls another tool of the bound session the way the model would."""

from __future__ import annotations

import dataclasses
from typing import Any

from vis_core.extension.place import require_trusted
from vis_core.extension.runtime import current_runtime


class AttrDict(dict[str, Any]):
    """A JSON object from a tool result: a dict that also allows ``page.meta.total``."""

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(
                f"no field {name!r}; the available fields are {', '.join(map(str, self)) or 'none'}"
            ) from None


def with_attributes(value: Any) -> Any:
    """``value`` with every JSON object an :class:`AttrDict` (lists stay lists)."""
    if type(value) is dict:
        return AttrDict({k: with_attributes(v) for k, v in value.items()})
    if type(value) is list:
        return [with_attributes(item) for item in value]
    return value


def _argument(value: Any) -> Any:
    """JSON-compatible data; a dataclass is sent as a dict of its public fields."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            f.name: _argument(getattr(value, f.name))
            for f in dataclasses.fields(value)
            if not f.name.startswith("_")
        }
    if isinstance(value, dict):
        return {k: _argument(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_argument(v) for v in value]
    return value


def call_tool(name: str, *args: Any, **kwargs: Any) -> Any:
    """Run the session tool ``name`` (``gh_runs``, ``spel.reserve``) in the bound session."""
    require_trusted("vis.tools")
    return current_runtime().call_tool(
        name,
        tuple(_argument(a) for a in args),
        {k: _argument(v) for k, v in kwargs.items()},
    )


class ToolPath:
    """``vis.tools.spel`` or ``vis.tools.spel.reserve``: call it, or go one name deeper."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, name: str) -> ToolPath:
        if name.startswith("__"):
            raise AttributeError(name)
        return ToolPath(f"{self._name}.{name}")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return call_tool(self._name, *args, **kwargs)

    def __repr__(self) -> str:
        return f"<vis.tools.{self._name}>"


class Tools:
    """``vis.tools``: the tools of the bound session, named as the model names them."""

    def __getattr__(self, name: str) -> ToolPath:
        if name.startswith("__"):
            raise AttributeError(name)
        return ToolPath(name)

    def __getitem__(self, name: str) -> ToolPath:
        if not isinstance(name, str) or not name.strip():
            raise KeyError(f"vis.tools[...] takes a tool name such as 'spel.reserve', got {name!r}")
        return ToolPath(name.strip())

    def __repr__(self) -> str:
        return "<vis.tools>"


tools = Tools()
