"""``vis.live`` nodes: frozen components, their updates, and the plain-data codec."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from vis_core.extension.forms import (
    FORM_NODE_TYPES,
    Field,
    FormDeclarationError,
    Group,
    Option,
    _enum,
    _fail,
    _text,
    not_a_node,
    walk,
)

OUTPUT_LINE_LIMIT = 2_000


class Tone(StrEnum):
    IDLE = "idle"
    RUNNING = "running"
    OK = "ok"
    WARN = "warn"
    ERROR = "error"


class SpinnerVariant(StrEnum):
    BRAILLE = "braille"
    DOTS = "dots"
    LINE = "line"
    PULSE = "pulse"


def _tone(value: Any, where: str) -> Tone | None:
    return None if value is None else _enum(Tone, value, where, "tone")


def _need_id(node: Any) -> None:
    if not isinstance(node.id, str) or not node.id:
        _fail(type(node).__name__.lower(), "needs an id (a non-empty string) to be updated")


def _where(node: Any) -> str:
    return f"{type(node).__name__.lower()} {node.id!r}"


def _number(value: Any) -> bool:
    """A finite int or float (not a bool): what a progress bar divides and prints."""
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


@dataclass(frozen=True)
class Status:
    id: str
    text: str = ""
    tone: Tone = Tone.IDLE
    detail: str | None = None

    def __post_init__(self) -> None:
        _need_id(self)
        where = _where(self)
        object.__setattr__(self, "tone", _enum(Tone, self.tone, where, "tone"))
        _text(where, "text", self.text)
        _text(where, "detail", self.detail, optional=True)


@dataclass(frozen=True)
class Progress:
    id: str
    total: float | None = None
    value: float = 0
    done: bool = False
    label: str | None = None

    def __post_init__(self) -> None:
        _need_id(self)
        where = _where(self)
        if self.total is not None and not (_number(self.total) and self.total > 0):
            _fail(where, f"total must be a number above 0 (or None), got {self.total!r}")
        if not _number(self.value):
            _fail(where, f"value must be a number, got {self.value!r}")
        _text(where, "label", self.label, optional=True)


@dataclass(frozen=True)
class StatItem:
    label: str
    value: Any = ""

    def __post_init__(self) -> None:
        _text("stat", "label", self.label)


@dataclass(frozen=True)
class Stat:
    id: str
    items: tuple[StatItem, ...] = ()

    def __post_init__(self) -> None:
        _need_id(self)
        object.__setattr__(self, "items", tuple(self.items))


@dataclass(frozen=True)
class StepItem:
    id: str
    label: str = ""
    tone: Tone = Tone.IDLE
    detail: str | None = None

    def __post_init__(self) -> None:
        where = f"step {self.id!r}"
        object.__setattr__(self, "tone", _enum(Tone, self.tone, where, "tone"))
        if not self.label:
            object.__setattr__(self, "label", self.id)
        _text(where, "label", self.label)
        _text(where, "detail", self.detail, optional=True)


@dataclass(frozen=True)
class Steps:
    id: str
    items: tuple[StepItem, ...] = ()

    def __post_init__(self) -> None:
        _need_id(self)
        items = tuple(i if isinstance(i, StepItem) else StepItem(str(i)) for i in self.items)
        object.__setattr__(self, "items", items)


@dataclass(frozen=True)
class OutputLine:
    text: str
    tone: Tone | None = None


@dataclass(frozen=True)
class Output:
    """A log: lines written while the work runs (the newest 2,000 are kept)."""

    id: str
    label: str = "Output"
    default_expanded: bool = False
    lines: tuple[OutputLine, ...] = ()
    dropped: int = 0

    def __post_init__(self) -> None:
        _need_id(self)
        _text(_where(self), "label", self.label)
        object.__setattr__(self, "lines", tuple(self.lines))


@dataclass(frozen=True)
class TableGroup:
    id: str
    label: str = ""

    def __post_init__(self) -> None:
        _text(f"table group {self.id!r}", "label", self.label)


@dataclass(frozen=True)
class TableRow:
    id: str
    cells: tuple[Any, ...] = ()
    tone: Tone | None = None
    parent: str | None = None
    group: str | None = None


@dataclass(frozen=True)
class Table:
    id: str
    columns: tuple[str, ...] = ()
    groups: tuple[TableGroup, ...] = ()
    rows: tuple[TableRow, ...] = ()
    selected: str | None = None

    def __post_init__(self) -> None:
        _need_id(self)
        object.__setattr__(self, "columns", tuple(str(c) for c in self.columns))
        groups = tuple(
            g if isinstance(g, TableGroup) else TableGroup(str(g), str(g)) for g in self.groups
        )
        object.__setattr__(self, "groups", groups)
        object.__setattr__(self, "rows", tuple(self.rows))
        if not self.columns:
            _fail(f"table {self.id!r}", "needs at least one column")


@dataclass(frozen=True)
class LinkItem:
    url: str
    label: str = ""

    def __post_init__(self) -> None:
        _text("link", "url", self.url)
        if not self.label:
            object.__setattr__(self, "label", self.url)
        _text("link", "label", self.label)


@dataclass(frozen=True)
class Links:
    id: str
    links: tuple[LinkItem, ...] = ()

    def __post_init__(self) -> None:
        _need_id(self)
        object.__setattr__(self, "links", tuple(_link(item) for item in self.links))


@dataclass(frozen=True)
class Code:
    id: str
    text: str = ""
    language: str | None = None

    def __post_init__(self) -> None:
        _need_id(self)
        _text(_where(self), "text", self.text)
        _text(_where(self), "language", self.language, optional=True)


@dataclass(frozen=True)
class Divider:
    id: str | None = None


@dataclass(frozen=True)
class Spinner:
    id: str
    variant: SpinnerVariant = SpinnerVariant.BRAILLE
    is_active: bool = True
    label: str | None = None

    def __post_init__(self) -> None:
        _need_id(self)
        variant = _enum(SpinnerVariant, self.variant, _where(self), "variant")
        object.__setattr__(self, "variant", variant)
        _text(_where(self), "label", self.label, optional=True)


@dataclass(frozen=True)
class Button:
    id: str
    label: str = ""
    is_disabled: bool = False

    def __post_init__(self) -> None:
        _need_id(self)
        if not self.label:
            object.__setattr__(self, "label", self.id)
        _text(_where(self), "label", self.label)


@dataclass(frozen=True)
class Disclosure:
    id: str
    label: str = ""
    nodes: tuple[Any, ...] = ()
    is_expanded: bool = False

    def __post_init__(self) -> None:
        _need_id(self)
        _text(_where(self), "label", self.label)
        object.__setattr__(self, "nodes", tuple(self.nodes))


LIVE_NODE_TYPES: tuple[type, ...] = (
    Status,
    Progress,
    Stat,
    Steps,
    Output,
    Table,
    Links,
    Code,
    Divider,
    Spinner,
    Button,
    Disclosure,
    *FORM_NODE_TYPES,
)
_RECORD_TYPES: tuple[type, ...] = (
    *LIVE_NODE_TYPES,
    StatItem,
    StepItem,
    OutputLine,
    TableGroup,
    TableRow,
    LinkItem,
    Option,
)
KINDS: dict[str, type] = {t.__name__.lower(): t for t in _RECORD_TYPES}
_KIND_OF = {t: k for k, t in KINDS.items()}


def node_id(node: Any) -> str | None:
    return node.name if isinstance(node, Field) else getattr(node, "id", None)


def with_children(node: Any, nodes: tuple[Any, ...]) -> Any:
    key = "fields" if isinstance(node, Group) else "nodes"
    return dataclasses.replace(node, **{key: nodes})


def check_view_nodes(nodes: tuple[Any, ...], where: str = "vis.live") -> None:
    """Every node is a live component and every id (and field name) is used once."""
    seen: set[str] = set()
    for node in walk(nodes):
        if not isinstance(node, LIVE_NODE_TYPES):
            _fail(where, f"{not_a_node(node)} is not a live view component")
        ident = node_id(node)
        if ident is None:
            continue
        if ident in seen:
            _fail(where, f"two nodes have the id {ident!r}; ids must be unique in a view")
        seen.add(ident)


# -- plain data -------------------------------------------------------------------------------


def to_plain(value: Any) -> Any:
    """A component (or a tree of them) as JSON-ready data; validators are left out."""
    kind = _KIND_OF.get(type(value))
    if kind is not None:
        data: dict[str, Any] = {"kind": kind}
        for item in dataclasses.fields(value):
            if item.name == "validate":
                continue
            data[item.name] = to_plain(getattr(value, item.name))
        return data
    if isinstance(value, StrEnum):
        return value.value
    if isinstance(value, list | tuple):
        return [to_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): to_plain(v) for k, v in value.items()}
    return value


def from_plain(value: Any) -> Any:
    """Rebuild components from :func:`to_plain` data."""
    if isinstance(value, dict) and "kind" in value and value["kind"] in KINDS:
        cls = KINDS[value["kind"]]
        names = {f.name for f in dataclasses.fields(cls)}
        kwargs = {k: from_plain(v) for k, v in value.items() if k != "kind" and k in names}
        return cls(**kwargs)
    if isinstance(value, list):
        return tuple(from_plain(v) for v in value)
    if isinstance(value, dict):
        return {k: from_plain(v) for k, v in value.items()}
    return value


def _link(item: Any) -> LinkItem:
    if isinstance(item, LinkItem):
        return item
    if isinstance(item, str):
        return LinkItem(item)
    if isinstance(item, tuple | list) and len(item) == 2:
        return LinkItem(str(item[1]), str(item[0]))
    if isinstance(item, dict):
        return LinkItem(item["url"], item.get("label", ""))
    raise FormDeclarationError(f"a link is a url, (label, url) or LinkItem, not {item!r}")


# -- builders -------------------------------------------------------------------------------


def status(id: str, text: str = "", tone: str = "idle", detail: str | None = None) -> Status:
    return Status(id, text, tone, detail)  # type: ignore[arg-type]


def progress(
    id: str, total: float | None = None, *, value: float = 0, label: str | None = None
) -> Progress:
    return Progress(id, total, value, label=label)


def stat(id: str, label: str | None = None, value: Any = None) -> Stat:
    return Stat(id, () if label is None else (StatItem(label, "" if value is None else value),))


def steps(id: str, items: Iterable[Any] = ()) -> Steps:
    return Steps(id, tuple(items))


def step(id: str, label: str = "", tone: str = "idle", detail: str | None = None) -> StepItem:
    return StepItem(id, label, tone, detail)  # type: ignore[arg-type]


def output(id: str, label: str = "Output", default_expanded: bool = False) -> Output:
    return Output(id, label, default_expanded)


def table(id: str, columns: Iterable[str], groups: Iterable[Any] = ()) -> Table:
    return Table(id, tuple(columns), tuple(groups))


def link(id: str, links: Iterable[Any] = ()) -> Links:
    return Links(id, tuple(links))


def code(id: str, text: str = "", language: str | None = None) -> Code:
    return Code(id, text, language)


def divider(id: str | None = None) -> Divider:
    return Divider(id)


def spinner(
    id: str, variant: str = "braille", is_active: bool = True, label: str | None = None
) -> Spinner:
    return Spinner(id, variant, is_active, label)  # type: ignore[arg-type]


def button(id: str, label: str = "", is_disabled: bool = False) -> Button:
    return Button(id, label, is_disabled)


def disclosure(id: str, label: str, *nodes: Any, is_expanded: bool = False) -> Disclosure:
    return Disclosure(id, label, tuple(nodes), is_expanded)
