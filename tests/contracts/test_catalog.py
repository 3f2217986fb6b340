"""vis.Catalog and vis.testing.assert_catalog."""

from __future__ import annotations

import pytest

from vis_core.contracts.specs import HelpDocument, NamespaceSpec, ToolSpec
from vis_core.extension.catalog import Catalog
from vis_core.extension.symbols import Symbol, method
from vis_core.extension.testing import assert_catalog
from vis_core.model.activity import Activity

from .examples import REPORT_ACTIVITY, Greeter, report


class Items:
    @method(activity=Activity(label="Read item", show_start=False))
    def read(self, item_id: str) -> str:
        """Read one stored item."""
        return item_id

    @method(tag="mutation", activity=Activity(label="Write item"))
    def write(self, item_id: str, text: str) -> None:
        """Write one stored item."""

    @method(is_hidden=True, activity=Activity(label="Compact store"))
    def compact(self) -> None:
        """Compact storage files."""


class Store:
    def __init__(self) -> None:
        self.items = Items()


@pytest.fixture
def catalog() -> Catalog:
    return Catalog(
        [
            Symbol(report, activity=REPORT_ACTIVITY),
            Symbol(Store(), name="store"),
            Symbol(Greeter(), name="greet"),
        ]
    )


def test_spec_none_lists_roots(catalog: Catalog) -> None:
    roots = catalog.spec()
    assert isinstance(roots, tuple)
    assert [type(r).__name__ for r in roots] == ["ToolSpec", "NamespaceSpec", "NamespaceSpec"]
    assert [r.name for r in roots] == ["report", "store", "greet"]


def test_spec_of_callable_and_namespace(catalog: Catalog) -> None:
    read = catalog.spec("store.items.read")
    assert isinstance(read, ToolSpec)
    assert read.signature == "(item_id: str) -> str"
    items = catalog.spec("store.items")
    assert isinstance(items, NamespaceSpec)
    assert [m.name for m in items.members] == ["store.items.read", "store.items.write"]
    assert catalog.spec("store") == NamespaceSpec("store", items.members)


def test_records_are_frozen_slotted_tuples(catalog: Catalog) -> None:
    read = catalog.spec("store.items.read")
    assert isinstance(read, ToolSpec)
    assert isinstance(read.parameters, tuple)
    assert not hasattr(read, "__dict__")
    with pytest.raises(AttributeError):
        read.name = "x"  # type: ignore[misc]


def test_hidden_and_unknown_names_raise_value_error(catalog: Catalog) -> None:
    for name in ("store.items.compact", "missing", "store.item"):
        with pytest.raises(ValueError, match="no public callable or namespace"):
            catalog.spec(name)


def test_non_string_names_raise_type_error(catalog: Catalog) -> None:
    with pytest.raises(TypeError):
        catalog.spec(3)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        catalog.help(None)  # type: ignore[arg-type]


def test_help_documents(catalog: Catalog) -> None:
    document = catalog.help("greet.hello")
    assert isinstance(document, HelpDocument)
    assert document.text.startswith("greet.hello(name: str, /, *, loud: bool = False)")
    assert document.tool == catalog.spec("greet.hello")
    whole = catalog.help("store")
    assert whole.text.startswith(
        "store: 2 tools\n- store.items.read(item_id: str) -> str\n"
        "- store.items.write(item_id: str, text: str) -> None"
    )
    assert "Tag: mutation" in whole.text


def test_duplicate_declaration_names_are_rejected() -> None:
    with pytest.raises(ValueError, match="declaration name 'report' is used twice"):
        Catalog([Symbol(report), Symbol(report)])
    with pytest.raises(TypeError, match="symbols\\[0\\] is function"):
        Catalog([report])  # type: ignore[list-item]


def test_catalog_is_itself_an_object_namespace(catalog: Catalog) -> None:
    symbol = Symbol(catalog, name="store_catalog")
    assert [(e.path, e.activity.show_start if e.activity else None) for e in symbol.entries] == [
        ("store_catalog.spec", False),
        ("store_catalog.help", False),
    ]


def test_assert_catalog_passes(catalog: Catalog) -> None:
    assert_catalog(
        catalog,
        names=["report", "store.items.read", "store.items.write", "greet.hello"],
        mutations=["store.items.write"],
    )


def test_assert_catalog_reports_names_and_mutations(catalog: Catalog) -> None:
    with pytest.raises(AssertionError) as caught:
        assert_catalog(catalog, names=["report", "greet.hello", "store.items.gone"], mutations=[])
    message = str(caught.value)
    assert "missing public callables: store.items.gone" in message
    assert "unexpected public callables: store.items.read, store.items.write" in message
    assert "tagged 'mutation' but not expected: store.items.write" in message


def test_assert_catalog_reports_unresolved_nested_types() -> None:
    def load(key: str) -> list[Ghost]:  # type: ignore[name-defined] # noqa: F821
        """Load ghosts."""

    with pytest.raises(AssertionError, match="load: the return type is Ghost \\(unresolved\\)"):
        assert_catalog(Catalog([Symbol(load)]), names=["load"])
