"""Records returned before an extension reload are rebuilt as the reloaded class."""

from __future__ import annotations

import importlib.util
import sys
import types
from collections.abc import Iterator
from pathlib import Path

import pytest

from vis_core.records import coerce_arguments, registry

from .crossing import to_host, to_sandbox

EXTENSION = '''
from __future__ import annotations
from dataclasses import dataclass


@dataclass(frozen=True)
class TriggerResult:
    http_code: int
    job_path: str


class Outer:
    @dataclass(frozen=True)
    class Inner:
        value: int


def trigger(job_path: str) -> TriggerResult:
    """Start a build."""
    return TriggerResult(201, job_path)


def status(result: TriggerResult) -> str:
    """Report the job of a started build."""
    return f"{result.job_path}: {result.http_code}"


def keep(result):
    """Unannotated: gets this extension's records back as its live classes."""
    return result
'''


def load(path: Path, name: str) -> types.ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def reloading(tmp_path: Path) -> Iterator[tuple[types.ModuleType, types.ModuleType]]:
    entry = tmp_path / "builds.py"
    entry.write_text(EXTENSION)
    before = load(entry, "vis_ext_builds")
    registry.replace_owner("builds", registry.classes_in_module(before))
    after = load(entry, "vis_ext_builds")  # /reload re-executes the entry file
    yield before, after
    registry.replace_owner("builds", ())
    sys.modules.pop("vis_ext_builds", None)


def test_classes_in_module_finds_module_and_nested_dataclasses(
    reloading: tuple[types.ModuleType, types.ModuleType],
) -> None:
    before, _ = reloading
    assert registry.classes_in_module(before) == [before.TriggerResult, before.Outer.Inner]
    assert registry.lookup("builds", "Outer.Inner") is before.Outer.Inner
    assert registry.owner_of(before.TriggerResult) == "builds"


def test_annotated_parameter_rebuilds_an_old_record_as_the_reloaded_class(
    reloading: tuple[types.ModuleType, types.ModuleType],
) -> None:
    before, after = reloading
    old = to_host(to_sandbox(before.trigger("docs"), owner="builds"))
    registry.replace_owner("builds", registry.classes_in_module(after))
    (rebuilt,), _ = coerce_arguments(after.status, (old,), {}, owner="builds")
    assert isinstance(rebuilt, after.TriggerResult)
    assert not isinstance(rebuilt, before.TriggerResult)
    assert after.status(rebuilt) == "docs: 201"


def test_host_instance_of_the_old_class_is_rebuilt_too(
    reloading: tuple[types.ModuleType, types.ModuleType],
) -> None:
    before, after = reloading
    (rebuilt,), _ = coerce_arguments(after.status, (before.TriggerResult(1, "x"),), {})
    assert isinstance(rebuilt, after.TriggerResult)


def test_unannotated_parameter_uses_the_registry_for_the_tools_own_records(
    reloading: tuple[types.ModuleType, types.ModuleType],
) -> None:
    before, after = reloading
    old = to_host(to_sandbox(before.trigger("docs")))  # owner found in the registry
    assert old._vis_info.owner == "builds"
    registry.replace_owner("builds", registry.classes_in_module(after))
    (rebuilt,), _ = coerce_arguments(after.keep, (old,), {}, owner="builds")
    assert isinstance(rebuilt, after.TriggerResult) and rebuilt.job_path == "docs"
    (other,), _ = coerce_arguments(after.keep, (old,), {}, owner="someone-else")
    assert other == {"http_code": 201, "job_path": "docs"}


def test_encode_registers_classes_for_the_calling_owner_last_writer_wins(
    reloading: tuple[types.ModuleType, types.ModuleType],
) -> None:
    _, after = reloading
    registry.replace_owner("builds", ())
    record = to_sandbox(after.trigger("x"), owner="builds")
    assert record._vis_info.owner == "builds"
    assert registry.lookup("builds", "TriggerResult") is after.TriggerResult


def test_register_needs_a_class() -> None:
    with pytest.raises(TypeError, match="needs a class"):
        registry.register("x", "not a class")  # type: ignore[arg-type]
