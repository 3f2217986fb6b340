"""Accept records as arguments: rebuilding into the tool's own dataclass."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

import pytest

from vis_core.records import coerce_arguments

from . import examples as ex
from .crossing import to_host, to_sandbox


def call(fn: Any, *args: Any, **kwargs: Any) -> Any:
    """What the engine does: rebuild the arguments, then call the tool."""
    args2, kwargs2 = coerce_arguments(fn, args, kwargs)
    return fn(*args2, **kwargs2)


def roundtrip(value: Any) -> Any:
    """A tool result sent to the sandbox and passed straight back as an argument."""
    return to_host(to_sandbox(value))


def test_returned_record_passed_back_is_the_tools_class() -> None:
    result = roundtrip(ex.trigger("docs/build"))
    assert call(ex.status, result) == "docs/build: 201"
    (rebuilt,), _ = coerce_arguments(ex.status, (result,), {})
    assert type(rebuilt) is ex.TriggerResult
    assert rebuilt == ex.TriggerResult(201, "docs/build")


def test_keyword_arguments_are_rebuilt_too() -> None:
    _, kwargs = coerce_arguments(ex.status, (), {"result": roundtrip(ex.TriggerResult(1, "a"))})
    assert kwargs == {"result": ex.TriggerResult(1, "a")}


def test_dict_with_the_field_names_is_rebuilt() -> None:
    assert call(ex.status, to_host({"http_code": 200, "job_path": "x"})) == "x: 200"


def test_dataclass_defined_in_sandbox_code_is_rebuilt() -> None:
    @dataclass
    class SandboxTrigger:  # stands for a class the model defined in python_execution
        http_code: int
        job_path: str

    (rebuilt,), _ = coerce_arguments(ex.status, (to_host(SandboxTrigger(202, "y")),), {})
    assert rebuilt == ex.TriggerResult(202, "y")


def test_property_fields_are_ignored_and_the_constructor_gets_declared_fields() -> None:
    record = roundtrip(ex.Status("DEV04", (1, 2)))
    assert record.next_phase == 3  # the property crossed as a field

    def show(status: ex.Status) -> ex.Status:
        """Show a status."""
        return status

    rebuilt = call(show, record)
    assert type(rebuilt) is ex.Status
    assert rebuilt == ex.Status("DEV04", (1, 2))
    assert call(show, {"env": "E", "next_phase": 9}) == ex.Status("E")


def test_union_uses_the_first_member_that_fits_in_declared_order() -> None:
    assert call(ex.describe, {"env": "E"}) == "Status"
    assert call(ex.describe, {"http_code": 1, "job_path": "p"}) == "TriggerResult"

    def either(value: ex.Page | ex.Owner) -> Any:
        """Page and Owner both accept a one-key dict in different shapes."""
        return value

    assert call(either, {"name": "ada"}) == ex.Owner("ada")
    assert call(either, {"title": "t"}) == ex.Page("t")


def test_union_with_no_fitting_member_passes_the_value_unchanged() -> None:
    value = {"something": "else"}
    assert call(ex.describe, value) == "dict"


def test_optional_record() -> None:
    assert call(ex.maybe, roundtrip(ex.TriggerResult(1, "a"))) == ex.TriggerResult(1, "a")
    assert call(ex.maybe, None) is None
    assert call(ex.maybe) is None


def test_records_inside_list_tuple_frozenset_and_dict() -> None:
    t1, t2 = ex.TriggerResult(1, "a"), ex.TriggerResult(2, "b")
    items, pair, rest, unique, by_name = call(
        ex.many,
        roundtrip([t1, t2]),
        roundtrip((t1, ex.Status("S"))),
        roundtrip((t1, t2)),
        roundtrip([t1]),
        roundtrip({"one": t1}),
    )
    assert items == [t1, t2] and type(items) is list
    assert pair == (t1, ex.Status("S")) and type(pair) is tuple
    assert rest == (t1, t2) and type(rest) is tuple
    assert unique == frozenset({t1})
    assert by_name == {"one": t1}


def test_records_inside_set_annotation() -> None:
    def tags(values: set[ex.Page]) -> set[ex.Page]:
        """A set of records."""
        return values

    assert call(tags, to_host([{"title": "a"}])) == {ex.Page("a")}


def test_nested_record_fields_are_rebuilt_and_init_false_is_skipped() -> None:
    sent = ex.Repo("vis", ex.Owner("ada"), ["ai"])
    repo = call(ex.repo_tool, roundtrip(sent))
    assert type(repo.owner) is ex.Owner
    assert repo == sent
    assert repo.slug == "ada/vis"  # set by __post_init__, not passed to the constructor


def test_fields_with_defaults_can_be_left_out() -> None:
    repo = call(ex.repo_tool, {"name": "vis", "owner": {"name": "ada"}})
    assert repo == ex.Repo("vis", ex.Owner("ada"))
    assert repo.topics == []


def test_unknown_keys_reach_the_tool_unchanged() -> None:
    value = {"http_code": 1, "job_path": "a", "extra": True}
    (passed,), _ = coerce_arguments(ex.status, (value,), {})
    assert passed is value


def test_missing_required_field_reaches_the_tool_unchanged() -> None:
    (passed,), _ = coerce_arguments(ex.status, ({"http_code": 1},), {})
    assert passed == {"http_code": 1}


def test_a_record_that_does_not_fit_arrives_as_a_plain_dict() -> None:
    record = roundtrip(ex.Page("t"))
    (passed,), _ = coerce_arguments(ex.status, (record,), {})
    assert passed == {"title": "t"} and type(passed) is dict


def test_constructor_error_fails_the_call() -> None:
    with pytest.raises(ValueError, match="value must be >= 0, got -1"):
        call(ex.checked, {"value": -1})
    assert call(ex.checked, {"value": 2}) == ex.Checked(2)


def test_required_private_field_cannot_be_rebuilt() -> None:
    value = {"name": "n"}
    assert call(ex.secretive, value) is value
    assert call(ex.secretive, {"name": "n", "_secret": "s"}) == {"name": "n", "_secret": "s"}


def test_private_field_with_default_is_left_to_its_default() -> None:
    repo = call(ex.repo_tool, roundtrip(ex.Repo("vis", ex.Owner("ada"), _token="mine")))
    assert repo._token == "hidden"


def test_unresolved_annotation_leaves_a_dict() -> None:
    record = roundtrip(ex.TriggerResult(1, "a"))
    (passed,), _ = coerce_arguments(ex.unresolved, (record,), {})
    assert passed == {"http_code": 1, "job_path": "a"} and type(passed) is dict


def test_unresolved_field_annotation_leaves_that_field_a_dict() -> None:
    def take(value: ex.Unresolved) -> Any:
        """A record with an unresolvable field type."""
        return value

    rebuilt = call(take, roundtrip(ex.Unresolved("n", ex.Page("p"))))  # type: ignore[arg-type]
    assert type(rebuilt) is ex.Unresolved
    assert rebuilt.later == {"title": "p"}


def test_dict_annotation_gets_the_record_as_a_dict() -> None:
    def raw(value: dict[str, Any]) -> Any:
        """Takes a mapping."""
        return value

    assert call(raw, roundtrip(ex.TriggerResult(1, "a"))) == {"http_code": 1, "job_path": "a"}


def test_functools_wraps_chain_resolves_in_the_wrapped_function() -> None:
    assert call(ex.wrapped_status, roundtrip(ex.TriggerResult(3, "w"))) == "w: 3"


def test_variadic_parameters_are_rebuilt_by_their_annotations() -> None:
    def gather(*results: ex.TriggerResult, **named: ex.Page) -> Any:
        """Variadic records."""
        return results, named

    results, named = call(gather, {"http_code": 1, "job_path": "a"}, extra={"title": "t"})
    assert results == (ex.TriggerResult(1, "a"),)
    assert named == {"extra": ex.Page("t")}


def test_arguments_that_do_not_bind_are_left_for_python_to_reject() -> None:
    args, kwargs = coerce_arguments(ex.status, (roundtrip(ex.Page("t")), 2), {})
    assert args == ({"title": "t"}, 2) and kwargs == {}
    with pytest.raises(TypeError):
        ex.status(*args, **kwargs)


def test_unannotated_parameters_get_plain_dicts_without_an_owner() -> None:
    value, rest, named = call(ex.loose, roundtrip(ex.TriggerResult(1, "a")))
    assert value == {"http_code": 1, "job_path": "a"} and type(value) is dict


def test_instances_of_the_tools_own_class_pass_through_untouched() -> None:
    value = ex.NeedsSecret("n", "s")  # has a required private field, yet already the right type

    def take(item: ex.NeedsSecret | dict[str, Any]) -> Any:
        """An in-process caller passes the host object itself."""
        return item

    assert call(take, value) is value
    assert call(ex.secretive, value) is value


def test_cyclic_wrapped_chain_leaves_plain_data() -> None:
    def tool(result: ex.TriggerResult) -> Any:
        """Cyclic wrapper chain."""
        return result

    tool.__wrapped__ = tool  # type: ignore[attr-defined]
    (passed,), _ = coerce_arguments(tool, (roundtrip(ex.TriggerResult(1, "a")),), {})
    assert passed == {"http_code": 1, "job_path": "a"}


def test_an_annotation_that_resolves_later_is_used_once_it_does() -> None:
    namespace: dict[str, Any] = {"Any": Any}
    exec(  # a tool whose parameter names a class its module defines only later
        "def later(value: 'Later') -> Any:\n    return value\n", namespace
    )
    later = namespace["later"]
    record = roundtrip(ex.TriggerResult(1, "a"))
    (first,), _ = coerce_arguments(later, (record,), {})
    assert type(first) is dict
    namespace["Later"] = ex.TriggerResult
    (second,), _ = coerce_arguments(later, (record,), {})
    assert second == ex.TriggerResult(1, "a")


def test_scalar_arguments_reach_the_tool_unchanged() -> None:
    args, kwargs = coerce_arguments(ex.status, (7,), {"flag": True, "name": "n", "none": None})
    assert args == (7,) and kwargs == {"flag": True, "name": "n", "none": None}


class Priority(enum.Enum):
    LOW = "low"
    HIGH = "high"


class Level(enum.IntEnum):
    ONE = 1


@dataclass(frozen=True)
class Ticket:
    title: str
    priority: Priority = Priority.LOW


def prioritize(
    priority: Priority,
    maybe: Priority | None = None,
    many: list[Priority] | None = None,
    ticket: Ticket | None = None,
    level: Level | None = None,
) -> dict[str, Any]:
    return {
        "priority": priority,
        "maybe": maybe,
        "many": many,
        "ticket": ticket,
        "level": level,
    }


def test_an_enum_crosses_as_its_value_and_arrives_as_the_member() -> None:
    """A plain Enum crosses as its value; "high" for a ``Priority`` parameter reached the tool
    as a str. It arrives as the member now, also in unions, lists and record fields."""
    assert roundtrip(Priority.HIGH) == "high"
    got = call(
        prioritize,
        "high",
        maybe="low",
        many=["low", Priority.HIGH],
        ticket=roundtrip(Ticket("t", Priority.HIGH)),
        level=1,
    )
    assert got == {
        "priority": Priority.HIGH,
        "maybe": Priority.LOW,
        "many": [Priority.LOW, Priority.HIGH],
        "ticket": Ticket("t", Priority.HIGH),
        "level": Level.ONE,
    }
    assert type(got["level"]) is Level


def test_a_value_no_member_has_reaches_the_tool_unchanged() -> None:
    got = call(prioritize, "urgent", level=True)  # True is no 1
    assert got["priority"] == "urgent" and got["level"] is True
