"""``vis.Catalog``: a typed snapshot of public callable contracts with ``spec()``, ``help()``."""

from __future__ import annotations

from collections.abc import Sequence

from vis_core.contracts.render import render_namespace, render_tool
from vis_core.contracts.specs import HelpDocument, NamespaceSpec, ToolSpec
from vis_core.extension.symbols import Symbol, method
from vis_core.model.activity import Activity, ActivityPresentation, ActivityText, RenderPhase


def _render_spec(
    *, phase: str, args: tuple, kwargs: dict, result: object, error: object
) -> ActivityPresentation | None:
    name = args[0] if args else kwargs.get("name")
    target = "the catalog roots" if name is None else str(name)
    if phase == RenderPhase.FAILURE:
        return ActivityPresentation("Read tool specification", f"{target}: {error}")
    if isinstance(result, tuple):
        return ActivityPresentation("Read tool specification", f"{len(result)} catalog roots")
    return ActivityPresentation("Read tool specification", target)


def _render_help(
    *, phase: str, args: tuple, kwargs: dict, result: object, error: object
) -> ActivityPresentation | None:
    name = str(args[0] if args else kwargs.get("name"))
    if phase == RenderPhase.FAILURE:
        return ActivityPresentation("Read tool help", f"{name}: {error}")
    content = (ActivityText(result.text),) if isinstance(result, HelpDocument) else ()
    return ActivityPresentation("Read tool help", name, content)


class Catalog:
    """Public callable contracts of ``Symbol`` declarations, snapshotted without registration.

    Duplicate declaration names are rejected; hidden tools are not discoverable here
    (visibility is not access control). Rebuild the catalog after declarations change.
    """

    __slots__ = ("_roots", "_tools", "_namespaces")

    def __init__(self, symbols: Sequence[Symbol]) -> None:
        if isinstance(symbols, str | bytes) or not isinstance(symbols, Sequence):
            raise TypeError("vis.Catalog(symbols) needs a sequence of vis.Symbol declarations")
        roots: list[ToolSpec | NamespaceSpec] = []
        tools: dict[str, ToolSpec] = {}
        namespaces: dict[str, NamespaceSpec] = {}
        names: set[str] = set()
        for index, symbol in enumerate(symbols):
            if not isinstance(symbol, Symbol):
                raise TypeError(
                    f"vis.Catalog: symbols[{index}] is {type(symbol).__name__}; "
                    "give vis.Symbol declarations"
                )
            name = str(symbol.name)
            if name in names:
                raise ValueError(f"vis.Catalog: the declaration name {name!r} is used twice")
            names.add(name)
            specs = symbol.specs()
            for spec in specs:
                tools[spec.name] = spec
            if not symbol.is_namespace:
                if specs:
                    roots.append(specs[0])
                continue
            for path in symbol.namespaces:
                members = tuple(s for s in specs if s.name.startswith(path + "."))
                if members:
                    namespaces[path] = NamespaceSpec(path, members)
            if name in namespaces:
                roots.append(namespaces[name])
        self._roots = tuple(roots)
        self._tools = tools
        self._namespaces = namespaces

    @method(
        activity=Activity(label="Read tool specification", show_start=False, render=_render_spec)
    )
    def spec(
        self, name: str | None = None
    ) -> ToolSpec | NamespaceSpec | tuple[ToolSpec | NamespaceSpec, ...]:
        """Return the typed contract of a callable or namespace, or the roots for no name.

        Looks nothing up remotely and runs no tool.
        """
        if name is None:
            return self._roots
        if not isinstance(name, str):
            raise TypeError(f"Catalog.spec(name) takes a string or None, got {type(name).__name__}")
        return self._lookup(name)

    @method(activity=Activity(label="Read tool help", show_start=False, render=_render_help))
    def help(self, name: str) -> HelpDocument:
        """Return generated reference text for a callable or all public namespace descendants."""
        if not isinstance(name, str):
            raise TypeError(f"Catalog.help(name) takes a string, got {type(name).__name__}")
        target = self._lookup(name)
        if isinstance(target, ToolSpec):
            return HelpDocument(target, render_tool(target))
        return HelpDocument(target, render_namespace(target))

    def _lookup(self, name: str) -> ToolSpec | NamespaceSpec:
        found = self._tools.get(name) or self._namespaces.get(name)
        if found is None:
            known = ", ".join([*self._tools, *self._namespaces]) or "none"
            raise ValueError(
                f"the catalog has no public callable or namespace {name!r}; known names: {known}"
            )
        return found

    def __repr__(self) -> str:
        return f"Catalog({len(self._tools)} tools)"
