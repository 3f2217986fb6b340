"""The records the invoker keeps per call: built once, ended as ``dataclasses.replace`` would."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from vis_core.agent.invoker import CallPosition, CallSite, ToolInvoker
from vis_core.model.activity import ActivityPresentation, ActivityState, SymbolTag
from vis_core.model.channel import Channel
from vis_core.tools.registry import ToolRegistry


async def _ignore(event: object) -> None:
    return None


def _invoker(tmp_path: Path, position: CallPosition | None = None) -> ToolInvoker:
    return ToolInvoker(
        session_id="s1",
        registry=ToolRegistry,
        emit=_ignore,
        workspace=tmp_path,
        project_root=tmp_path,
        position=position,
    )


def test_new_record_carries_every_field_it_is_given(tmp_path: Path) -> None:
    position = CallPosition()
    invoker = _invoker(tmp_path, position)
    position.site = CallSite("t1", "i1", 3)  # the session moves it; its invoker reads it
    record = invoker.new_record(
        "echo",
        "Echo",
        tag=SymbolTag.MUTATION,
        owner="bench",
        parent_id="p1",
        show_start=False,
        handle_id="h1",
    )
    assert len(record.id) == 32 and int(record.id, 16) >= 0
    assert (
        record.id
        != invoker.new_record(
            "echo", "Echo", tag=SymbolTag.MUTATION, owner="bench", parent_id=None
        ).id
    )
    assert (record.session_id, record.turn_id, record.iteration_id, record.form) == (
        "s1",
        "t1",
        "i1",
        3,
    )
    assert (record.tool, record.tag, record.owner, record.parent_id) == (
        "echo",
        SymbolTag.MUTATION,
        "bench",
        "p1",
    )
    assert (record.show_start, record.handle_id, record.state) == (
        False,
        "h1",
        ActivityState.RUNNING,
    )
    assert record.presentation == ActivityPresentation("Echo", "")


def test_ended_is_replace_of_state_end_and_error(tmp_path: Path) -> None:
    record = _invoker(tmp_path).new_record(
        "echo", "Echo", tag=SymbolTag.OBSERVATION, owner="vis", parent_id=None, handle_id="h"
    )
    ok = ToolInvoker.ended(record)
    assert ok == dataclasses.replace(record, state=ActivityState.SUCCEEDED, ended_at=ok.ended_at)
    assert ok.ended_at is not None and ok.ended_at >= record.started_at
    failed = ToolInvoker.ended(record, error=ValueError("bad value"))
    assert failed == dataclasses.replace(
        record,
        state=ActivityState.FAILED,
        ended_at=failed.ended_at,
        error="ValueError: bad value",
    )
    # every field of a record is a constructor field: ending one copies them all
    assert all(f.init for f in dataclasses.fields(type(record)))


def test_activity_ids_are_unique_hex_that_sort_in_the_order_they_were_made(tmp_path: Path) -> None:
    """The store indexes activities by (turn, id): ids made in order append to that index."""
    invoker = _invoker(tmp_path)
    ids = [
        invoker.new_record(
            "echo", "Echo", tag=SymbolTag.OBSERVATION, owner="vis", parent_id=None
        ).id
        for _ in range(2000)
    ]
    assert all(len(i) == 32 and int(i, 16) >= 0 for i in ids)
    assert len(set(ids)) == len(ids)
    assert ids == sorted(ids)


def test_records_and_contexts_are_copies_of_classes_made_of_their_fields() -> None:
    """The invoker copies a blank record and context per call (``_evolve``): that builds what
    their constructors would only while their attributes are exactly their fields."""
    from vis_core.extension.context import CallContext
    from vis_core.model.activity import ActivityRecord

    for cls in (ActivityRecord, CallContext):
        assert not hasattr(cls, "__post_init__") and not hasattr(cls, "__slots__")
        assert all(f.init for f in dataclasses.fields(cls))


def test_new_record_is_what_the_constructor_builds(tmp_path: Path) -> None:
    from vis_core.model.activity import ActivityRecord, field_names

    position = CallPosition()
    position.site = CallSite("t1", "i1", 2)
    record = _invoker(tmp_path, position).new_record(
        "echo", "Echo", tag=SymbolTag.MUTATION, owner="bench", parent_id="p", handle_id="h"
    )
    assert tuple(vars(record)) == field_names(ActivityRecord)
    assert record == ActivityRecord(**{name: getattr(record, name) for name in vars(record)})
    assert record.started_at > 0 and record.ended_at is None and record.error is None


async def test_each_call_has_a_context_of_its_own(tmp_path: Path) -> None:
    from vis_core.extension.context import CallContext, current_call
    from vis_core.tools.registry import HostTool

    seen: list[CallContext] = []

    async def probe() -> int:
        context = current_call()
        assert context is not None
        context.unanswered_forms.append(f"form {len(seen)}")
        seen.append(context)
        return len(seen)

    position = CallPosition()
    invoker = ToolInvoker(
        session_id="s1",
        registry=lambda: ToolRegistry([HostTool("probe", probe, owner="kit")]),
        emit=_ignore,
        workspace=tmp_path,
        project_root=tmp_path / "project",
        channel=Channel.CLI,
        position=position,
    )
    await invoker.call("probe", (), {})
    position.site = CallSite("t2", "i2", 1)
    await invoker.call("probe", (), {}, callers=("other",), parent_id="p1")
    first, second = seen
    assert first.unanswered_forms == ["form 0"] and second.unanswered_forms == ["form 1"]
    assert (first.session_id, first.workspace_root, first.project_root) == (
        "s1",
        tmp_path,
        tmp_path / "project",
    )
    assert (first.owner, first.channel, first.activities) == ("kit", Channel.CLI, invoker)
    assert first.activity_id != second.activity_id and first.publish is not second.publish
    assert (first.turn_id, second.turn_id, second.iteration_id) == (None, "t2", "i2")
    assert (first.callers, second.callers) == ((), ("other",))
