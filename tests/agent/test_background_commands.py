"""Background commands report back: a shell() left running tells the next request and the
transcript how it ended; shells() finds its handle again after a sandbox restart."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import yaml

from vis_core.events import BackgroundCommandEnded, BlockFinished, TurnEnded
from vis_core.host import Host, HostOptions
from vis_core.model.turn import TurnStatus

START = """
bg = await shell("while [ ! -e go ]; do sleep 0.01; done; echo built; echo 'all done'; exit 3")
seen = await shell("echo waited-for")
await seen.wait(30)  # its end is read here: no report follows
print("started", bg)
"""
FINISH = """
import asyncio, pathlib
pathlib.Path("go").touch()
for _ in range(3000):  # until the command has ended (without wait(), which would read it)
    if "running" not in repr((await shells())[-2]):
        break
    await asyncio.sleep(0.01)
print("ended", [repr(h).split(":")[0] for h in await shells()])
"""
CRASH = "import os\nos._exit(9)"
AFTER_RESTART = """
found = await shells()
print(len(found), [repr(h).split()[0] for h in found])
status = await found[0].wait(0)  # finished already: returns at once
print("exit", status.exit_code, status.output.split())
"""


async def test_a_command_left_running_reports_its_end_to_the_next_request(
    workspace: Path, tmp_path: Path
) -> None:
    script = tmp_path / "script.yaml"
    script.write_text(
        yaml.safe_dump(
            [
                {"code": START},
                {"code": FINISH},
                {"text": "The build ended."},
                {"code": CRASH},
                {"code": AFTER_RESTART},
                {"text": "ok"},
            ]
        ),
        encoding="utf-8",
    )
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted", script=script))
    events: list = []
    try:
        session = await host.new_session()
        session.subscribe(events.append)
        first = await session.submit("build in the background")
        second = await session.submit("look again")
        requests = session.model.provider.requests  # type: ignore[union-attr]
        reopened = await host.open_session(session.id)
        rebuilt = await reopened.next_request()
    finally:
        await host.close()

    assert first.status is TurnStatus.COMPLETED and second.status is TurnStatus.COMPLETED
    (report,) = [e for e in events if isinstance(e, BackgroundCommandEnded)]
    assert report.command.startswith("while [ ! -e go ]") and report.exit_code == 3
    assert report.state == "exit 3" and report.output == "built\nall done"
    assert report.turn_id == first.turn_id and report.runtime is not None
    # it came after the block that saw it end, before the request that followed
    kinds = [
        type(e).__name__ for e in events if isinstance(e, BlockFinished | BackgroundCommandEnded)
    ]
    assert kinds[:3] == ["BlockFinished", "BlockFinished", "BackgroundCommandEnded"]
    carried = requests[2].messages[-1]
    assert carried.role == "tool" and carried.text.startswith("ended [")
    assert carried.text.endswith(
        f"[Vis: the background command {report.handle_id} ({report.command!r}) ended: exit 3 "
        f"after {report.runtime:.1f}s. shells() lists it; its logs() has the whole output.] "
        "Last output:\nbuilt\nall done"
    )
    assert "waited-for" not in carried.text  # the command whose end the model read
    # stored: a reopened session's request carries it at the same place
    assert any(report.text() in m.text for m in rebuilt.messages)
    # after the sandbox restart, shells() still lists both handles; wait(0) returns at once
    blocks = [e for e in events if isinstance(e, BlockFinished)]
    after = blocks[-1]
    assert after.restarted and after.error is None, after.error
    lines = after.stdout.splitlines()
    assert lines[-2] == "2 ['<shell', '<shell']"
    assert lines[-1] == "exit 3 ['built', 'all', 'done']"
    assert not [e for e in events if isinstance(e, TurnEnded) and e.error]


# ``: > written``, not ``touch written``: touch creates the file, then sets its time, so a
# listing between the two sees a time the file no longer has (and /undo keeps it as edited)
LATE = """
await shell("while [ ! -e go ]; do sleep 0.01; done; echo late > late.txt; : > written")
"""


async def test_what_a_command_left_running_writes_after_the_last_block_undo_takes_back(
    workspace: Path, tmp_path: Path
) -> None:
    """A turn whose blocks changed nothing themselves, but whose command went on and wrote
    after the last block was listed, changed files: its checkpoint stays, so ``/undo`` takes
    back that turn's files, not the turn before it too."""
    from vis_core.agent.person_input import undo

    script = tmp_path / "script.yaml"
    script.write_text(
        yaml.safe_dump(
            [
                {"code": "open('first.txt', 'w').write('one')"},
                {"text": "Wrote it."},
                {"code": LATE},
                {"text": "Started it."},
            ]
        ),
        encoding="utf-8",
    )
    written = workspace / "written"
    blocks: list[object] = []

    def write_after_the_listing(event: object) -> None:
        blocks.append(event)
        if len(blocks) == 2:  # the second turn's block was listed; its command goes on
            (workspace / "go").touch()
            for _ in range(3000):  # until it wrote, holding the turn before its end
                if written.exists():
                    break
                time.sleep(0.01)

    host = await Host.open(HostOptions(workspace=workspace, provider="scripted", script=script))
    try:
        session = await host.new_session()
        session.subscribe(write_after_the_listing, kinds=(BlockFinished,))
        await session.submit("write a file")
        await session.submit("start a command")
        report = await undo(session)
    finally:
        await host.close()
    assert getattr(blocks[1], "files", None) == ()  # the block itself changed nothing
    assert sorted(report.removed) == ["go", "late.txt", "written"], report
    assert (workspace / "first.txt").read_text() == "one"


BETWEEN = """
bg = await shell("while [ ! -e go ]; do sleep 0.01; done; echo built; exit 4")
server = await shell("sleep 600")  # still running when the session closes
"""


async def test_a_command_that_ends_between_turns_is_reported_at_once_for_the_next_request(
    workspace: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A command left running that ended after its turn was reported only by the next
    turn's request, as part of that turn (and in `vis run`, never). It is reported when it
    ends, outside any turn (`turn_id` empty), after the turn's end; `vis run` prints it
    after the turn; the next request carries it before the person's words, also rebuilt
    after a reopen. The command Vis stops as the session closes is not reported."""
    import asyncio
    import os

    from vis_core.printmode import PrintRenderer
    from vis_core.store import Store

    script = tmp_path / "script.yaml"
    responses = [{"code": BETWEEN}, {"text": "Started."}, {"text": "Again."}]
    script.write_text(yaml.safe_dump(responses), encoding="utf-8")
    (workspace / ".gitignore").write_text("go\n")  # the test's signal: no file a block changed
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted", script=script))
    events: list = []
    reported = asyncio.Event()

    def watch(event: object) -> None:
        events.append(event)
        if isinstance(event, BackgroundCommandEnded):
            reported.set()

    try:
        session = await host.new_session()
        session.subscribe(watch)
        session.subscribe(PrintRenderer(as_json=False, summarize_steps=False))
        first = await session.submit("build in the background")
        (workspace / "go").touch()
        await asyncio.wait_for(reported.wait(), 30)
        printed = capsys.readouterr().out.splitlines()
        second = await session.submit("again")
        requests = session.model.provider.requests  # type: ignore[union-attr]
        reopened = await host.open_session(session.id)
        rebuilt = await reopened.next_request()
    finally:
        await host.close()

    assert first.status is TurnStatus.COMPLETED and second.status is TurnStatus.COMPLETED
    (report,) = [e for e in events if isinstance(e, BackgroundCommandEnded)]
    assert report.turn_id == "" and report.state == "exit 4" and report.output == "built"
    kinds = [type(e).__name__ for e in events if isinstance(e, TurnEnded | BackgroundCommandEnded)]
    assert kinds == ["TurnEnded", "BackgroundCommandEnded", "TurnEnded"]
    assert printed[-1] == f"⋯ background command {report.handle_id} ended: exit 4 · " + (
        report.command
    )
    assert printed.index("Started.") < len(printed) - 1
    told = f"{report.text()}\n\nagain"
    assert requests[2].messages[-1].text == told
    assert [m.text for m in rebuilt.messages].count(told) == 1
    with Store(Path(os.environ["VIS_HOME"]) / "vis.db") as store:
        stored = store.events(session.id, types=[BackgroundCommandEnded.type])
    assert [row.event.handle_id for row in stored] == [report.handle_id]
