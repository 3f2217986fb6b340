"""Field-backed sequences: ``@vis.sequence(field=...)`` declarations and sandbox behaviour."""

from __future__ import annotations

import sys
import types
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

import vis_core.extension as vis
from vis_core.contracts.sequence import sequence_field_of
from vis_core.ipc.values import encode_result

from .crossing import to_sandbox
from .examples import Page, PageList


def pages(*titles: str, total: int = 99) -> PageList:
    return PageList(tuple(Page(t) for t in titles), total)


def test_sdk_reexports_the_decorator() -> None:
    from vis_core.contracts.sequence import sequence

    assert vis.sequence is sequence


def test_iteration_len_truth_and_indexing() -> None:
    result = to_sandbox(pages("a", "b", "c"))
    assert [page.title for page in result] == ["a", "b", "c"]
    assert len(result) == 3
    assert bool(result) is True
    assert result[0].title == "a"
    assert result[-1].title == "c"
    assert [p.title for p in result[1:]] == ["b", "c"]
    assert type(result[1:]) is list


def test_length_and_truth_describe_received_items_not_total() -> None:
    empty = to_sandbox(pages(total=500))
    assert len(empty) == 0
    assert not empty
    assert empty.total == 500
    assert list(empty) == []


def test_backing_field_still_exposed_as_a_list_of_records() -> None:
    result = to_sandbox(pages("a"))
    assert result.results == result["results"]
    assert type(result.results) is list
    assert type(result[0]).__name__ == "Page"
    assert result.results[0]["title"] == "a"
    assert repr(result) == "PageList(results=[Page(title='a')], total=99)"


def test_field_and_item_assignment_unsupported_backing_list_is_local() -> None:
    result = to_sandbox(pages("a"))
    with pytest.raises(AttributeError):
        result.results = []
    with pytest.raises(TypeError):
        result[0] = None
    result.results.append("local")  # ordinary local data
    assert len(result) == 2


def test_non_integer_non_string_index_is_rejected() -> None:
    with pytest.raises(TypeError, match="integers, slices or field names"):
        to_sandbox(pages("a"))[1.5]


def test_a_list_backing_value_is_accepted() -> None:
    result = to_sandbox(PageList([Page("x")], 1))  # type: ignore[arg-type]
    assert [p.title for p in result] == ["x"]


@pytest.mark.parametrize(
    ("value", "kind"),
    [
        ("abc", "str"),
        ({"a": 1}, "dict"),
        ({Page("a")}, "set"),
        (type("Sub", (list,), {})([Page("a")]), "Sub"),
        (type("SubT", (tuple,), {})((Page("a"),)), "SubT"),
    ],
)
def test_backing_values_other_than_builtin_list_or_tuple_are_rejected(
    value: object, kind: str
) -> None:
    with pytest.raises(TypeError, match=f"must hold a built-in list or tuple .*got {kind}"):
        encode_result(PageList(value, 1))  # type: ignore[arg-type]


def test_generators_are_rejected_and_not_consumed() -> None:
    pulled: list[int] = []

    def lazy() -> Iterator[Page]:
        pulled.append(1)
        yield Page("a")

    with pytest.raises(TypeError, match="got generator"):
        encode_result(PageList(lazy(), 1))  # type: ignore[arg-type]
    assert pulled == []


def test_decorator_must_be_applied_outside_dataclass() -> None:
    with pytest.raises(TypeError, match="apply @vis.sequence outside"):

        @dataclass(frozen=True)
        @vis.sequence(field="results")
        class Inner:
            results: tuple[int, ...]


def test_field_must_exist_and_be_public() -> None:
    with pytest.raises(ValueError, match="no such dataclass field; public fields: items"):

        @vis.sequence(field="results")
        @dataclass(frozen=True)
        class Wrong:
            items: tuple[int, ...]

    with pytest.raises(ValueError, match="private fields do not cross"):
        vis.sequence(field="_items")
    with pytest.raises(TypeError, match="as a string"):
        vis.sequence(field=3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="decorates a dataclass"):
        vis.sequence(field="x")(len)  # type: ignore[type-var]


@pytest.mark.parametrize("annotation", ["str", "dict[str, int]", "set[int]", "Iterator[int]"])
def test_declared_types_that_cannot_hold_a_list_are_rejected(
    annotation: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    module = types.ModuleType("vis_records_bad_sequence")
    monkeypatch.setitem(sys.modules, module.__name__, module)
    source = (
        "from __future__ import annotations\n"
        "from collections.abc import Iterator\n"
        "from dataclasses import dataclass\n"
        "import vis_core.extension as vis\n"
        "@dataclass(frozen=True)\n"
        f"class Bad:\n    results: {annotation}\n"
        "vis.sequence(field='results')(Bad)\n"
    )
    with pytest.raises(TypeError, match="must hold a built-in list or tuple"):
        exec(compile(source, "<bad>", "exec"), vars(module))


def test_declaration_adds_metadata_not_methods() -> None:
    assert sequence_field_of(PageList) == "results"
    assert "__iter__" not in vars(PageList) and "__len__" not in vars(PageList)
    with pytest.raises(TypeError):
        iter(pages("a"))  # the host class is not made iterable


def test_subclasses_must_opt_in_explicitly() -> None:
    @dataclass(frozen=True)
    class MorePages(PageList):
        more: bool = False

    assert sequence_field_of(MorePages) is None
    result = to_sandbox(MorePages((Page("a"),), 1))
    with pytest.raises(TypeError):
        len(result)


def test_an_iter_method_or_a_results_field_does_not_opt_in() -> None:
    @dataclass(frozen=True)
    class Lookalike:
        results: tuple[int, ...]

        def __iter__(self) -> Iterator[int]:
            return iter(self.results)

    record = to_sandbox(Lookalike((1, 2)))
    assert sequence_field_of(Lookalike) is None
    with pytest.raises(TypeError):
        iter(record)
    assert record.results == [1, 2]


def test_third_party_values_adapted_into_a_decorated_dataclass() -> None:
    class ThirdParty:  # not ours, not changed
        def __init__(self) -> None:
            self.rows = ["r1", "r2"]

    @vis.sequence(field="rows")
    @dataclass(frozen=True)
    class Rows:
        rows: tuple[str, ...]

    result = to_sandbox(Rows(tuple(ThirdParty().rows)))
    assert list(result) == ["r1", "r2"]
    assert "r1" in result


@pytest.mark.parametrize(
    "annotation", ["list[int]", "tuple[int, ...]", "Sequence[int]", "NotYetDefined"]
)
def test_declared_list_like_or_unresolved_types_are_accepted(
    annotation: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    module = types.ModuleType("vis_records_good_sequence")
    monkeypatch.setitem(sys.modules, module.__name__, module)
    source = (
        "from __future__ import annotations\n"
        "from collections.abc import Sequence\n"
        "from dataclasses import dataclass\n"
        "import vis_core.extension as vis\n"
        "@vis.sequence(field='results')\n"
        "@dataclass(frozen=True)\n"
        f"class Good:\n    results: {annotation}\n"
    )
    exec(compile(source, "<good>", "exec"), vars(module))
    assert list(to_sandbox(module.Good([1, 2]))) == [1, 2]
