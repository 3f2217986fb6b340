"""doc() text and compact Model schemas: exact text, shared definitions, labels and budget."""

from __future__ import annotations

from dataclasses import dataclass, make_dataclass
from enum import Enum
from typing import Any, Literal, NotRequired, TypedDict

from vis_core.contracts.build import callable_spec
from vis_core.contracts.render import SCHEMA_BUDGET, abbreviation_notice, model_schemas, render_tool
from vis_core.extension.catalog import Catalog
from vis_core.extension.symbols import Symbol

from .examples import Greeter, search_pages, status_of

GREETER_DOC = """\
greet.hello(name: str, /, *, loud: bool = False) -> 'Results'
Tag: observation

Generate greeting text; it never sends messages.

Parameters:
- name: str — positional-only, required
- loud: bool — keyword-only, default False
Returns: Results

Model schemas:
Results
  greeting: str
  loud: bool"""


def test_greeter_doc_text() -> None:
    [spec] = Symbol(Greeter(), name="greet").specs()
    assert render_tool(spec) == GREETER_DOC


def test_status_and_pagelist_doc_text() -> None:
    assert (
        render_tool(callable_spec(status_of))
        == """\
status_of(env: str) -> 'Status'
Tag: observation

Report the deployment status of one environment.

Parameters:
- env: str — positional or keyword, required
Returns: Status

Model schemas:
Status
  env: str
  phases: tuple[int, ...] (has default)
  next_phase: int (optional)"""
    )
    assert (
        render_tool(callable_spec(search_pages, tag="external"))
        == """\
search_pages(query: str, limit: int = 20) -> 'PageList'
Tag: external

Search wiki pages by title words.

Parameters:
- query: str — positional or keyword, required
- limit: int — positional or keyword, default 20
Returns: PageList

Model schemas:
PageList
  sequence over results: for item in value, len(value), bool(value), value[0], value[-1], \
value[1:] (slices are lists)
  results: tuple[Page, ...]
  total: int
Page
  title: str"""
    )


class _Sentinel:
    pass


_UNSET: Any = _Sentinel()


def grep(
    query: str, paths: list[str] | None = None, *, limit: int = _UNSET, ignore_case: bool = False
) -> str:
    """Search files for a regular expression."""
    return query


def test_builtin_style_tool_with_keyword_options_and_opaque_default() -> None:
    text = render_tool(callable_spec(grep))
    assert text.splitlines()[0] == (
        "grep(query: str, paths: list[str] | None = None, *, limit: int = ..., "
        "ignore_case: bool = False) -> str"
    )
    assert "- limit: int — keyword-only, default ... (omit it to use the default)" in text
    assert "Model schemas" not in text


def test_no_parameters_and_unannotated_return() -> None:
    def ping():  # unannotated on purpose
        """Check the service answers."""

    assert render_tool(callable_spec(ping)) == (
        "ping()\nTag: observation\n\nCheck the service answers.\n\nParameters: none\nReturns: Any"
    )


def test_union_of_record_and_tuple_defines_the_model_once() -> None:
    catalog = Catalog([])
    spec = callable_spec(catalog.spec, name="catalog.spec")
    assert spec.returns.name == ("ToolSpec | NamespaceSpec | tuple[ToolSpec | NamespaceSpec, ...]")
    lines = model_schemas(spec).splitlines()
    assert lines.count("ToolSpec") == 1
    assert lines.count("NamespaceSpec") == 1
    assert lines.count("TypeSpec") == 1


def test_distinct_shapes_with_one_name_get_numbered_labels() -> None:
    first = make_dataclass("Result", [("count", int)], frozen=True)
    second = make_dataclass("Result", [("text", str)], frozen=True)

    def convert(value: Any) -> Any:
        """Convert one result into another."""

    convert.__annotations__ = {"value": first, "return": second}
    text = render_tool(callable_spec(convert))
    assert "- value: Result#1 — positional or keyword, required" in text
    assert "Returns: Result#2" in text
    assert text.endswith("Model schemas:\nResult#1\n  count: int\nResult#2\n  text: str")


@dataclass(frozen=True)
class Leaf:
    value: int


@dataclass(frozen=True)
class Left:
    leaf: Leaf


@dataclass(frozen=True)
class Right:
    flag: bool


@dataclass(frozen=True)
class Root:
    left: Left
    right: Right


def test_definitions_are_visited_breadth_first() -> None:
    def walk() -> Root:
        """Walk the tree."""

    headers = [
        line
        for line in model_schemas(callable_spec(walk)).splitlines()[1:]
        if not line.startswith(" ")
    ]
    assert headers == ["Root", "Left", "Right", "Leaf"]


def _wide(count: int) -> type:
    fields = [(f"field_number_{i:03d}_with_a_rather_long_name", int) for i in range(count)]
    return make_dataclass("Wide", fields, frozen=True)


def test_schema_section_stays_within_budget_without_cutting_lines() -> None:
    wide = _wide(120)

    def read() -> Any:
        """Read a wide record."""

    read.__annotations__ = {"return": wide}
    spec = callable_spec(read, name="store.read")
    section = model_schemas(spec)
    assert len(section) <= SCHEMA_BUDGET
    lines = section.splitlines()
    assert lines[0] == "Model schemas:"
    assert lines[-1] == abbreviation_notice("store.read")
    assert "store.read.contract['parameters']" in lines[-1]
    full_lines = {f"  field_number_{i:03d}_with_a_rather_long_name: int" for i in range(120)}
    assert all(line in full_lines for line in lines[2:-1])
    assert len(lines) - 3 < 120
    # the rest of doc() is not shortened
    text = render_tool(spec)
    assert text.startswith("store.read() -> 'Wide'\nTag: observation\n\nRead a wide record.")


def test_small_schema_has_no_notice() -> None:
    wide = _wide(3)

    def read() -> Any:
        """Read a narrow record."""

    read.__annotations__ = {"return": wide}
    assert "Abbreviated" not in model_schemas(callable_spec(read))


def test_opaque_and_unresolved_labels_in_nested_fields() -> None:
    class Handle:
        pass

    holder = make_dataclass("Holder", [("handle", Handle), ("later", "Nowhere")], frozen=True)

    def hold() -> Any:
        """Hold a handle."""

    hold.__annotations__ = {"return": holder}
    text = render_tool(callable_spec(hold))
    assert "  handle: Handle (opaque)" in text
    assert "  later: Nowhere (unresolved)" in text


class Priority(Enum):
    LOW = "low"
    HIGH = "high"


@dataclass(frozen=True)
class Job:
    name: str
    priority: Priority


def plan_job(priority: Priority = Priority.LOW) -> Job:
    """Plan a job."""
    return Job("j", priority)


def test_an_enum_shows_its_values_and_its_default_as_one() -> None:
    """An Enum showed as ``priority: Priority`` with no word of what to pass, and its default
    as ``...``; it crosses as its value, so doc() says the values and the default's."""
    assert (
        render_tool(callable_spec(plan_job))
        == """\
plan_job(priority: 'Priority' = 'low') -> 'Job'
Tag: observation

Plan a job.

Parameters:
- priority: Priority ('low' | 'high') — positional or keyword, default 'low'
Returns: Job

Model schemas:
Job
  name: str
  priority: Priority ('low' | 'high')"""
    )


class Filter(TypedDict, total=False):
    status: Literal["open", "closed"]
    label: str


class Window(TypedDict):
    start: int
    end: NotRequired[int]


def search_tickets(query: str = "", filter: Filter | None = None, window: Window | None = None):
    """Search tickets."""
    return []


def test_a_typed_dict_shows_its_keys_and_a_quoted_union_is_one_string() -> None:
    """A TypedDict showed as ``Filter (opaque)``, with no word of its keys; and the signature
    said ``filter: 'Filter' | None``, which fails where it is evaluated (a str | None)."""
    assert (
        render_tool(callable_spec(search_tickets))
        == """\
search_tickets(query: str = '', filter: 'Filter | None' = None, window: 'Window | None' = None)
Tag: observation

Search tickets.

Parameters:
- query: str — positional or keyword, default ''
- filter: Filter | None — positional or keyword, default None
- window: Window | None — positional or keyword, default None
Returns: Any

Model schemas:
Filter
  status: Literal['open', 'closed'] (optional)
  label: str (optional)
Window
  start: int
  end: int (optional)"""
    )
