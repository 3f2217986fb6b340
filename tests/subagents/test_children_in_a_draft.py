"""A child of a session in a draft, and a fork consulting one, work on the draft's files."""

from __future__ import annotations

import subprocess
import textwrap
from pathlib import Path

from vis_core.events import BlockFinished, Event
from vis_core.store import Store

from .support import open_host, script

PARENT = textwrap.dedent(
    """\
    await draft_create("work")
    open("a.txt", "w").write("draft text\\n")
    print("READER:", await run_session("READ a.txt"))
    print("WRITER:", await run_session("WRITE b.txt", read_only=False))
    print("b in draft:", open("b.txt").read().strip())
    """
)
READ = [{"code": "print(open('a.txt').read().strip())\nprint(await cat('a.txt'))"}, {"text": "ok"}]
WRITE = [
    {
        "code": textwrap.dedent(
            """\
            open("b.txt", "w").write("child\\n")
            for act in (draft_approve, draft_create):
                try:
                    await act("x")
                except Exception as exc:
                    print("refused:", exc)
            """
        )
    },
    {"text": "wrote b"},
]


def _git(workspace: Path, *args: str) -> None:
    command = ["git", "-c", "user.name=P", "-c", "user.email=p@e", *args]
    subprocess.run(command, cwd=workspace, check=True, capture_output=True)


async def test_children_of_a_session_in_a_draft_read_and_change_the_draft(
    workspace: Path, tmp_path: Path, vis_home: Path
) -> None:
    """A child asked to review the parent's draft read the live workspace (the tester's
    child printed "hi", where the draft said "draft text"), and a writing child made a draft
    of the live files, stale beside its parent's. Children now work in the parent's draft;
    only the parent approves it, and the live workspace is untouched."""
    (workspace / "a.txt").write_text("hi\n")
    _git(workspace, "init", "-q")
    _git(workspace, "add", "-A")
    _git(workspace, "commit", "-qm", "start")
    path = script(
        tmp_path / "s.yaml",
        [{"code": PARENT}, {"text": "done"}],
        {"READ a.txt": READ, "WRITE b.txt": WRITE},
    )
    host = await open_host(workspace, path)
    events: list[Event] = []
    try:
        parent = await host.new_session()
        parent.subscribe(events.append)
        ended = await parent.submit("review")
        printed = ""
        with Store(host.paths.db_file) as store:
            for child in store.children(parent.id):
                finished = [e.event for e in store.events(child.id)]
                printed += "".join(e.stdout for e in finished if isinstance(e, BlockFinished))
    finally:
        await host.close()
    assert ended.status.value == "completed", ended.error
    (block,) = [e for e in events if isinstance(e, BlockFinished)]
    assert block.error is None, block.error
    assert "draft text" in printed and "hi" not in printed.split()
    assert printed.count("refused:") == 2, printed
    assert "b in draft: child" in block.stdout
    assert not (workspace / "b.txt").exists()
    assert (workspace / "a.txt").read_text() == "hi\n"
