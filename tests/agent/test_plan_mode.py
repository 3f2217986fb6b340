"""Plan mode: the session reads and plans, changes nothing, and leaves when the person approves."""

from __future__ import annotations

import errno
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from vis_core.agent.plan import PLANNING_NOTE
from vis_core.commands import CommandAction, PromptToSend
from vis_core.events import BlockFinished, Event, TurnEnded
from vis_core.host import Host, HostOptions
from vis_core.system.jail_check import jail_problem

jailed = pytest.mark.skipif(jail_problem() is not None, reason=str(jail_problem()))

# What a block tries while the session plans: every way of writing the workspace it has.
TRY_WRITES = """
import os, subprocess
ws = os.getcwd()
def attempt(label, fn):
    try:
        fn()
        print(label, "wrote")
    except Exception as exc:
        print(label, "refused", type(exc).__name__)
attempt("relative", lambda: open("new.txt", "w").write("x"))
attempt("absolute", lambda: open(os.path.join(ws, "notes.txt"), "a").write("x"))
attempt("link", lambda: open("link.txt", "w").write("x"))
attempt("git", lambda: open(".git/HEAD", "w").write("x"))
attempt("remove", lambda: os.remove("notes.txt"))
attempt("subprocess", lambda: subprocess.run(["touch", "made.txt"], check=True))
attempt("tmp", lambda: open("/tmp/scratch.txt", "w").write("x"))
print("read", open("notes.txt").read().strip())
"""
TRY_TOOLS = """
for tool in ("patch", "shell", "run_tests"):
    try:
        if tool == "patch":
            await patch("notes.txt", 0, "changed\\n")
        elif tool == "shell":
            await shell("touch shelled.txt")
        else:
            await run_tests()
        print(tool, "ran")
    except Exception as exc:
        print(tool, "refused", "PlanModeRefusal: " + tool + ": refused in plan mode" in str(exc))
print(len(await cat("notes.txt")) > 0)
"""


def _script(path: Path, responses: list[dict[str, Any]]) -> Path:
    path.write_text(yaml.safe_dump(responses, sort_keys=False), encoding="utf-8")
    return path


def _repo(workspace: Path) -> None:
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=workspace, check=True)
    (workspace / "notes.txt").write_text("one\n")
    os.symlink(workspace / "notes.txt", workspace / "link.txt")


async def _plan_turn(workspace: Path, tmp_path: Path, code: str) -> tuple[Host, Any, list[Event]]:
    script = _script(
        tmp_path / "s.yaml", [{"code": code}, {"text": "Plan: 1. edit notes.txt 2. run the tests"}]
    )
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted", script=script))
    session = await host.new_session()
    events: list[Event] = []
    session.subscribe(events.append)
    entered = await host.commands.run(session, "/plan")
    assert entered.ok and entered.title == "Plan mode on", entered
    await session.submit("how would you change notes.txt?")
    return host, session, events


def _printed(events: list[Event]) -> dict[str, str]:
    (block,) = [e for e in events if isinstance(e, BlockFinished)]
    assert block.error is None, block.error
    lines = [line.split(" ", 1) for line in block.stdout.splitlines()]
    return {line[0]: line[1] if len(line) > 1 else "" for line in lines}


@jailed
async def test_plan_mode_with_the_jail_keeps_the_workspace_read_only(
    workspace: Path, tmp_path: Path, vis_home: Path
) -> None:
    (vis_home / "config.toml").write_text("jail = true\n")
    _repo(workspace)
    host, session, events = await _plan_turn(workspace, tmp_path, TRY_WRITES + TRY_TOOLS)
    try:
        requests = session.model.provider.requests
        reopened = await host.open_session(session.id)
        still = reopened.plan.active
    finally:
        await host.close()
    printed = _printed(events)
    for label in ("relative", "absolute", "link", "git", "remove", "subprocess"):
        assert printed[label].startswith("refused"), (label, printed)
    assert printed["tmp"] == "wrote" and printed["read"] == "one"
    assert printed["patch"] == printed["shell"] == printed["run_tests"] == "refused True"
    assert (workspace / "notes.txt").read_text() == "one\n"
    assert sorted(os.listdir(workspace)) == [".git", ".vis", "link.txt", "notes.txt"]
    # the model is told with its request, the system prompt stays the same
    assert PLANNING_NOTE in requests[0].messages[0].text
    assert requests[0].system == requests[1].system
    assert [e for e in events if isinstance(e, TurnEnded)][0].status == "completed"
    assert still  # a resumed session still plans


async def test_plan_mode_without_the_jail_refuses_tools_and_approval_sends_the_plan(
    workspace: Path, tmp_path: Path, vis_home: Path, jail_off: None
) -> None:
    """Without the jail, tools refuse changes; plain Python in a block can still write (the
    documented limit). Approving leaves plan mode and sends the plan as the next request."""
    _repo(workspace)
    code = 'open("new.txt", "w").write("x")\nprint("relative wrote")\n' + TRY_TOOLS
    host, session, events = await _plan_turn(workspace, tmp_path, code)
    try:
        approved = await host.commands.run(session, "/plan approve keep it short")
        after = session.plan.active
        reopened = await host.open_session(session.id)
        resumed = reopened.plan.active
    finally:
        await host.close()
    printed = _printed(events)
    assert printed["patch"] == printed["shell"] == printed["run_tests"] == "refused True"
    assert printed["relative"] == "wrote"  # unjailed Python is not confined
    assert not (workspace / "shelled.txt").exists()
    assert approved.action is CommandAction.SEND_PROMPT
    assert isinstance(approved.data, PromptToSend)
    assert "Plan: 1. edit notes.txt 2. run the tests" in approved.data.text
    assert approved.data.text.endswith("The person adds: keep it short")
    assert not after and not resumed


async def test_plan_commands_say_what_they_do(
    workspace: Path, tmp_path: Path, vis_home: Path, jail_off: None
) -> None:
    script = _script(tmp_path / "s.yaml", [{"text": "A plan."}, {"text": "Done."}])
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted", script=script))
    try:
        session = await host.new_session()
        nothing = await host.commands.run(session, "/plan approve")
        with_request = await host.commands.run(session, "/plan look at the code")
        await session.submit(with_request.data.text)
        off = await host.commands.run(session, "/plan off")
        await session.submit("go on")
        requests = session.model.provider.requests
    finally:
        await host.close()
    assert not nothing.ok and nothing.title == "No plan to approve"
    assert isinstance(with_request.data, PromptToSend)
    assert with_request.data.text == "look at the code"
    assert off.ok and off.title == "Plan mode off"
    assert PLANNING_NOTE in requests[0].messages[-1].text
    last = requests[1].messages[-1].text
    assert PLANNING_NOTE not in last and "plan mode is off" in last


WRITE = """
try:
    open("{name}", "w").write("x")
    print("wrote")
except OSError as exc:
    print("refused", exc.errno)
"""


@jailed
async def test_entering_and_leaving_plan_mode_restarts_the_sandbox_read_only_and_back(
    workspace: Path, tmp_path: Path, vis_home: Path
) -> None:
    (vis_home / "config.toml").write_text("jail = true\n")
    turns = [
        {"code": "kept = 41\n" + WRITE.format(name="a.txt")},
        {"text": "one"},
        {"code": "print(kept + 1)\n" + WRITE.format(name="b.txt")},
        {"text": "two"},
        {"code": WRITE.format(name="c.txt")},
        {"text": "three"},
    ]
    script = _script(tmp_path / "s.yaml", turns)
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted", script=script))
    try:
        session = await host.new_session()
        events: list[Event] = []
        session.subscribe(events.append)
        await session.submit("write a")
        await host.commands.run(session, "/plan")
        await session.submit("write b")
        await host.commands.run(session, "/plan off")
        await session.submit("write c")
        systems = {request.system for request in session.model.provider.requests}
    finally:
        await host.close()
    blocks = [e.stdout for e in events if isinstance(e, BlockFinished)]
    assert blocks[0].strip() == "wrote"
    assert "switched to plan mode (the workspace is read-only) and was restarted" in blocks[1]
    assert blocks[1].splitlines()[-2:] == ["42", "refused 30"]  # EROFS; the namespace is kept
    assert "left plan mode" in blocks[2] and blocks[2].strip().endswith("\nwrote")
    assert sorted(p.name for p in workspace.glob("*.txt")) == ["a.txt", "c.txt"]
    assert len(systems) == 1  # plan mode never changes the system prompt


@jailed
def test_a_read_only_jail_of_home_keeps_every_entry_read_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Plan mode in a workspace that is home: home's own entries (writable in a normal jail)
    and a read-write grant are read-only too; /tmp still takes writes."""
    from vis_core.system.jail import jail_argv

    home = tmp_path / "ada"
    (home / "notes").mkdir(parents=True)
    grant = tmp_path / "cache"
    grant.mkdir()
    monkeypatch.setenv("HOME", str(home))
    script = (
        f'for f in notes/todo.txt top.txt {grant}/x; do echo x > "$f" 2>/dev/null '
        '&& echo "wrote $f" || echo refused; done; echo x > /tmp/t && echo tmp'
    )
    argv = jail_argv(["sh", "-c", script], home, read_write=[grant], workspace_read_only=True)
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    assert done.stdout.splitlines() == ["refused"] * 3 + ["tmp"], done.stdout + done.stderr


TYPE_INTO_EARLIER_SHELL = """
(earlier,) = await shells()
try:
    await earlier.type("pwned\\n")
    print("typed", await earlier.wait(10))
except Exception as exc:
    print("refused", "shell.type: refused in plan mode" in str(exc))
print("logs", repr(await earlier.logs()))
print("stopped", (await earlier.stop()).state)
"""


async def test_a_command_started_before_plan_mode_takes_no_typing_in_it(
    workspace: Path, tmp_path: Path, vis_home: Path, jail_off: None
) -> None:
    """A command left running before ``/plan`` (found again with ``shells()``) would write
    what it is told: typing into it is refused; reading and stopping it still work."""
    turns = [
        {"code": 'await shell("read line; echo $line > typed.txt")'},
        {"text": "started"},
        {"code": TYPE_INTO_EARLIER_SHELL},
        {"text": "A plan."},
    ]
    script = _script(tmp_path / "s.yaml", turns)
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted", script=script))
    try:
        session = await host.new_session()
        events: list[Event] = []
        session.subscribe(events.append)
        await session.submit("start a command")
        await host.commands.run(session, "/plan")
        await session.submit("plan")
    finally:
        await host.close()
    printed = [e.stdout for e in events if isinstance(e, BlockFinished)][1]
    assert "refused True" in printed, printed
    assert "stopped" in printed and "logs" in printed
    assert not (workspace / "typed.txt").exists()


LEAVE_A_WRITER = """
import os, threading
os.mkfifo("fifo")
def write_later():
    with open("fifo") as told:
        open("late.txt", "w").write(told.read())
threading.Thread(target=write_later, daemon=True).start()
"""


@jailed
async def test_a_thread_left_in_the_sandbox_stops_when_plan_mode_begins(
    workspace: Path, tmp_path: Path, vis_home: Path
) -> None:
    """A block can leave a thread (or a task) in its writable sandbox; the session then
    plans without running a block: that sandbox is stopped when plan mode begins, not at the
    next block, so nothing it left writes while the session plans."""
    (vis_home / "config.toml").write_text("jail = true\n")
    turns = [{"code": LEAVE_A_WRITER}, {"text": "left"}, {"text": "A plan."}]
    script = _script(tmp_path / "s.yaml", turns)
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted", script=script))
    try:
        session = await host.new_session()
        await session.submit("leave a thread")
        await host.commands.run(session, "/plan")
        await session.submit("plan")
        assert session.plan.active
        try:  # the thread waits for a writer: it is there only if its process still runs
            told = os.open(workspace / "fifo", os.O_WRONLY | os.O_NONBLOCK)
        except OSError as exc:
            assert exc.errno == errno.ENXIO  # no reader: the writable sandbox is gone
        else:
            os.write(told, b"written while planning")
            os.close(told)
            pytest.fail("the writable sandbox still ran while the session planned")
    finally:
        await host.close()
    assert not (workspace / "late.txt").exists()
