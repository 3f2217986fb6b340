"""vis.Symbol and vis.method: what is exported, what is rejected, and with which message."""

from __future__ import annotations

import json

import pytest

from vis_core.extension.symbols import Symbol, method
from vis_core.extension_host.symbol_tools import symbol_host_tools
from vis_core.model.activity import Activity, SymbolTag

from .examples import REPORT_ACTIVITY, Greeter, report


def test_function_symbol_uses_function_name_and_defaults() -> None:
    symbol = Symbol(report, activity=REPORT_ACTIVITY)
    assert symbol.name == "report"
    assert symbol.tag is SymbolTag.OBSERVATION
    assert symbol.is_hidden is False
    [entry] = symbol.entries
    assert (entry.path, entry.activity) == ("report", REPORT_ACTIVITY)


def test_explicit_name_overrides_function_name() -> None:
    assert Symbol(report, name="make_report", activity=REPORT_ACTIVITY).entries[0].path == (
        "make_report"
    )


@pytest.mark.parametrize("tag", ["observation", "mutation", "verification", "external"])
def test_every_tag_is_accepted(tag: str) -> None:
    assert Symbol(report, tag=tag).tag == SymbolTag(tag)


def test_unknown_tag_is_rejected() -> None:
    with pytest.raises(
        ValueError,
        match="tag must be one of observation, mutation, verification, external; got 'write'",
    ):
        Symbol(report, tag="write")


def test_is_hidden_must_be_bool() -> None:
    with pytest.raises(ValueError, match="is_hidden must be True or False"):
        Symbol(report, is_hidden="yes")  # type: ignore[arg-type]


def test_missing_or_blank_docstring_is_rejected() -> None:
    def quiet() -> None:
        pass

    def blank() -> None:
        """ """

    for fn in (quiet, blank):
        with pytest.raises(ValueError, match=f"tool '{fn.__name__}' needs a nonblank docstring"):
            Symbol(fn)


def test_activity_none_is_allowed_but_reported() -> None:
    symbol = Symbol(report)
    assert symbol.entries[0].activity is None
    assert symbol.missing_activity == ("report",)
    assert Symbol(report, activity=REPORT_ACTIVITY).missing_activity == ()


def test_activity_must_be_an_activity() -> None:
    with pytest.raises(ValueError, match=r"activity must be a vis.Activity\(label=...\) or None"):
        Symbol(report, activity="Prepare report")  # type: ignore[arg-type]


def test_async_function_is_accepted() -> None:
    async def fetch(url: str) -> str:
        """Fetch one page."""
        return url

    symbol = Symbol(fetch, tag="external", activity=Activity(label="Fetch page"))
    assert symbol.contract["signature"] == "(url: str) -> str"


def test_lambda_needs_a_name() -> None:
    fn = lambda: None  # noqa: E731
    fn.__doc__ = "Do nothing."
    with pytest.raises(ValueError, match="set name= explicitly"):
        Symbol(fn)
    assert Symbol(fn, name="noop").name == "noop"


@pytest.mark.parametrize("bad", ["1st", "with space", "class", "_private"])
def test_name_must_be_public_identifier(bad: str) -> None:
    with pytest.raises(ValueError, match="name"):
        Symbol(report, name=bad)


def test_classes_modules_and_values_cannot_be_symbols() -> None:
    with pytest.raises(ValueError, match="got the class Greeter; export an instance"):
        Symbol(Greeter, name="greet")
    with pytest.raises(ValueError, match="got the module json"):
        Symbol(json, name="j")
    with pytest.raises(ValueError, match="got a int value"):
        Symbol(3, name="three")


def test_object_namespace_exports_public_methods() -> None:
    symbol = Symbol(Greeter(), name="greet")
    assert [e.path for e in symbol.entries] == ["greet.hello"]
    assert symbol.entries[0].activity == Activity(label="Generate greeting", show_start=False)
    assert symbol.namespaces == ("greet",)


def test_object_namespace_needs_explicit_name() -> None:
    with pytest.raises(ValueError, match="set name= explicitly"):
        Symbol(Greeter())


def test_namespace_level_activity_is_rejected() -> None:
    with pytest.raises(ValueError, match="namespace-level Activity is rejected"):
        Symbol(Greeter(), name="greet", activity=Activity(label="Greet"))


def test_nested_namespaces_and_private_names() -> None:
    class Items:
        @method(tag="mutation", activity=Activity(label="Add item"))
        def add(self, text: str) -> None:
            """Add one item."""

        def read(self) -> list[str]:
            """Read all items."""
            return []

        def _helper(self) -> None:
            pass

    class Store:
        def __init__(self) -> None:
            self.items = Items()
            self._cache = {"a": 1}

    symbol = Symbol(Store(), name="store", tag="observation")
    assert [(e.path, e.tag.value) for e in symbol.entries] == [
        ("store.items.add", "mutation"),
        ("store.items.read", "observation"),
    ]
    assert symbol.namespaces == ("store", "store.items")


def test_rejected_namespace_members_are_listed_with_their_path() -> None:
    class Child:
        def ping(self) -> str:
            """Answer pong."""
            return "pong"

    class Bad:
        limit = 3
        codec = json
        Kind = Child

        def __init__(self) -> None:
            self.child = Child()
            self.again = self.child
            self.me = self

        @property
        def size(self) -> int:
            return 1

        def nodoc(self) -> None:
            pass

    with pytest.raises(ValueError) as caught:
        Symbol(Bad(), name="bad")
    message = str(caught.value)
    for expected in (
        "bad.limit is a public scalar (int)",
        "bad.codec is a module",
        "bad.Kind is a class",
        "bad.size is a property",
        "tool 'bad.nodoc' needs a nonblank docstring",
        "bad.again repeats the object already exported as bad.child",
        "bad.me is a cycle: it refers back to bad",
    ):
        assert expected in message


def test_namespace_without_methods_is_rejected() -> None:
    class Empty:
        pass

    with pytest.raises(ValueError, match="empty has no public methods to export"):
        Symbol(Empty(), name="empty")


def test_method_metadata_does_not_change_the_method() -> None:
    def plain(self: object, x: int = 1) -> int:
        """Return x."""
        return x

    decorated = method(tag="verification", is_hidden=True)(plain)
    assert decorated is plain
    assert plain(None, 2) == 2


def test_method_validates_its_arguments() -> None:
    with pytest.raises(TypeError, match="with parentheses"):
        method(report)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="tag must be one of"):
        method(tag="bogus")
    with pytest.raises(ValueError, match="activity must be"):
        method(activity=object())  # type: ignore[arg-type]


def test_hidden_method_and_hidden_namespace() -> None:
    class Tools:
        @method(is_hidden=True)
        def secret(self) -> None:
            """Internal helper."""

        def visible(self) -> None:
            """Public helper."""

    symbol = Symbol(Tools(), name="tools")
    assert [(e.path, e.is_hidden) for e in symbol.entries] == [
        ("tools.secret", True),
        ("tools.visible", False),
    ]
    assert [m["name"] for m in symbol.contract["members"]] == ["tools.visible"]
    hidden = Symbol(Tools(), name="tools", is_hidden=True)
    assert all(e.is_hidden for e in hidden.entries)


def test_symbol_host_tools_carry_metadata_and_prefix() -> None:
    symbol = Symbol(Greeter(), name="greet")
    [tool] = symbol_host_tools(symbol, owner="greeter", prefix=None)
    assert (tool.name, tool.owner, tool.tag, tool.is_hidden) == (
        "greet.hello",
        "greeter",
        SymbolTag.OBSERVATION,
        False,
    )
    assert tool.activity is not None and tool.activity.label == "Generate greeting"
    assert tool.fn("Ada").greeting == "Hello, Ada"
    [prefixed] = symbol_host_tools(
        Symbol(report, tag="mutation", is_hidden=True), owner="reports", prefix="reports"
    )
    assert (prefixed.name, prefixed.tag, prefixed.is_hidden) == (
        "reports.report",
        SymbolTag.MUTATION,
        True,
    )
