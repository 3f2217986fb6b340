"""What each block of a turn changed: diffs against the checkpoint, then the block before."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from vis_core.model.block import FileChangeKind
from vis_core.tools.block_changes import (
    LEFT_OUT,
    MAX_BLOCK_DIFF_CHARS,
    MAX_DIFF_INPUT,
    MAX_DIFF_LINES,
    TIME_LEFT_OUT,
    BlockChanges,
)
from vis_core.tools.checkpoints import Checkpoints


def _turn(tmp_path: Path) -> tuple[Path, BlockChanges]:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("one\ntwo\n")
    (ws / "README.md").write_text("# Project\n")
    (ws / "logo.png").write_bytes(b"\x89PNG\0\0old")
    (ws / "big.log").write_text("x\n" * (MAX_DIFF_INPUT // 2 + 10))
    subprocess.run(["git", "-C", str(ws), "init", "-q"], check=True)
    subprocess.run(["git", "-C", str(ws), "add", "README.md"], check=True)  # held by git
    points = Checkpoints(ws, tmp_path / "private")
    points.take("t1", 1)
    return ws, BlockChanges(points, "t1")


def test_each_block_lists_what_it_created_changed_and_removed(tmp_path: Path) -> None:
    ws, watch = _turn(tmp_path)
    watch.start()
    (ws / "README.md").unlink()
    (ws / "a.txt").write_text("one\nTWO\n")
    (ws / "new.txt").write_text("hello\n")
    first = {c.path: c for c in watch.finish()}
    assert set(first) == {"README.md", "a.txt", "new.txt"}
    assert first["README.md"].kind is FileChangeKind.REMOVED
    assert "-# Project" in first["README.md"].diff  # the bytes came from git's blob
    assert first["a.txt"].kind is FileChangeKind.CHANGED
    assert "-two\n+TWO" in first["a.txt"].diff and first["a.txt"].added == 1
    assert first["new.txt"].kind is FileChangeKind.CREATED and "+hello" in first["new.txt"].diff
    # the next block of the turn: only its own change, diffed against what the first left
    watch.start()
    (ws / "a.txt").write_text("one\nTWO\nthree\n")
    second = watch.finish()
    assert [c.path for c in second] == ["a.txt"]
    assert "-TWO" not in second[0].diff and "+three" in second[0].diff
    watch.start()
    assert watch.finish() == ()  # a block that changed nothing


def test_binary_and_huge_files_are_named_not_diffed(tmp_path: Path) -> None:
    ws, watch = _turn(tmp_path)
    # 5,000 lines of 100 values, each 1% of them, reordered: its diff took 2 s of Vis's CPU
    # (20,000 lines, 89 s; the search walks every pair of equal lines for each block it finds)
    values = [f"{n:02}\n" for n in range(100)]
    watch.start()  # a block writes it, the next one reorders its lines
    (ws / "rep.txt").write_text("".join(values[n % 100] for n in range(5000)))
    watch.finish()
    watch.start()
    (ws / "rep.txt").write_text("".join(values[n * 7 % 100] for n in range(5000)))
    (ws / "logo.png").write_bytes(b"\x89PNG\0\0new")
    (ws / "big.log").write_text("y\n" * (MAX_DIFF_INPUT // 2 + 10))
    (ws / "many.txt").write_text("".join(f"line {n}\n" for n in range(MAX_DIFF_LINES * 2)))
    changes = {c.path: c for c in watch.finish()}
    assert changes["logo.png"].note == "binary" and changes["logo.png"].diff == ""
    assert changes["big.log"].note == "too large to diff" and changes["big.log"].diff == ""
    assert changes["rep.txt"].note == "too repetitive to diff" and changes["rep.txt"].diff == ""
    many = changes["many.txt"]
    assert many.diff.count("\n") == MAX_DIFF_LINES and many.note.startswith("diff cut:")
    assert many.added == MAX_DIFF_LINES * 2  # counted whole


def test_a_blocks_diffs_together_look_through_a_bounded_number_of_lines(tmp_path: Path) -> None:
    """Each file's diff is bounded, and so is their sum: a block writing 200 files at the
    bound of each took minutes of Vis's CPU. Past it, a file is listed with its note."""
    ws, _ = _turn(tmp_path)
    watch = BlockChanges(Checkpoints(ws, tmp_path / "points"), "t2", diff_steps=250)
    watch.start()
    for name in ("f1.txt", "f2.txt", "f3.txt"):  # 100 lines each: 100 pairs of equal lines
        (ws / name).write_text("".join(f"{name} {n}\n" for n in range(100)))
    watch.finish()
    watch.start()
    for name in ("f1.txt", "f2.txt", "f3.txt"):
        (ws / name).write_text("".join(f"{name} {n}\n" for n in range(100)) + "end\n")
    changes = {c.path: c for c in watch.finish()}
    assert changes["f1.txt"].diff and changes["f2.txt"].diff  # 200 of the 250
    assert changes["f3.txt"].note == TIME_LEFT_OUT and changes["f3.txt"].diff == ""
    watch.start()
    (ws / "f3.txt").write_text("new\n")
    assert "+new" in watch.finish()[0].diff  # each block has its own


def test_a_block_writing_many_large_files_keeps_a_bounded_row(tmp_path: Path) -> None:
    """Each file's diff is cut, and so are all of one block's: 30 files of 40 KB diffs
    stored 1.2 MB in one row (a loop of such blocks grew vis.db without bound)."""
    ws, watch = _turn(tmp_path)
    watch.start()
    line = "x" * 99 + "\n"
    for n in range(30):
        (ws / f"f{n:02}.txt").write_text(line * MAX_DIFF_LINES)
    changes = watch.finish()
    assert [c.path for c in changes] == [f"f{n:02}.txt" for n in range(30)]  # all listed
    assert sum(len(c.diff) for c in changes) <= MAX_BLOCK_DIFF_CHARS
    assert changes[0].diff and changes[-1].diff == "" and changes[-1].note == LEFT_OUT
    assert all(c.added == MAX_DIFF_LINES for c in changes)  # still counted


def test_a_file_swapped_for_a_pipe_after_the_listing_does_not_hang_vis(tmp_path: Path) -> None:
    """A block's background command swaps a file for a named pipe in a loop: when Vis read
    the file after listing it, opening the pipe waited for a writer for good (the turn and
    the app hung). The bytes after a block are read as a regular file only, never waited on.
    (The pipe stands where the listing saw a file, as the race leaves it.)"""
    import os
    import threading

    ws, watch = _turn(tmp_path)
    watch.start()
    (ws / "a.txt").write_text("changed\n")
    done = threading.Event()

    def guard() -> None:  # only so that a failing read ends instead of hanging the suite
        if not done.wait(60):
            os.close(os.open(ws / "a.txt", os.O_WRONLY | os.O_NONBLOCK))

    os.replace(ws / "a.txt", ws / "a.kept")
    os.mkfifo(ws / "a.txt")
    threading.Thread(target=guard, daemon=True).start()
    try:
        data = watch._read("a.txt")
    finally:
        done.set()
    assert data is None


def test_vis_s_own_files_inside_the_workspace_are_not_the_block_s(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Vis started in the home folder holds its own store (``~/.local/share/vis``) in the
    workspace: what Vis itself writes there during a block (the database, checkpoints, session
    locks) was listed as created by the model's block, and kept the turn's checkpoint alive."""
    ws = tmp_path / "home"
    own = ws / ".local" / "share" / "vis"
    monkeypatch.setenv("VIS_HOME", str(own))
    own.mkdir(parents=True)
    (ws / "notes.txt").write_text("one\n")
    points = Checkpoints(ws, own / "checkpoints" / "s1")
    points.take("t1", 1)
    watch = BlockChanges(points, "t1")
    watch.start()
    (own / "vis.db").write_bytes(b"SQLite format 3\0")
    (ws / "notes.txt").write_text("two\n")
    assert [c.path for c in watch.finish()] == ["notes.txt"]
    points.take("t2", 2)
    (own / "vis.db").write_bytes(b"SQLite format 3\0 and more")
    assert points.drop_if_unchanged("t2")  # only Vis's own files moved


def test_a_block_that_only_changes_a_file_s_mode_lists_it(tmp_path: Path) -> None:
    """``chmod +x`` moves no size and no modification time: the block still changed the
    file, and says how."""
    ws, watch = _turn(tmp_path)
    (ws / "a.txt").chmod(0o644)
    watch.start()
    (ws / "a.txt").chmod(0o755)
    (change,) = watch.finish()
    assert change.path == "a.txt" and change.kind is FileChangeKind.CHANGED
    assert change.note == "mode 644 → 755" and change.diff == ""
    watch.start()
    (ws / "a.txt").chmod(0o700)
    (ws / "a.txt").write_text("one\nTWO\n")
    (change,) = watch.finish()
    assert change.note == "mode 755 → 700" and "+TWO" in change.diff


def test_after_a_move_the_bytes_before_come_from_the_copy_left_while_it_is_unchanged(
    tmp_path: Path,
) -> None:
    """A block moved into a copy of the workspace (a draft) and edited there: the diff is
    against the files it left, unless one of them changed size since (then not known)."""
    ws, watch = _turn(tmp_path)
    draft = tmp_path / "draft"
    subprocess.run(["cp", "-a", str(ws), str(draft)], check=True)
    watch.start()
    watch.checkpoints.move_to(draft)
    watch.rebase()
    (draft / "a.txt").write_text("one\nTWO\n")
    (draft / "README.md").write_text("# Project\nmore\n")
    (ws / "README.md").write_text("# edited by the person meanwhile\n")
    changes = {c.path: c for c in watch.finish()}
    assert "-two\n+TWO" in changes["a.txt"].diff and changes["a.txt"].note == ""
    assert changes["README.md"].diff == "" and changes["README.md"].note == "not kept: no diff"
