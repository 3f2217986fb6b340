"""What child sessions may do: read-only unless asked, writers in drafts of their own, limits."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from sandbox.hostile import BWRAP_PROBLEM

from vis_core.events import BlockFinished, Event
from vis_core.host import Host

from .support import open_host, script, write_config

TRY_TO_WRITE = textwrap.dedent(
    """\
    for attempt in (shell("touch made.txt"), patch("notes.txt", "x", [])):
        try:
            await attempt
        except Exception as exc:
            print(type(exc).__name__, "|", exc)
    try:  # not a tool: the jail refuses it; without the jail it is told
        with open("by_python.txt", "w") as f:
            f.write("x")
    except OSError as exc:
        print(type(exc).__name__, "|", exc)
    """
)


def _stdout(host: Host, session_id: str) -> str:
    return "".join(
        e.event.stdout for e in host.store.events(session_id) if isinstance(e.event, BlockFinished)
    )


async def _run(host: Host, request: str) -> tuple[str, str]:
    """The parent's block output and its turn's status."""
    events: list[Event] = []
    parent = await host.new_session()
    parent.subscribe(events.append)
    ended = await parent.submit(request)
    blocks = [e for e in events if isinstance(e, BlockFinished)]
    return "".join(b.stdout + (b.error or "") for b in blocks), ended.status.value


@pytest.mark.parametrize("jail", ["on", "off"])
async def test_a_read_only_child_cannot_change_files(
    workspace: Path, tmp_path: Path, vis_home: Path, jail: str
):
    if jail == "on" and BWRAP_PROBLEM is not None:
        pytest.skip(str(BWRAP_PROBLEM))
    if jail == "off":
        write_config(vis_home, "jail = false\n")
    (workspace / "notes.txt").write_text("as it was\n", encoding="utf-8")
    path = script(
        tmp_path / "s.yaml",
        [{"code": 'print(await run_session("look only"))'}, {"text": "done"}],
        {"look only": [{"code": TRY_TO_WRITE}, {"text": "I only looked"}]},
    )
    host = await open_host(workspace, path)
    try:
        out, status = await _run(host, "start a reader")
        (child,) = [row for row in host.store.list_sessions() if row.parent_id]
        told = _stdout(host, child.id)
    finally:
        await host.close()
    assert status == "completed" and "I only looked" in out
    lines = told.strip().splitlines()
    refused = [line for line in lines if line.startswith("VisToolError | ReadOnlyError: ")]
    assert len(refused) == 2, told
    assert "shell is refused: this is a read-only child session" in refused[0]
    assert not (workspace / "made.txt").exists()
    assert (workspace / "notes.txt").read_text(encoding="utf-8") == "as it was\n"
    if jail == "on":  # the jail shows the workspace read-only: plain Python cannot write
        assert lines[2].startswith("OSError | [Errno 30] Read-only file system"), told
        assert not (workspace / "by_python.txt").exists()
    else:  # without the jail plain Python can: the parent is told which file it changed
        assert len(lines) == 2, told
        assert "[Vis: this read-only child session changed by_python.txt with plain Python" in out


WRITE = textwrap.dedent(
    """\
    with open("notes.txt", "w") as f:
        f.write("written by {name}\\n")
    print("wrote")
    """
)


async def test_writing_children_work_in_drafts_of_their_own(workspace: Path, tmp_path: Path):
    (workspace / "notes.txt").write_text("as it was\n", encoding="utf-8")
    parent_code = textwrap.dedent(
        """\
        import asyncio
        for answer in await asyncio.gather(
            run_session("write one", read_only=False), run_session("write two", read_only=False)
        ):
            print(answer.replace("\\n", " "))
        """
    )
    path = script(
        tmp_path / "s.yaml",
        [{"code": parent_code}, {"text": "done"}],
        {
            "write one": [{"code": WRITE.format(name="one")}, {"text": "one wrote"}],
            "write two": [{"code": WRITE.format(name="two")}, {"text": "two wrote"}],
        },
    )
    host = await open_host(workspace, path)
    try:
        out, status = await _run(host, "start two writers")
        children = [row for row in host.store.list_sessions() if row.parent_id]
        drafts = {row.title: host.drafts.of_session(row.id) for row in children}
    finally:
        await host.close()
    assert status == "completed", out
    assert (workspace / "notes.txt").read_text(encoding="utf-8") == "as it was\n"
    one, two = drafts["write one"], drafts["write two"]
    assert one is not None and two is not None and one.root != two.root
    assert (Path(one.root) / "notes.txt").read_text(encoding="utf-8") == "written by one\n"
    assert (Path(two.root) / "notes.txt").read_text(encoding="utf-8") == "written by two\n"
    assert f"are in draft {one.label}" in out and f"are in draft {two.label}" in out


DEEPER = textwrap.dedent(
    """\
    try:
        await run_session("deepest")
    except Exception as exc:
        print(type(exc).__name__, "|", exc)
    """
)


async def test_a_child_of_a_child_is_a_named_error_at_the_default_depth(
    workspace: Path, tmp_path: Path
):
    path = script(
        tmp_path / "s.yaml",
        [{"code": 'print(await run_session("go deeper"))'}, {"text": "done"}],
        {"go deeper": [{"code": DEEPER}, {"text": "could not go deeper"}]},
    )
    host = await open_host(workspace, path)
    try:
        out, status = await _run(host, "nest")
        (child,) = [row for row in host.store.list_sessions() if row.parent_id]
        told = _stdout(host, child.id)
    finally:
        await host.close()
    assert status == "completed" and "could not go deeper" in out
    assert told.startswith(
        "VisToolError | SubagentLimitError: run_session(): a child session here would be 2"
    )
    assert "setting subagent_depth allows 1" in told


WAIT_FOR_GO = """\
import asyncio, os
for _ in range(6000):  # until the parent says go (at most 60 s)
    if os.path.exists("go"):
        break
    await asyncio.sleep(0.01)
"""


async def test_more_children_at_once_than_the_setting_is_a_named_error(
    workspace: Path, tmp_path: Path, vis_home: Path
):
    """The child that gets the slot runs until the other is refused (it waits for the parent's
    word): a child that had ended first would leave the slot free (a loaded machine did)."""
    write_config(vis_home, 'subagent_concurrency = "1"\n')
    code = textwrap.dedent(
        """\
        import asyncio, pathlib
        runs = [asyncio.ensure_future(run_session(r)) for r in ("first", "second")]
        await asyncio.wait(runs, return_when=asyncio.FIRST_COMPLETED)
        pathlib.Path("go").touch()  # the one refused: the running child may end
        results = await asyncio.gather(*runs, return_exceptions=True)
        print(sorted(type(r).__name__ for r in results))
        print([str(r) for r in results if isinstance(r, Exception)])
        """
    )
    wait = {"code": WAIT_FOR_GO}
    path = script(
        tmp_path / "s.yaml",
        [{"code": code}, {"text": "done"}],
        {"first": [wait, {"text": "first answer"}], "second": [wait, {"text": "second answer"}]},
    )
    host = await open_host(workspace, path)
    try:
        out, status = await _run(host, "two at once")
    finally:
        await host.close()
    assert status == "completed"
    assert "['VisToolError', 'str']" in out
    assert (
        "SubagentLimitError: run_session(): 1 child sessions of this session already run "
        "(setting subagent_concurrency)" in out
    )


async def test_without_introspection_a_block_has_run_session_but_not_consult(
    workspace: Path, tmp_path: Path, vis_home: Path
):
    write_config(vis_home, "introspection = false\n")
    path = script(
        tmp_path / "s.yaml",
        [{"code": 'print("consult" in globals(), "run_session" in globals())'}, {"text": "ok"}],
    )
    host = await open_host(workspace, path)
    try:
        out, status = await _run(host, "which tools")
    finally:
        await host.close()
    assert status == "completed" and out.strip() == "False True"


async def test_a_model_the_child_cannot_use_is_named(
    workspace: Path, tmp_path: Path, vis_home: Path
):
    write_config(vis_home, 'subagent_models = "openai/gpt-5"\n')
    code = textwrap.dedent(
        """\
        for model in ("nonsense", "openai/gpt-5"):
            try:
                await run_session("x", model=model)
            except Exception as exc:
                print(exc)
        """
    )
    path = script(tmp_path / "s.yaml", [{"code": code}, {"text": "ok"}])
    host = await open_host(workspace, path)
    try:
        out, status = await _run(host, "bad models")
        children = [row for row in host.store.list_sessions() if row.parent_id]
    finally:
        await host.close()
    first, second = out.strip().splitlines()
    assert "run_session(): model must read 'provider/model', not 'nonsense'" in first
    assert "SubagentError: run_session(): cannot use openai/gpt-5: " in second
    assert status == "completed" and children == []  # nothing was started


async def test_a_child_uses_another_provider_only_when_the_setting_allows_it(
    workspace: Path, tmp_path: Path, vis_home: Path
):
    """``run_session("Summarize: " + open("secrets.cfg").read(), model="cloud/anything")``
    sent workspace text to any configured provider, also when the person chose a local model
    for privacy: a child now takes a model of the session's own provider, or one setting
    subagent_models lists (``provider/model`` or ``provider/*``); any other is refused by
    name, before anything starts."""
    (workspace / "secrets.cfg").write_text("token = hunter2\n", encoding="utf-8")
    code = textwrap.dedent(
        """\
        for model in ("openai/gpt-5", "scripted/other"):
            try:
                print(await run_session("zq-sum " + open("secrets.cfg").read(), model=model))
            except Exception as exc:
                print(exc)
        """
    )
    sessions = {"zq-sum": [{"text": "summed"}]}
    path = script(tmp_path / "s.yaml", [{"code": code}, {"text": "ok"}], sessions)
    host = await open_host(workspace, path)
    try:
        out, status = await _run(host, "summarize")
        children = [row for row in host.store.list_sessions() if row.parent_id]
    finally:
        await host.close()
    refused, same_provider = out.strip().splitlines()
    assert refused == (
        "SubagentError: run_session(): openai/gpt-5 is not of this session's provider "
        "(scripted), and setting subagent_models does not allow it (a child sends what it "
        "reads to its model); leave model out to use this session's, or ask the person to add "
        "it to subagent_models"
    )
    assert same_provider == "summed" and len(children) == 1 and status == "completed"
    write_config(vis_home, 'subagent_models = "openai/*"\n')
    host = await open_host(
        workspace, script(tmp_path / "t.yaml", [{"code": code}, {"text": "ok"}], sessions)
    )
    try:
        out, _ = await _run(host, "summarize")
    finally:
        await host.close()
    assert out.startswith("SubagentError: run_session(): cannot use openai/gpt-5: "), out


async def test_a_planning_session_starts_no_writing_child(workspace: Path, tmp_path: Path):
    path = script(
        tmp_path / "s.yaml",
        [
            {"code": 'print(await run_session("zq-child-task", read_only=False))'},
            {"code": 'print(await run_session("zq-look-task"))'},
            {"text": "done"},
        ],
        {
            "zq-child-task": [{"code": WRITE.format(name="child")}, {"text": "wrote"}],
            "zq-look-task": [{"text": "looked only"}],
        },
    )
    host = await open_host(workspace, path)
    try:
        parent = await host.new_session()
        parent.plan.set(True)
        events: list[Event] = []
        parent.subscribe(events.append)
        await parent.submit("plan with a helper")
        children = [row for row in host.store.list_sessions() if row.parent_id]
    finally:
        await host.close()
    writer, reader = [e for e in events if isinstance(e, BlockFinished)]
    assert "SubagentError" in (writer.error or "") and "plan mode" in (writer.error or "")
    assert reader.error is None and "looked only" in reader.stdout  # read-only helpers may plan
    assert len(children) == 1 and not (workspace / "notes.txt").exists()
