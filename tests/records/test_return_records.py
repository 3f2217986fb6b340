"""Return typed objects: fields, properties, ``__str__``, access, errors and repr in the sandbox."""

from __future__ import annotations

import functools
import pickle
from dataclasses import dataclass, field

import pytest

from vis_core.records.record import Record

from .crossing import to_sandbox
from .examples import Owner, Page, Repo, Status


def test_fields_and_property_cross_and_str_is_the_report() -> None:
    status = to_sandbox(Status("DEV04"))
    assert status.env == "DEV04"
    assert status.phases == []
    assert status.next_phase == 1
    assert str(status) == "DEV04: next phase 1"
    assert repr(status) == "Status(env='DEV04', phases=[], next_phase=1)"


def test_print_shows_the_report(capsys: pytest.CaptureFixture[str]) -> None:
    print(to_sandbox(Status("DEV04", (1, 2))))
    assert capsys.readouterr().out == "DEV04: next phase 3\n"


def test_other_methods_and_private_fields_stay_on_the_host() -> None:
    repo = to_sandbox(Repo("vis", Owner("ada")))
    with pytest.raises(AttributeError):
        repo._token  # noqa: B018
    assert "_token" not in repr(repo)
    status = to_sandbox(Status("DEV04"))
    with pytest.raises(AttributeError, match="available fields: env, phases, next_phase"):
        status.text_report()


def test_without_own_str_the_text_is_the_repr() -> None:
    page = to_sandbox(Page("Intro"))
    assert str(page) == repr(page) == "Page(title='Intro')"


def test_property_is_read_once_when_the_tool_answers() -> None:
    calls: list[int] = []

    @dataclass(frozen=True)
    class Counted:
        n: int

        @property
        def double(self) -> int:
            calls.append(1)
            return self.n * 2

    record = to_sandbox(Counted(4))
    assert (record.double, record["double"], record.double) == (8, 8, 8)
    assert len(calls) == 1


def test_property_that_raises_is_left_out() -> None:
    @dataclass(frozen=True)
    class Flaky:
        n: int

        @property
        def broken(self) -> int:
            raise RuntimeError("no")

        @property
        def fine(self) -> int:
            return self.n

    record = to_sandbox(Flaky(3))
    assert repr(record) == "Flaky(n=3, fine=3)"
    assert not hasattr(record, "broken")


def test_cached_property_crosses_and_private_property_does_not() -> None:
    @dataclass(frozen=True)
    class Cached:
        n: int

        @functools.cached_property
        def squared(self) -> int:
            return self.n * self.n

        @property
        def _hidden(self) -> int:
            return 0

    assert repr(to_sandbox(Cached(3))) == "Cached(n=3, squared=9)"


def test_a_str_that_raises_falls_back_to_repr() -> None:
    @dataclass(frozen=True)
    class Loud:
        n: int

        def __str__(self) -> str:
            raise RuntimeError("no text")

    record = to_sandbox(Loud(1))
    assert str(record) == "Loud(n=1)"


def test_attribute_and_item_access_including_nested_records() -> None:
    repo = to_sandbox(Repo("vis", Owner("ada", "ada@example.org"), ["ai"]))
    assert repo.owner.name == "ada"
    assert repo["owner"]["email"] == "ada@example.org"
    assert repo["owner"].name == repo.owner["name"]
    assert isinstance(repo.owner, Record)
    assert repo.slug == "ada/vis"  # an init=False field is a public field and crosses
    assert type(repo).__name__ == "Repo"


def test_unknown_names_raise_listing_available_fields() -> None:
    status = to_sandbox(Status("DEV04"))
    with pytest.raises(KeyError) as key_error:
        status["missing"]
    assert "no field 'missing'; available fields: env, phases, next_phase" in str(key_error.value)
    with pytest.raises(AttributeError) as attr_error:
        status.missing  # noqa: B018
    assert "no field 'missing'; available fields: env, phases, next_phase" in str(attr_error.value)
    assert hasattr(status, "env") and not hasattr(status, "missing")
    assert getattr(status, "missing", "default") == "default"


def test_records_are_not_iterable_sized_or_int_indexable() -> None:
    status = to_sandbox(Status("DEV04"))
    with pytest.raises(TypeError):
        iter(status)
    with pytest.raises(TypeError):
        len(status)
    with pytest.raises(TypeError, match="indices must be field names"):
        status[0]
    with pytest.raises(TypeError):
        "env" in status  # noqa: B015


def test_field_and_item_assignment_are_unsupported() -> None:
    status = to_sandbox(Status("DEV04"))
    with pytest.raises(AttributeError, match="read-only"):
        status.env = "PROD"
    with pytest.raises(TypeError, match="item assignment"):
        status["env"] = "PROD"
    with pytest.raises(AttributeError):
        del status.env
    assert status.env == "DEV04"


def test_mapping_method_names_stay_available_for_fields() -> None:
    @dataclass(frozen=True)
    class Inventory:
        items: tuple[str, ...]
        keys: int
        get: str = "x"

    record = to_sandbox(Inventory(("a",), 2))
    assert record.items == ["a"]
    assert record.keys == 2
    assert record.get == "x"


def test_containers_of_records_and_tuples_become_lists() -> None:
    value = to_sandbox({"pages": (Page("a"), Page("b")), "by": {"x": Page("c")}})
    assert [p.title for p in value["pages"]] == ["a", "b"]
    assert value["by"]["x"].title == "c"
    assert to_sandbox(Status("E", (1, 2))).phases == [1, 2]


def test_records_survive_pickling_for_saved_sandbox_variables() -> None:
    status = to_sandbox(Status("DEV04", (1,)))
    again = pickle.loads(pickle.dumps(status))
    assert again == status
    assert str(again) == "DEV04: next phase 2"
    assert again.next_phase == 2


def test_records_compare_by_type_and_fields() -> None:
    assert to_sandbox(Page("a")) == to_sandbox(Page("a"))
    assert to_sandbox(Page("a")) != to_sandbox(Page("b"))
    with pytest.raises(TypeError):
        hash(to_sandbox(Page("a")))


def test_dir_lists_the_fields() -> None:
    assert dir(to_sandbox(Status("DEV04"))) == ["env", "next_phase", "phases"]


def test_a_record_field_default_factory_value_crosses() -> None:
    @dataclass(frozen=True)
    class Bag:
        things: list[int] = field(default_factory=lambda: [1, 2])

    assert to_sandbox(Bag()).things == [1, 2]


def test_plain_objects_expose_their_public_attributes() -> None:
    class Build:
        def __init__(self) -> None:
            self.number = 7
            self.page = Page("log")
            self._secret = "no"

        @property
        def label(self) -> str:  # only dataclasses send properties
            return "b"

        def __str__(self) -> str:  # only dataclasses send their text
            return "build 7"

    record = to_sandbox(Build())
    assert repr(record) == str(record) == "Build(number=7, page=Page(title='log'))"
    assert record.page.title == "log"


def test_functions_classes_and_enums_are_not_records() -> None:
    import enum

    class Color(enum.Enum):
        RED = 1

    for value in (len, Page, ValueError("x")):
        with pytest.raises(TypeError, match="cannot cross the sandbox boundary"):
            to_sandbox(value)
    assert to_sandbox(Color.RED) == 1  # as its value
