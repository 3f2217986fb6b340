"""Portable contracts: callable and namespace shape, defaults table, types and annotations."""

from __future__ import annotations

import functools
import importlib
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

import pytest

from vis_core.contracts.build import callable_spec
from vis_core.contracts.defaults import default_source
from vis_core.contracts.render import SCHEMA_BUDGET
from vis_core.extension.symbols import Symbol
from vis_core.extension_host.entry import compile_entry
from vis_core.extension_host.symbol_tools import tool_contract

from .examples import Greeter, PageList, Status, TriggerResult, search_pages, status, status_of


def test_greeter_contract_signature_text() -> None:
    contract = Symbol(Greeter(), name="greet").contract
    assert set(contract) == {"version", "name", "members"}
    assert contract["version"] == 1 and contract["name"] == "greet"
    [hello] = contract["members"]
    assert set(hello) == {
        "version",
        "name",
        "tag",
        "description",
        "signature",
        "parameters",
        "returns",
    }
    assert hello["name"] == "greet.hello"
    assert hello["signature"] == "(name: str, /, *, loud: bool = False) -> 'Results'"
    assert hello["description"] == "Generate greeting text; it never sends messages."
    assert hello["parameters"] == [
        {
            "name": "name",
            "kind": "positional_only",
            "type": {"kind": "scalar", "name": "str"},
            "required": True,
            "has_default": False,
            "default_is_none": False,
            "default_source": None,
        },
        {
            "name": "loud",
            "kind": "keyword_only",
            "type": {"kind": "scalar", "name": "bool"},
            "required": False,
            "has_default": True,
            "default_is_none": False,
            "default_source": "False",
        },
    ]


def test_contract_is_fresh_data() -> None:
    symbol = Symbol(search_pages)
    first = symbol.contract
    first["parameters"].clear()
    assert len(symbol.contract["parameters"]) == 2


def test_method_without_arguments_has_empty_signature() -> None:
    class Clock:
        def now(self):  # unannotated on purpose
            """Read the clock."""

    [member] = Symbol(Clock(), name="clock").contract["members"]
    assert member["signature"] == "()"
    assert member["parameters"] == []
    assert member["returns"] == {"kind": "any", "name": "Any"}


_OPAQUE = object()


def _defaults(
    required: int,
    none: str | None = None,
    false: bool = False,
    window: str = "1h",
    empty: tuple[int, ...] = (),
    opaque: object = _OPAQUE,
) -> None:
    """Exercise the defaults table."""


def test_defaults_table() -> None:
    rows = {
        p["name"]: (p["has_default"], p["default_is_none"], p["default_source"])
        for p in tool_contract(_defaults)["parameters"]
    }
    assert rows == {
        "required": (False, False, None),
        "none": (True, True, "None"),
        "false": (True, False, "False"),
        "window": (True, False, "'1h'"),
        "empty": (True, False, "()"),
        "opaque": (True, False, None),
    }
    assert tool_contract(_defaults)["signature"] == (
        "(required: int, none: str | None = None, false: bool = False, window: str = '1h', "
        "empty: tuple[int, ...] = (), opaque: object = ...) -> None"
    )


@pytest.mark.parametrize(
    ("value", "source"),
    [
        (None, "None"),
        (Ellipsis, "Ellipsis"),
        (True, "True"),
        (200, "200"),
        (-3, "-3"),
        (0.5, "0.5"),
        (1 + 2j, "(1+2j)"),
        ("it's\n", '"it\'s\\n"'),
        (b"\x00a", "b'\\x00a'"),
        ((1,), "(1,)"),
        ([1, [2]], "[1, [2]]"),
        ({"a": (1, 2)}, "{'a': (1, 2)}"),
        ({3}, "{3}"),
        (set(), "set()"),
        ("password=hunter2", "'password=hunter2'"),
    ],
)
def test_exact_literal_rendering(value: Any, source: str) -> None:
    assert default_source(value) == source


class _Repr:
    def __repr__(self) -> str:
        raise AssertionError("custom repr must never be called")


class _Int(int):
    pass


def test_opaque_defaults_render_as_none() -> None:
    cyclic: list[Any] = []
    cyclic.append(cyclic)
    for value in (
        _Repr(),
        _Int(3),
        float("inf"),
        float("nan"),
        complex(float("inf"), 0),
        cyclic,
        frozenset({1}),
        [_Repr()],
    ):
        assert default_source(value) is None


def test_budget_of_4096_characters_and_eight_levels() -> None:
    assert default_source("x" * 4094) == repr("x" * 4094)  # 4,096 characters with quotes
    assert default_source("x" * 4095) is None
    nested: Any = 0
    for _ in range(8):
        nested = [nested]
    assert default_source(nested) == "[" * 8 + "0" + "]" * 8
    assert default_source([nested]) is None


def test_variadic_parameters_are_not_required() -> None:
    def collect(*args: int, **kwargs: str) -> None:
        """Collect values."""

    params = tool_contract(collect)["parameters"]
    assert [(p["kind"], p["required"], p["has_default"]) for p in params] == [
        ("var_positional", False, False),
        ("var_keyword", False, False),
    ]
    assert tool_contract(collect)["signature"] == "(*args: int, **kwargs: str) -> None"


def test_status_record_has_property_field() -> None:
    returns = tool_contract(status_of)["returns"]
    assert returns["kind"] == "record" and returns["name"] == "Status"
    assert [(f["name"], f["required"], f["has_default"]) for f in returns["fields"]] == [
        ("env", True, False),
        ("phases", False, True),
        ("next_phase", False, False),
    ]
    assert returns["fields"][2]["type"] == {"kind": "scalar", "name": "int"}
    assert "sequence_field" not in returns
    assert str(Status("DEV04")) == "DEV04: next phase 1"


def test_pagelist_sequence_field_in_contract() -> None:
    returns = tool_contract(search_pages)["returns"]
    assert returns["sequence_field"] == "results"
    results = returns["fields"][0]["type"]
    assert results["variadic"] is True
    assert results["arguments"] == [
        {
            "kind": "record",
            "name": "Page",
            "fields": [
                {
                    "name": "title",
                    "type": {"kind": "scalar", "name": "str"},
                    "required": True,
                    "has_default": False,
                    "default_is_none": False,
                },
            ],
        },
    ]
    assert PageList((), 0).total == 0


def test_trigger_result_as_parameter() -> None:
    contract = tool_contract(status)
    assert contract["signature"] == "(result: 'TriggerResult') -> str"
    assert [f["name"] for f in contract["parameters"][0]["type"]["fields"]] == [
        "http_code",
        "job_path",
    ]
    assert TriggerResult(201, "docs/build").http_code == 201


@dataclass(frozen=True)
class Node:
    label: str
    children: tuple[Node, ...] = ()
    hidden_: int = field(default=0)
    _private: int = 0
    computed: int = field(init=False, default=0)


def test_recursive_records_use_references_and_skip_private_fields() -> None:
    def tree() -> Node:
        """Read the tree."""

    returns = tool_contract(tree)["returns"]
    names = [f["name"] for f in returns["fields"]]
    assert names == ["label", "children", "hidden_", "computed"]
    assert returns["fields"][1]["type"]["arguments"] == [{"kind": "reference", "name": "Node"}]
    computed = returns["fields"][3]
    assert (computed["required"], computed["has_default"]) == (False, True)


def test_fixed_tuple_literal_annotated_union_and_generic() -> None:
    def shapes(
        pair: tuple[int, str],
        mode: Literal["fast", "full"],
        query: Annotated[str, "Words to find"],
        tags: dict[str, list[int]] | None = None,
    ) -> None:
        """Exercise types."""

    params = {p["name"]: p["type"] for p in tool_contract(shapes)["parameters"]}
    assert params["pair"] == {
        "kind": "generic",
        "name": "tuple[int, str]",
        "arguments": [{"kind": "scalar", "name": "int"}, {"kind": "scalar", "name": "str"}],
    }
    assert params["mode"] == {
        "kind": "literal",
        "name": "Literal['fast', 'full']",
        "values": ["fast", "full"],
    }
    assert params["query"] == {"kind": "scalar", "name": "str", "description": "Words to find"}
    assert params["tags"]["kind"] == "union"
    assert params["tags"]["name"] == "dict[str, list[int]] | None"


class Handle:
    """A plain class: known, but its structure is not described."""


def test_unresolved_and_opaque_labels() -> None:
    def lookup(key: Missing, handle: Handle) -> list[Missing]:  # type: ignore[name-defined] # noqa: F821
        """Look one key up."""

    contract = tool_contract(lookup)
    params = {p["name"]: p["type"] for p in contract["parameters"]}
    assert params["key"] == {"kind": "unresolved", "name": "Missing"}
    assert params["handle"] == {"kind": "opaque", "name": "Handle"}
    assert contract["returns"]["arguments"] == [{"kind": "unresolved", "name": "Missing"}]
    assert contract["signature"] == "(key: 'Missing', handle: 'Handle') -> list['Missing']"


def test_local_forward_reference_stays_unresolved() -> None:
    @dataclass
    class Local:
        x: int

    def make() -> Local:
        """Make a local record."""

    assert tool_contract(make)["returns"] == {"kind": "unresolved", "name": "Local"}


def test_expressions_are_never_evaluated() -> None:
    calls: list[str] = []

    def boom() -> type:
        calls.append("called")
        return int

    def odd(x: boom()) -> None:  # type: ignore[valid-type]
        """Annotated with a call."""

    sys.modules[__name__].boom = boom  # type: ignore[attr-defined]
    try:
        assert tool_contract(odd)["parameters"][0]["type"] == {
            "kind": "unresolved",
            "name": "boom()",
        }
    finally:
        del sys.modules[__name__].boom  # type: ignore[attr-defined]
    assert calls == []


@pytest.fixture
def cross_module(tmp_path: Path) -> Iterator[Any]:
    (tmp_path / "xdecorators.py").write_text(
        "from functools import wraps\n\n\n"
        "def traced(fn):\n"
        "    @wraps(fn)\n"
        "    def call(*args, **kwargs):\n"
        "        return fn(*args, **kwargs)\n"
        "    return call\n"
    )
    (tmp_path / "xmodels.py").write_text(
        "from __future__ import annotations\n"
        "from dataclasses import dataclass\n\n\n"
        "@dataclass(frozen=True)\nclass Result:\n    text: str\n"
    )
    (tmp_path / "xtools.py").write_text(
        "from __future__ import annotations\n"
        "from dataclasses import dataclass\n"
        "import xmodels\n"
        "from xdecorators import traced\n\n\n"
        "@dataclass(frozen=True)\nclass Result:\n    text: str\n\n\n"
        "class Tools:\n"
        "    @traced\n"
        '    def read(self, text: str = "ready") -> tuple[Result, ...]:\n'
        '        """Read one result without changing state."""\n'
        "        return (Result(text),)\n\n"
        "    @traced\n"
        "    def model(self) -> xmodels.Result:\n"
        '        """Read a qualified model."""\n'
        "        return xmodels.Result('m')\n"
    )
    sys.path.insert(0, str(tmp_path))
    try:
        yield importlib.import_module("xtools")
    finally:
        sys.path.remove(str(tmp_path))
        for name in ("xtools", "xdecorators", "xmodels"):
            sys.modules.pop(name, None)


def test_tools_read_cross_module_wraps(cross_module: Any) -> None:
    contract = Symbol(cross_module.Tools(), name="tools").contract
    read, model = contract["members"]
    assert read["name"] == "tools.read"
    assert read["signature"] == "(text: str = 'ready') -> tuple['Result', ...]"
    assert read["parameters"][0]["default_source"] == "'ready'"
    assert read["returns"]["variadic"] is True
    [result] = read["returns"]["arguments"]
    assert result["fields"][0] == {
        "name": "text",
        "type": {"kind": "scalar", "name": "str"},
        "required": True,
        "has_default": False,
        "default_is_none": False,
    }
    assert model["returns"]["kind"] == "record"
    assert model["returns"]["name"] == "Result"
    assert model["signature"] == "() -> 'Result'"


def test_cyclic_wrapped_chain_raises() -> None:
    def a() -> None:
        """A."""

    def b() -> None:
        """B."""

    a.__wrapped__ = b  # type: ignore[attr-defined]
    b.__wrapped__ = a  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="cyclic __wrapped__ chain"):
        tool_contract(a)
    with pytest.raises(ValueError, match="cyclic __wrapped__ chain"):
        Symbol(a)


def test_wraps_keeps_wrapped_signature_not_wrapper() -> None:
    def deco(fn: Any) -> Any:
        @functools.wraps(fn)
        def inner(*args: Any, **kwargs: Any) -> Any:
            return fn(*args, **kwargs)

        return inner

    @deco
    def greet(name: str) -> str:
        """Greet someone."""
        return name

    assert tool_contract(greet)["signature"] == "(name: str) -> str"


def test_entry_source_compiles_with_postponed_annotations() -> None:
    source = (
        "def later() -> Result:\n"
        '    """Return a result defined later."""\n'
        "class Result:\n    x: int\n"
    )
    namespace: dict[str, Any] = {"__name__": "entry_under_test"}
    exec(compile_entry(source, "entry.py"), namespace)
    assert namespace["later"].__annotations__ == {"return": "Result"}
    with pytest.raises(SyntaxError) as caught:
        compile_entry("def broken(:\n", "/ext/broken.py")
    assert caught.value.filename == "/ext/broken.py"


def test_schema_budget_constant() -> None:
    assert SCHEMA_BUDGET == 2048
    assert callable_spec(search_pages).tag == "observation"
