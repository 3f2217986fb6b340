"""``vis.live`` updates: the operations on a view's nodes and how they change them."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from vis_core.extension.forms import (
    Field,
    FormDeclarationError,
    Group,
    Heading,
    Paragraph,
    children,
    walk,
)
from vis_core.extension.live_nodes import (
    OUTPUT_LINE_LIMIT,
    Button,
    Code,
    Disclosure,
    Divider,
    Links,
    Output,
    OutputLine,
    Progress,
    Spinner,
    Stat,
    StatItem,
    Status,
    StepItem,
    Steps,
    Table,
    TableGroup,
    TableRow,
    _link,
    _tone,
    check_view_nodes,
    from_plain,
    node_id,
    to_plain,
    with_children,
)


class LiveOp(StrEnum):
    SET = "set"
    REMOVE = "remove"
    CLEAR = "clear"
    WRITE = "write"
    UPSERT = "upsert"
    GROUP = "group"
    SELECT = "select"
    ADD = "add"
    ADD_NODE = "add_node"
    DROP_NODE = "drop_node"


SETTABLE: dict[type, tuple[str, ...]] = {
    Status: ("text", "tone", "detail"),
    Progress: ("value", "done", "total", "label"),
    Paragraph: ("text",),
    Heading: ("text", "level"),
    Code: ("text", "language"),
    Spinner: ("is_active", "variant", "label"),
    Button: ("label", "is_disabled"),
    Disclosure: ("label", "is_expanded"),
    Field: ("label", "description", "placeholder", "default"),
}

ALLOWED_OPS: dict[type, frozenset[LiveOp]] = {
    **{t: frozenset({LiveOp.SET}) for t in SETTABLE},
    Stat: frozenset({LiveOp.SET, LiveOp.REMOVE, LiveOp.CLEAR}),
    Steps: frozenset({LiveOp.SET, LiveOp.REMOVE, LiveOp.CLEAR}),
    Output: frozenset({LiveOp.WRITE, LiveOp.CLEAR}),
    Table: frozenset({LiveOp.UPSERT, LiveOp.GROUP, LiveOp.SELECT, LiveOp.REMOVE, LiveOp.CLEAR}),
    Links: frozenset({LiveOp.ADD}),
    Divider: frozenset(),
    Group: frozenset(),
}


@dataclass(frozen=True)
class LiveUpdate:
    """One change to a view: ``op`` applied to node ``node_id`` with ``data``."""

    node_id: str | None
    op: LiveOp
    data: dict[str, Any] = dataclasses.field(default_factory=dict)

    def to_plain(self) -> dict[str, Any]:
        return {"node_id": self.node_id, "op": self.op.value, "data": to_plain(self.data)}

    @classmethod
    def from_plain(cls, data: dict[str, Any]) -> LiveUpdate:
        return cls(data.get("node_id"), LiveOp(data["op"]), dict(data.get("data") or {}))


class LiveUpdateError(ValueError):
    """An update names a missing node or an operation the node does not have."""


def find(nodes: tuple[Any, ...], ident: str) -> Any | None:
    for node in walk(nodes):
        if node_id(node) == ident:
            return node
    return None


def check_op(node: Any, op: LiveOp) -> None:
    allowed = ALLOWED_OPS.get(type(node), frozenset())
    if op not in allowed:
        kind = type(node).__name__.lower()
        names = ", ".join(f".{o.value}()" for o in sorted(allowed)) or "no updates"
        raise LiveUpdateError(f"{kind} {node_id(node)!r} has no .{op.value}(); it has {names}")


def apply(nodes: tuple[Any, ...], update: LiveUpdate) -> tuple[Any, ...]:
    """The view's nodes after ``update`` (nodes are frozen: changed ones are replaced)."""
    if update.op is LiveOp.ADD_NODE:
        return _add_node(nodes, update.data)
    if update.op is LiveOp.DROP_NODE:
        if update.node_id is None or find(nodes, update.node_id) is None:
            raise LiveUpdateError(f"the view has no node {update.node_id!r} to drop")
        return _replace(nodes, update.node_id, lambda node: None)
    if update.node_id is None or find(nodes, update.node_id) is None:
        raise LiveUpdateError(f"the view has no node {update.node_id!r}")
    return _replace(nodes, update.node_id, lambda node: change(node, update.op, update.data))


def change(node: Any, op: LiveOp, data: dict[str, Any]) -> Any:
    """One node after ``op`` with ``data``."""
    check_op(node, op)
    where = f"{type(node).__name__.lower()} {node_id(node)!r}"
    if op is LiveOp.SET and type(node) in SETTABLE:
        keys = SETTABLE[type(node)]
        wrong = sorted(set(data) - set(keys))
        if wrong:
            raise LiveUpdateError(f"{where}.set() takes {', '.join(keys)}; not {', '.join(wrong)}")
        try:
            return dataclasses.replace(node, **data)
        except FormDeclarationError as exc:
            raise LiveUpdateError(str(exc)) from None
    if isinstance(node, Stat):
        return _keyed(node, op, data, lambda d: StatItem(d["label"], d.get("value", "")), "label")
    if isinstance(node, Steps):
        return _keyed(node, op, data, lambda d: _step(node, d), "id")
    if isinstance(node, Output):
        if op is LiveOp.CLEAR:
            return dataclasses.replace(node, lines=(), dropped=0)
        tone = _tone(data.get("tone"), where)
        new = tuple(OutputLine(str(t), tone) for t in data.get("lines", ()))
        lines = node.lines + new
        extra = max(0, len(lines) - OUTPUT_LINE_LIMIT)
        return dataclasses.replace(node, lines=lines[extra:], dropped=node.dropped + extra)
    if isinstance(node, Table):
        return _table(node, op, data, where)
    if isinstance(node, Links):
        return dataclasses.replace(node, links=node.links + (_link(data.get("link")),))
    raise LiveUpdateError(f"{where} cannot apply .{op.value}()")


def _step(node: Steps, data: dict[str, Any]) -> StepItem:
    old = next((i for i in node.items if i.id == data["id"]), None)
    merged = {**(dataclasses.asdict(old) if old else {}), **data}
    return StepItem(**merged)


def _keyed(node: Any, op: LiveOp, data: dict[str, Any], build: Any, key: str) -> Any:
    """A stat's or steps' items after ``op``: none, all but the one ``key`` names, or one set."""
    if op is LiveOp.CLEAR:
        return dataclasses.replace(node, items=())
    if op is LiveOp.REMOVE:
        kept = tuple(i for i in node.items if getattr(i, key) != data.get(key))
        return dataclasses.replace(node, items=kept)
    return dataclasses.replace(node, items=_upsert(node.items, build(data), key))


def _table(node: Table, op: LiveOp, data: dict[str, Any], where: str) -> Table:
    if op is LiveOp.CLEAR:
        return dataclasses.replace(node, rows=(), groups=(), selected=None)
    if op is LiveOp.SELECT:
        return dataclasses.replace(node, selected=data.get("row_id"))
    if op is LiveOp.GROUP:
        group = TableGroup(data["group_id"], data.get("label") or data["group_id"])
        return dataclasses.replace(node, groups=_upsert(node.groups, group, "id"))
    row_id = data.get("row_id")
    if op is LiveOp.REMOVE:
        rows = tuple(r for r in node.rows if r.id != row_id and r.parent != row_id)
        selected = None if node.selected == row_id else node.selected
        return dataclasses.replace(node, rows=rows, selected=selected)
    if not isinstance(row_id, str):
        raise LiveUpdateError(f"{where}.upsert: a row id is a string, got {row_id!r}")
    cells = tuple(data.get("cells", ()))
    if len(cells) > len(node.columns):
        raise LiveUpdateError(
            f"{where}.upsert({row_id!r}) has {len(cells)} cells for {len(node.columns)} columns"
        )
    group = data.get("group")
    if group is not None and all(g.id != group for g in node.groups):
        raise LiveUpdateError(f"{where}: no group {group!r}; add it with .group({group!r}, label)")
    row = TableRow(row_id, cells, _tone(data.get("tone"), where), data.get("parent"), group)
    return dataclasses.replace(node, rows=_upsert(node.rows, row, "id"))


def _upsert(items: tuple[Any, ...], item: Any, key: str) -> tuple[Any, ...]:
    """``items`` with ``item`` in place of the one that has its ``key``, else at the end."""
    ident = getattr(item, key)
    if any(getattr(i, key) == ident for i in items):
        return tuple(item if getattr(i, key) == ident else i for i in items)
    return items + (item,)


def _replace(nodes: tuple[Any, ...], ident: str, fn: Any) -> tuple[Any, ...]:
    """``nodes`` with the node ``ident`` (at any depth) replaced by ``fn(node)``, or left out
    where that is None."""
    out = []
    for node in nodes:
        if node_id(node) == ident:
            node = fn(node)
        elif children(node):
            node = with_children(node, _replace(children(node), ident, fn))
        if node is not None:
            out.append(node)
    return tuple(out)


def _add_node(nodes: tuple[Any, ...], data: dict[str, Any]) -> tuple[Any, ...]:
    node = data["node"]
    node = from_plain(node) if isinstance(node, dict) else node
    after, parent = data.get("after"), data.get("parent")
    ident = node_id(node)
    if ident is not None and any(node_id(n) == ident for n in walk(nodes)):
        raise LiveUpdateError(f"the view already has a node {ident!r}")
    check_view_nodes((node,))
    if parent is not None:
        target = find(nodes, parent)
        if target is None or not isinstance(target, Group | Disclosure):
            raise LiveUpdateError(f"no row, column or disclosure {parent!r} to add into")
        return _replace(nodes, parent, lambda p: _insert_into(p, node, after))
    if after is not None and not any(node_id(n) == after for n in nodes):
        located = _parent_of(nodes, after)
        if located is None:
            raise LiveUpdateError(f"no node {after!r} to add after")
        return _replace(nodes, located, lambda p: _insert_into(p, node, after))
    return _insert(nodes, node, after)


def _insert_into(parent: Any, node: Any, after: str | None) -> Any:
    return with_children(parent, _insert(children(parent), node, after))


def _parent_of(nodes: tuple[Any, ...], ident: str) -> str | None:
    for node in walk(nodes):
        if any(node_id(c) == ident for c in children(node)):
            return node_id(node)
    return None


def _insert(nodes: tuple[Any, ...], node: Any, after: str | None) -> tuple[Any, ...]:
    if after is None:
        return nodes + (node,)
    index = next(i for i, n in enumerate(nodes) if node_id(n) == after)
    return nodes[: index + 1] + (node,) + nodes[index + 1 :]
