"""What a command left running changes after its turn is listed with its diff, and /undo of
the turn that started it takes it back (vis_core/agent/background_files.py)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import yaml

from vis_core.agent.person_input import undo
from vis_core.events import (
    BackgroundCommandEnded,
    BackgroundFilesChanged,
    BlockFinished,
    Event,
    Notification,
    TurnStarted,
)
from vis_core.host import Host, HostOptions
from vis_core.model.block import FileChangeKind

# ``: > done`` last: the test waits for it, so the command wrote a.txt before
EVIL = 'await shell("while [ ! -e go ]; do sleep 0.01; done; echo EVIL >> a.txt")'
# still runs when the next turn begins
STAYS = (
    'await shell("while [ ! -e go ]; do sleep 0.01; done; echo EVIL >> a.txt; : > done; sleep 600")'
)


def _script(tmp_path: Path, responses: list[dict[str, str]]) -> Path:
    script = tmp_path / "script.yaml"
    script.write_text(yaml.safe_dump(responses), encoding="utf-8")
    return script


def _let_the_command_write(workspace: Path) -> None:
    """Let the running command (:data:`STAYS`) write, and wait until it has (up to 30 s),
    holding whatever called this: the turn, when an event handler does."""
    (workspace / "go").touch()
    for _ in range(3000):
        if (workspace / "done").exists():
            break
        time.sleep(0.01)


async def _two_turns_around_a_running_command(workspace: Path, tmp_path: Path) -> Host:
    """A Host over a workspace whose a.txt holds "good", scripted to start :data:`STAYS` in
    its first turn (it appends to a.txt once let) and to write b.txt in its second."""
    (workspace / "a.txt").write_text("good\n")
    script = _script(
        tmp_path,
        [
            {"code": STAYS},
            {"text": "Started."},
            {"code": "open('b.txt', 'w').write('mine')"},
            {"text": "Wrote b."},
        ],
    )
    return await Host.open(HostOptions(workspace=workspace, provider="scripted", script=script))


async def test_what_a_command_writes_after_its_turn_is_listed_and_undone_with_that_turn(
    workspace: Path, tmp_path: Path
) -> None:
    """The command wrote a.txt 'after the turn changed nothing': no listing showed it and
    /undo could not take it back (the next turn's checkpoint held it as it was then). It is
    listed with its diff as the command ends, the model reads it with the next request, and
    /undo of the turn that started it restores a.txt (and removes the file the command waited
    for, made while it ran)."""
    (workspace / "a.txt").write_text("good\n")
    script = _script(tmp_path, [{"code": EVIL}, {"text": "Started."}, {"text": "Fine."}])
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted", script=script))
    events: list[Event] = []
    told = asyncio.Event()

    def watch(event: Event) -> None:
        events.append(event)
        ended = any(isinstance(e, BackgroundCommandEnded) for e in events)
        if isinstance(event, BackgroundFilesChanged) and ended:  # listed after its end
            told.set()

    try:
        session = await host.new_session()
        session.subscribe(watch)
        await session.submit("start it")
        (workspace / "go").touch()
        await asyncio.wait_for(told.wait(), 30)
        await session.submit("again")
        request = session.model.provider.requests[-1]  # type: ignore[union-attr]
        report = await undo(session)
    finally:
        await host.close()

    # "go" may be listed on its own, if the listing as the turn ended came after the test
    # made it; a.txt is listed after the command's end
    listed = [e for e in events if isinstance(e, BackgroundFilesChanged)]
    changed = listed[-1]
    assert {(e.turn_id, e.undo_with, e.commands) for e in listed} == {
        ("", 1, (EVIL.split('"')[1],))
    }
    by_path = {change.path: change for e in listed for change in e.files}
    assert sorted(by_path) == ["a.txt", "go"] and "a.txt" in [c.path for c in changed.files]
    assert by_path["a.txt"].kind is FileChangeKind.CHANGED
    assert "\n good\n+EVIL\n" in by_path["a.txt"].diff and by_path["a.txt"].added == 1
    kinds = [
        type(e).__name__ for e in events if isinstance(e, BackgroundCommandEnded | BlockFinished)
    ]
    assert kinds == ["BlockFinished", "BackgroundCommandEnded"]
    assert events.index(changed) > next(
        i for i, e in enumerate(events) if isinstance(e, BackgroundCommandEnded)
    )
    assert changed.text() in request.messages[-1].text
    assert [e for e in events if isinstance(e, BlockFinished)][0].files == ()
    assert report.turns == (1,) and report.restored == ("a.txt",) and report.removed == ("go",)
    assert (workspace / "a.txt").read_text() == "good\n"


async def test_what_a_running_command_wrote_is_listed_as_the_next_turn_begins(
    workspace: Path, tmp_path: Path
) -> None:
    """A command that wrote after its turn and still runs when the next turn starts: its
    change is listed in that turn before its first block (which is not told it made it), and
    /undo of both turns restores a.txt. An export shows the list after that turn."""
    import os

    from vis_core.session_files import ExportFormat, export_session
    from vis_core.store import Store

    host = await _two_turns_around_a_running_command(workspace, tmp_path)
    events: list[Event] = []

    def write_as_the_second_turn_starts(event: Event) -> None:
        if isinstance(event, TurnStarted) and event.position == 2:
            _let_the_command_write(workspace)
        events.append(event)

    try:
        session = await host.new_session()
        session.subscribe(write_as_the_second_turn_starts)
        await session.submit("start it")
        # the listing as turn 1 ended holds the lock: it is done before the test touches "go"
        await session.list_background_files()
        second = await session.submit("write b")
        one = await undo(session)
        two = await undo(session)
    finally:
        await host.close()

    (changed,) = [e for e in events if isinstance(e, BackgroundFilesChanged)]
    assert changed.turn_id == second.turn_id and changed.undo_with == 1
    assert sorted(c.path for c in changed.files) == ["a.txt", "done", "go"]
    blocks = [e for e in events if isinstance(e, BlockFinished)]
    assert [c.path for c in blocks[1].files] == ["b.txt"]
    assert events.index(changed) < events.index(blocks[1])
    assert one.turns == (2,) and one.removed == ("b.txt",)
    assert two.turns == (1,) and two.restored == ("a.txt",)
    assert sorted(two.removed) == ["done", "go"]
    with Store(Path(os.environ["VIS_HOME"]) / "vis.db") as store:
        row = store.get_session(session.id)
        assert row is not None
        text = export_session(store, row, ExportFormat.MD)
    listed = text.index("Files changed while a background command ran (/undo of turn 1")
    assert text.index("Started.") < text.index("write b") < text.index("Wrote b.") < listed
    assert "+EVIL" in text[listed:]
    assert (workspace / "a.txt").read_text() == "good\n"


async def test_a_listing_names_a_few_commands_each_on_a_line(
    workspace: Path, tmp_path: Path
) -> None:
    """A block that left many long commands running (a shell takes 128 KiB each) made each
    listing carry them all, whole: stored, shown and sent to the model every time. A listing
    names the first five, each cut to a line, and counts the others."""
    long = ": " + "x" * 3000 + "; while [ ! -e go ]; do sleep 0.01; done; echo $1 >> a.txt"
    code = f"for i in range(7):\n    await shell({long!r}.replace('$1', str(i)))"
    script = _script(tmp_path, [{"code": code}, {"text": "Started."}])
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted", script=script))
    told: asyncio.Queue[BackgroundFilesChanged] = asyncio.Queue()
    try:
        session = await host.new_session()
        session.subscribe(
            lambda e: told.put_nowait(e) if isinstance(e, BackgroundFilesChanged) else None
        )
        await session.submit("start them")
        await session.list_background_files()  # the listing as the turn ended, before "go"
        (workspace / "go").touch()
        changed = await asyncio.wait_for(told.get(), 30)
    finally:
        await host.close()
    assert len(changed.commands) == 5 and changed.more == 2
    assert all(len(command) <= 160 for command in changed.commands)
    assert "…' and 2 more ran" in changed.text() and len(changed.text()) < 1200


async def test_agent_settings_a_command_makes_after_its_turn_are_told_with_its_end(
    workspace: Path, tmp_path: Path
) -> None:
    """A `.claude/` a command made after its turn was told only at the next block, turn end
    or tool call: another agent could read it first. It is told after the command's end."""
    made = 'await shell("while [ ! -e go ]; do sleep 0.01; done; mkdir .claude")'
    script = _script(tmp_path, [{"code": made}, {"text": "Started."}])
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted", script=script))
    events: list[Event] = []
    told = asyncio.Event()

    def watch(event: Event) -> None:
        events.append(event)
        if isinstance(event, Notification) and ".claude" in event.text:
            told.set()

    try:
        session = await host.new_session()
        session.subscribe(watch)
        await session.submit("start it")
        (workspace / "go").touch()
        await asyncio.wait_for(told.wait(), 30)
    finally:
        await host.close()
    ended = next(i for i, e in enumerate(events) if isinstance(e, BackgroundCommandEnded))
    assert any(isinstance(e, Notification) and ".claude" in e.text for e in events[ended:])


async def test_what_a_command_wrote_before_the_session_closed_is_listed_and_undone_after_a_resume(
    workspace: Path, tmp_path: Path
) -> None:
    """A command still running when the session closes wrote a.txt after its turn: it is
    stopped, the change is listed (as the turn ended or as the session closed, whichever
    looked first), and /undo in the resumed session restores a.txt."""
    (workspace / ".gitignore").write_text("go\ndone\n")  # the test's signals
    (workspace / "a.txt").write_text("good\n")
    script = _script(tmp_path, [{"code": STAYS}, {"text": "Started."}])
    options = HostOptions(workspace=workspace, provider="scripted", script=script)
    host = await Host.open(options)
    events: list[Event] = []
    try:
        session = await host.new_session()
        session.subscribe(events.append)
        await session.submit("start it")
        _let_the_command_write(workspace)
    finally:
        await host.close()
    (changed,) = [e for e in events if isinstance(e, BackgroundFilesChanged)]
    assert changed.turn_id == "" and changed.undo_with == 1
    assert [c.path for c in changed.files] == ["a.txt"] and "+EVIL" in changed.files[0].diff

    host = await Host.open(options)
    try:
        report = await undo(await host.open_session(session.id))
    finally:
        await host.close()
    assert report.turns == (1,) and report.restored == ("a.txt",)
    assert (workspace / "a.txt").read_text() == "good\n"


async def test_what_a_command_writes_between_two_blocks_is_not_listed_as_the_second_ones(
    workspace: Path, tmp_path: Path
) -> None:
    """A command the first block left running writes while the model answers: the second
    block's row listed a.txt as its own change. It is listed before the next request, as
    changed while the command ran, and the second block lists nothing."""
    (workspace / ".gitignore").write_text("go\ndone\n")  # the test's signals
    (workspace / "a.txt").write_text("good\n")
    writes = 'await shell("while [ ! -e go ]; do sleep 0.01; done; echo EVIL >> a.txt; : > done")'
    script = _script(tmp_path, [{"code": writes}, {"code": "pass"}, {"text": "Done."}])
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted", script=script))
    events: list[Event] = []

    def write_after_the_first_block(event: Event) -> None:
        events.append(event)
        if isinstance(event, BlockFinished) and not (workspace / "go").exists():
            _let_the_command_write(workspace)  # after the first block's listing

    try:
        session = await host.new_session()
        session.subscribe(write_after_the_first_block)
        ended = await session.submit("write in the background")
        report = await undo(session)
    finally:
        await host.close()
    (changed,) = [e for e in events if isinstance(e, BackgroundFilesChanged)]
    assert changed.turn_id == ended.turn_id and changed.undo_with == 1
    assert [c.path for c in changed.files] == ["a.txt"] and "+EVIL" in changed.files[0].diff
    first, second = [e for e in events if isinstance(e, BlockFinished)]
    assert first.files == () and second.files == ()
    assert events.index(first) < events.index(changed) < events.index(second)
    assert report.restored == ("a.txt",) and (workspace / "a.txt").read_text() == "good\n"


async def test_a_write_as_the_next_turn_takes_its_checkpoint_is_that_turns(
    workspace: Path, tmp_path: Path
) -> None:
    """A write between the listing of what a command changed, as the next turn begins, and
    that turn's checkpoint was in neither scan: no row listed it and no /undo took it back.
    The checkpoint now records the listing's scan: the write is the new turn's, listed with
    its first block and undone with it."""
    host = await _two_turns_around_a_running_command(workspace, tmp_path)
    events: list[Event] = []

    def write_between_the_listing_and_the_checkpoint(event: Event) -> None:
        if isinstance(event, TurnStarted) and event.position == 2:
            _let_the_command_write(workspace)
        if isinstance(event, BackgroundFilesChanged) and event.turn_id:  # told, not taken
            (workspace / "late.txt").write_text("late\n")
        events.append(event)

    try:
        session = await host.new_session()
        session.subscribe(write_between_the_listing_and_the_checkpoint)
        await session.submit("start it")
        await session.list_background_files()  # as turn 1 ended: before the test touches "go"
        second = await session.submit("write b")
        report = await undo(session)
    finally:
        await host.close()

    (changed,) = [e for e in events if isinstance(e, BackgroundFilesChanged)]
    assert changed.turn_id == second.turn_id and "late.txt" not in [c.path for c in changed.files]
    blocks = [e for e in events if isinstance(e, BlockFinished)]
    assert [c.path for c in blocks[1].files] == ["b.txt", "late.txt"]
    assert report.turns == (2,) and report.removed == ("b.txt", "late.txt")
    assert not (workspace / "late.txt").exists()
