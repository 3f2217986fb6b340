"""A big folder (a home or data folder): a checkpoint copies a bounded share, newest first,
lists the workspace once per block, and says what ``/undo`` cannot restore; a folder too big
to list is not listed while it is, the person and the model are told, and it is listed again
once it shrinks."""

from __future__ import annotations

import json
import os
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from big_index import indexed
from cli_support import script, vis

from vis_core.agent.person_input import undo
from vis_core.events import BlockFinished, Notification
from vis_core.host import Host, HostOptions
from vis_core.model.block import FileChangeKind
from vis_core.model.undo import FolderTooBig
from vis_core.system.git import Entries, TooMany
from vis_core.tools.block_changes import LISTED_AGAIN, LOST, UNLISTED, BlockChanges
from vis_core.tools.checkpoints import Checkpoints


def _aged(path: Path, text: str, age: int) -> Path:
    path.write_text(text)
    then = 1_700_000_000 - age * 1000
    os.utime(path, (then, then))
    return path


def _kept(private: Path) -> list[bytes]:
    return sorted(blob.read_bytes() for blob in (private / "blobs").iterdir())


def test_a_checkpoint_copies_the_newest_files_within_its_budget(tmp_path: Path) -> None:
    ws, private = tmp_path / "ws", tmp_path / "private"
    ws.mkdir()
    _aged(ws / "old.txt", "old\n", 3)
    _aged(ws / "data.csv", "1,2,3\n" * 20_000, 2)  # 120 kB nobody touches: past the budget
    _aged(ws / "mid.txt", "mid\n", 1)
    _aged(ws / "new.txt", "new\n", 0)
    points = Checkpoints(ws, private, max_new_files=2, max_new_bytes=64 * 1024)
    taken = points.take("t1", 1)
    assert taken is not None and set(taken.files) == {"old.txt", "data.csv", "mid.txt", "new.txt"}
    assert _kept(private) == [b"mid\n", b"new\n"]  # the newest two; the others listed only
    assert taken.files["old.txt"][3] is None and taken.files["data.csv"][3] is None

    watch = BlockChanges(points, "t1")
    watch.start()
    (ws / "old.txt").write_text("old, changed\n")
    (ws / "new.txt").write_text("new, changed\n")
    changes = {c.path: c for c in watch.finish()}
    assert changes["new.txt"].kind is FileChangeKind.CHANGED and "-new" in changes["new.txt"].diff
    assert changes["old.txt"].note == LOST  # said when it happens, not first at /undo

    points.take("t2", 2)  # the next turn copies what changed, not what the first left out
    assert _kept(private) == [b"mid\n", b"new\n", b"new, changed\n", b"old, changed\n"]
    report = points.restore(2)
    assert report.restored == ("new.txt",) and report.not_kept == ("old.txt",)
    assert (ws / "new.txt").read_text() == "new\n"
    assert (ws / "old.txt").read_text() == "old, changed\n"  # left as it is, and said so


async def test_a_one_block_turn_lists_the_workspace_twice(workspace: Path, tmp_path: Path) -> None:
    """Before the block (the checkpoint) and after it; the turn's end reuses the block's
    listing to see whether the turn changed anything (it listed a third time)."""
    (workspace / "notes.txt").write_text("one\n")
    steps = [{"code": "print('looked')"}, {"text": "Nothing to change."}]
    host = await Host.open(
        HostOptions(workspace=workspace, provider="scripted", script=script(tmp_path, steps))
    )
    try:
        session = await host.new_session()
        points = session.checkpoints
        assert isinstance(points, Checkpoints)
        listings = []
        real_scan = points.scan

        def counted_scan(*, again: bool = False, turn: Any = None) -> dict[str, os.stat_result]:
            listings.append(1)
            return real_scan(again=again, turn=turn)

        points.scan = counted_scan  # type: ignore[method-assign]
        await session.submit("look around")
        assert len(listings) == 2
        assert (
            list(points.newest_first()) == []
        )  # the turn changed nothing: its checkpoint is dropped
    finally:
        await host.close()


def test_run_says_undo_cannot_restore_a_file_too_large_to_keep(
    workspace: Path, vis_home: Path, tmp_path: Path
) -> None:
    with open(workspace / "big.log", "wb") as out:  # sparse: 12 MB, past what one file may
        out.truncate(12 * 1024 * 1024)
    steps = [{"code": "open('big.log', 'ab').write(b'more')"}, {"text": "Appended."}]
    done = vis(
        "run",
        "--json",
        "--provider",
        "scripted",
        "--script",
        str(script(tmp_path, steps)),
        "append to the log",
        cwd=workspace,
        env_home=vis_home,
    )
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    block = next(e for e in events if e["type"] == "BlockFinished")
    assert block["files"] == [
        {"path": "big.log", "kind": "changed", "diff": "", "added": 0, "removed": 0, "note": LOST}
    ]


def test_a_block_line_says_which_file_undo_cannot_restore() -> None:
    """``vis run``'s line of a block: the note of a file without a copy, not the others'."""
    from vis_core.events import BlockFinished
    from vis_core.model.block import FileChange, FileChangeKind
    from vis_core.printmode import block_line

    files = (
        FileChange("big.log", FileChangeKind.CHANGED, note=LOST),
        FileChange("logo.png", FileChangeKind.CREATED, note="binary"),
    )
    line = block_line("write()", BlockFinished("s", files=files))
    assert "~ big.log[/] [dim](/undo cannot restore it)[/]" in line
    assert line.endswith("+ logo.png[/]") and line.count("/undo") == 1


async def test_a_folder_too_big_to_list_is_said_once_and_undo_says_why(
    workspace: Path, tmp_path: Path
) -> None:
    """Past ``max_listed`` files no checkpoint is taken and no block lists its files (each
    listing would cost seconds): the person is told once, each block's row and result say
    its files are not listed, and /undo says why it is off. The turn does not look again
    (a block that shrinks the folder is not listed); the next turn does."""
    for name in ("a.txt", "b.txt", "c.txt"):
        (workspace / name).write_text("x\n")
    steps = [
        {"code": "open('a.txt', 'w').write('y\\n')"},
        {"code": "import os; os.remove('c.txt')"},  # under the limit now
        {"code": "open('b.txt', 'w').write('y\\n')"},
        {"text": "Done."},
        {"code": "open('b.txt', 'w').write('z\\n')"},
        {"text": "Done again."},
    ]
    host = await Host.open(
        HostOptions(workspace=workspace, provider="scripted", script=script(tmp_path, steps))
    )
    events: list[object] = []
    try:
        session = await host.new_session()
        session.checkpoints = Checkpoints(workspace, tmp_path / "points", max_listed=2)
        session.subscribe(events.append)
        await session.submit("change two files")
        (workspace / "c.txt").write_text("x\n")  # past the limit again
        with pytest.raises(FolderTooBig, match="holds more than 2 files"):
            await undo(session)
        (workspace / "c.txt").unlink()
        await session.submit("and again")
    finally:
        await host.close()
    told = [e.text for e in events if isinstance(e, Notification)]
    assert len(told) == 1 and "nor keep checkpoints for /undo; start Vis in a project" in told[0]
    blocks = [e for e in events if isinstance(e, BlockFinished)]
    assert len(blocks) == 4 and all(b.files == () for b in blocks[:3])
    unlisted = UNLISTED.format(most=2)
    assert all(b.stdout == f"[Vis: {unlisted}]" for b in blocks[:3])
    assert [(c.path, c.kind) for c in blocks[3].files] == [("b.txt", FileChangeKind.CHANGED)]
    assert "-y\n+z\n" in blocks[3].files[0].diff and "[Vis:" not in blocks[3].stdout
    assert (workspace / "a.txt").read_text() == "y\n"


async def test_a_block_that_grows_the_folder_past_the_limit_hides_nothing(
    workspace: Path, tmp_path: Path
) -> None:
    """A turn that began under the limit: the block that fills the folder says its files are
    not listed, the block that empties it is listed again, with what the blocks before it
    changed, the next block is listed as usual, and /undo puts the files back."""
    for name in ("src1.py", "src2.py", "src3.py"):
        (workspace / name).write_text(f"# {name}\n")
    fill = "import os\nos.mkdir('gen')\nfor i in range(30): open(f'gen/{i}', 'w').close()"
    steps = [
        {"code": fill + "\nprint('made')"},
        {"code": "import os; os.remove('src1.py')"},
        {"code": "import shutil; shutil.rmtree('gen')"},
        {"code": "import os; os.remove('src2.py'); open('src3.py', 'w').write('gone\\n')"},
        {"text": "Done."},
    ]
    host = await Host.open(
        HostOptions(workspace=workspace, provider="scripted", script=script(tmp_path, steps))
    )
    events: list[object] = []
    try:
        session = await host.new_session()
        session.checkpoints = Checkpoints(workspace, tmp_path / "points", max_listed=20)
        session.subscribe(events.append)
        await session.submit("hide what you change")
        report = await undo(session)
    finally:
        await host.close()
    blocks = [e for e in events if isinstance(e, BlockFinished)]
    said = f"[Vis: {UNLISTED.format(most=20)}]"
    assert [b.stdout for b in blocks[:2]] == [f"made\n\n{said}", said]
    assert blocks[0].files == blocks[1].files == ()
    assert blocks[2].stdout == f"[Vis: {LISTED_AGAIN}]"
    assert [(c.path, c.kind) for c in blocks[2].files] == [("src1.py", FileChangeKind.REMOVED)]
    assert blocks[3].stdout == ""
    assert [(c.path, c.kind) for c in blocks[3].files] == [
        ("src2.py", FileChangeKind.REMOVED),
        ("src3.py", FileChangeKind.CHANGED),
    ]
    assert report.restored == ("src1.py", "src2.py", "src3.py")
    assert all((workspace / n).read_text() == f"# {n}\n" for n in report.restored)
    assert not any(isinstance(e, Notification) for e in events)


def test_a_listing_git_names_too_much_of_is_stopped_as_it_comes(tmp_path: Path) -> None:
    """An index naming more files than a listing takes: Git's output is read as it comes and
    stopped past the limit, and the folder is too big to list, as one holding those files
    is. Read whole, its 10 MB of long paths cost Vis several times that."""
    ws = tmp_path / "ws"
    indexed(ws, paths=5_000, length=2_000)
    points = Checkpoints(ws, tmp_path / "private", max_listed=1_000)
    tracemalloc.start()
    try:
        with pytest.raises(FolderTooBig, match="holds more than 1,000 files"):
            points.scan()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 << 20  # the 1,001 names it holds, not the 5,000 git lists


def test_git_output_past_its_bound_of_bytes_is_refused_as_it_comes() -> None:
    """A listing of a few long paths, or one path without end, stops at its bound of bytes
    as the entries come, not once the whole has been read."""
    entries = Entries(most=10, most_bytes=100)
    entries.take(b"a\0bb\0c")
    entries.take(b"c\0")
    assert entries.items == [b"a", b"bb", b"cc"]
    with pytest.raises(TooMany, match="more than 100 bytes"):
        for _ in range(100):
            entries.take(b"x" * 10)
    with pytest.raises(TooMany, match="more than 10 entries"):
        Entries(most=10).take(b"n\0" * 11)
