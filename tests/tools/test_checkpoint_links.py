"""``/undo`` puts the workspace's links back as it puts files back: by their target (text,
never followed), only what the undone turns changed and only while it is as they left it,
and never through a link a block swapped in where a folder was."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from vis_core.tools.block_changes import LINKS_LOST, BlockChanges
from vis_core.tools.checkpoints import Checkpoints


def _turn(points: Checkpoints, turn_id: str, position: int, work: Callable[[], Any]) -> None:
    """One turn that does ``work`` and ends in this Vis (its ``left`` record is kept)."""
    points.take(turn_id, position)
    work()
    assert not points.drop_if_unchanged(turn_id)


def test_undo_removes_the_links_a_turn_made_never_what_they_lead_to(tmp_path: Path) -> None:
    """A turn that made links left them after ``/undo`` ("no file differed"): they go now,
    the links themselves, and the folder made for one with them; what they led to stays."""
    ws, outside = tmp_path / "ws", tmp_path / "outside.txt"
    ws.mkdir()
    outside.write_text("the user's file\n")
    (ws / "notes.txt").write_text("notes\n")
    points = Checkpoints(ws, tmp_path / "private")

    def work() -> None:
        (ws / "to-notes").symlink_to("notes.txt")
        (ws / "out").symlink_to(outside)
        (ws / "made").mkdir()
        (ws / "made" / "deep").symlink_to("../notes.txt")

    _turn(points, "t1", 1, work)
    report = points.restore()
    assert report.removed == ("made/deep", "out", "to-notes") and report.restored == ()
    assert report.links == ("made/deep", "out", "to-notes")
    assert sorted(p.name for p in ws.iterdir()) == ["notes.txt"]
    assert (ws / "notes.txt").read_text() == "notes\n"
    assert outside.read_text() == "the user's file\n"


def test_undo_puts_back_links_removed_or_re_pointed_with_their_old_target(tmp_path: Path) -> None:
    """A removed link, one re-pointed, and one whose folder went with it come back with the
    target they had, read from what was stored (a new Vis undoes it)."""
    ws = tmp_path / "ws"
    (ws / "lib").mkdir(parents=True)
    (ws / "a.txt").write_text("a\n")
    (ws / "current").symlink_to("a.txt")
    (ws / "gone").symlink_to("/nowhere/at/all")
    (ws / "lib" / "up").symlink_to("../a.txt")
    points = Checkpoints(ws, tmp_path / "private")

    def work() -> None:
        (ws / "current").unlink()
        (ws / "current").symlink_to("b.txt")
        (ws / "gone").unlink()
        (ws / "lib" / "up").unlink()
        (ws / "lib").rmdir()

    _turn(points, "t1", 1, work)
    report = Checkpoints(ws, tmp_path / "private").restore()
    assert report.restored == ("current", "gone", "lib/up") and report.removed == ()
    assert report.links == ("current", "gone", "lib/up")
    assert os.readlink(ws / "current") == "a.txt"
    assert os.readlink(ws / "gone") == "/nowhere/at/all"
    assert os.readlink(ws / "lib" / "up") == "../a.txt"


def test_undo_swaps_back_a_file_the_turn_replaced_with_a_link_and_the_other_way(
    tmp_path: Path,
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "config.toml").write_text("mine = true\n")
    (ws / "shared").symlink_to("config.toml")
    points = Checkpoints(ws, tmp_path / "private")

    def work() -> None:
        (ws / "config.toml").unlink()
        (ws / "config.toml").symlink_to("/etc/hostname")
        (ws / "shared").unlink()
        (ws / "shared").write_text("a file now\n")

    _turn(points, "t1", 1, work)
    report = points.restore()
    assert report.restored == ("config.toml", "shared") and report.links == ("shared",)
    assert not (ws / "config.toml").is_symlink()
    assert (ws / "config.toml").read_text() == "mine = true\n"
    assert os.readlink(ws / "shared") == "config.toml"


def test_a_link_changed_after_the_turn_is_kept_and_named(tmp_path: Path) -> None:
    """Only what the turns changed, and only as they left it: a link the turn made that the
    person re-pointed, and one it removed that the person made again elsewhere, are kept and
    named; a link the person made after the turn is not touched."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "old").symlink_to("a")
    (ws / "untouched").symlink_to("u")
    points = Checkpoints(ws, tmp_path / "private")

    def work() -> None:
        (ws / "new").symlink_to("x")
        (ws / "old").unlink()

    _turn(points, "t1", 1, work)
    (ws / "new").unlink()
    (ws / "new").symlink_to("y")  # the person's
    (ws / "old").symlink_to("b")  # the person's
    (ws / "mine").symlink_to("m")  # the person's
    report = points.restore()
    assert report.kept == ("new", "old") and report.restored == report.removed == ()
    assert [os.readlink(ws / n) for n in ("new", "old", "mine", "untouched")] == [
        "y",
        "b",
        "m",
        "u",
    ]


def test_a_turn_that_only_changed_a_link_is_undone(tmp_path: Path) -> None:
    """A turn whose one change was re-pointing a link was taken for a turn that changed
    nothing: its checkpoint went, and ``/undo`` undid the turn before it instead."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "f.txt").write_text("one\n")
    points = Checkpoints(ws, tmp_path / "private")
    _turn(points, "t1", 1, lambda: (ws / "f.txt").write_text("two\n"))
    (ws / "current").symlink_to("v1")
    points.take("t2", 2)
    (ws / "current").unlink()
    (ws / "current").symlink_to("v2")
    assert not points.drop_if_unchanged("t2")
    report = points.restore()
    assert report.turns == (2,) and report.restored == ("current",)
    assert os.readlink(ws / "current") == "v1" and (ws / "f.txt").read_text() == "two\n"


def test_a_target_is_text_kept_exactly(tmp_path: Path) -> None:
    """Whatever a target holds (a line break, a bidi control, bytes that are not UTF-8, a
    path far outside) is stored as text and made again byte for byte, never followed."""
    ws = tmp_path / "ws"
    ws.mkdir()
    targets = [b"../../../../etc/shadow", b"two\nlines", b"\xe2\x80\xaeevil", b"\xff\xfe raw"]
    for n, target in enumerate(targets):
        os.symlink(target, os.fsencode(ws / f"l{n}"))
    points = Checkpoints(ws, tmp_path / "private")
    _turn(points, "t1", 1, lambda: [(ws / f"l{n}").unlink() for n in range(len(targets))])
    assert not any(ws.iterdir())
    Checkpoints(ws, tmp_path / "private").restore()
    assert [os.readlink(os.fsencode(ws / f"l{n}")) for n in range(len(targets))] == targets


def test_a_link_is_never_made_in_a_folder_swapped_for_a_link(tmp_path: Path) -> None:
    """After the turn, a block's command swaps folder ``lib`` for a link, to a folder
    outside or to another folder of the workspace: the link ``lib/up`` the turn removed is
    not made through it (nothing appears there), and ``/undo`` says why."""
    for where in ("outside", "ws/other"):
        base = tmp_path / where.replace("/", "-")
        ws, elsewhere = base / "ws", base / where
        (ws / "lib").mkdir(parents=True)
        elsewhere.mkdir(parents=True, exist_ok=True)
        (ws / "lib" / "up").symlink_to("../a.txt")
        points = Checkpoints(ws, base / "private")
        _turn(points, "t1", 1, lambda ws=ws: (ws / "lib" / "up").unlink())
        (ws / "lib").rmdir()
        (ws / "lib").symlink_to(elsewhere)
        with pytest.raises(OSError, match="a folder on the way to lib/up is now a link"):
            points.restore()
        assert list(elsewhere.iterdir()) == []


def test_the_link_itself_goes_not_a_file_put_in_its_place(tmp_path: Path) -> None:
    """Between the listing and the removal a command swaps the link the turn made for a
    file: that file is not removed; ``/undo`` says the link changed."""
    ws = tmp_path / "ws"
    ws.mkdir()
    points = Checkpoints(ws, tmp_path / "private")
    _turn(points, "t1", 1, lambda: (ws / "l").symlink_to("x"))
    real_scan = points.scan

    def scan_then_swap(*, again: bool = False) -> dict:
        found = real_scan(again=again)
        (ws / "l").unlink()
        (ws / "l").write_text("put there meanwhile\n")
        return found

    points.scan = scan_then_swap  # type: ignore[method-assign]
    with pytest.raises(OSError, match="l changed while /undo ran"):
        points.restore()
    assert (ws / "l").read_text() == "put there meanwhile\n"


def test_undo_racing_a_folder_swapped_for_a_link_makes_and_removes_no_link_outside(
    tmp_path: Path,
) -> None:
    """A command left running swaps ``dir`` and a link to a folder outside the workspace
    (atomically, renameat2 RENAME_EXCHANGE) while ``/undo`` removes the links a turn made in
    ``dir`` and makes again the ones it removed: outside, no link is made or removed."""
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    (ws / "dir").mkdir(parents=True)
    outside.mkdir()
    names = [f"l{i}" for i in range(5)]
    for name in names:
        (ws / "dir" / name).symlink_to("before")
        (outside / name).symlink_to("the user's link")
        (outside / f"new-{name}").symlink_to("the user's other link")
    os.symlink(outside, ws / "dir.link")
    outside_before = {p.name: os.readlink(p) for p in outside.iterdir()}
    points = Checkpoints(ws, tmp_path / "private")
    swapper = (
        "import ctypes, sys\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "print('swapping', flush=True)\n"
        "while libc.renameat2(-100, b'dir', -100, b'dir.link', 2) == 0:\n"
        "    pass\n"
        "sys.exit('renameat2 failed')\n"
    )
    racer = subprocess.Popen([sys.executable, "-c", swapper], cwd=ws, stdout=subprocess.PIPE)
    refused = undone = 0
    try:
        assert racer.stdout is not None and racer.stdout.readline() == b"swapping\n"
        for turn in range(200):
            racer.send_signal(signal.SIGSTOP)  # the turn itself sees a still workspace
            os.waitpid(racer.pid, os.WUNTRACED)
            real = ws / ("dir.link" if (ws / "dir").is_symlink() else "dir")
            points.take(f"turn-{turn}", turn)
            for name in names:  # the turn removes every link and makes new ones
                (real / name).unlink()
                (real / f"new-{name}").symlink_to("made by the turn")
            assert not points.drop_if_unchanged(f"turn-{turn}")
            racer.send_signal(signal.SIGCONT)
            try:
                undone += bool(points.restore(1).links)
            except OSError:
                refused += 1
            racer.send_signal(signal.SIGSTOP)  # whatever the race left, tidy for the next
            os.waitpid(racer.pid, os.WUNTRACED)
            real = ws / ("dir.link" if (ws / "dir").is_symlink() else "dir")
            for item in list(real.iterdir()):
                item.unlink()
            for name in names:
                (real / name).symlink_to("before")
            racer.send_signal(signal.SIGCONT)
    finally:
        racer.kill()
        racer.wait()
    assert refused > 0 and undone > 0  # the race really ran, and undid links
    assert {p.name: os.readlink(p) for p in outside.iterdir()} == outside_before


def test_links_past_the_budget_are_not_recorded_and_blocks_say_so(tmp_path: Path) -> None:
    """A block that makes a hundred thousand links of 4 KiB would cost each manifest 400 MB:
    past ``max_links`` (or ``max_link_bytes``) a checkpoint records no link, ``/undo``
    leaves links as they are, and a block that changes one says ``/undo`` cannot restore it."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "f.txt").write_text("one\n")
    long = "x/" * 2000
    for n in range(30):
        (ws / f"l{n}").symlink_to(long + str(n))
    private = tmp_path / "private"
    for points in (
        Checkpoints(ws, private, max_links=20),
        Checkpoints(ws, tmp_path / "private2", max_link_bytes=50_000),
    ):
        points.take("t1", 1)
        watch = BlockChanges(points, "t1")
        watch.start()
        (ws / "f.txt").write_text("two\n")
        (ws / "l0").unlink()
        (ws / "made").symlink_to("x")
        changes = {c.path: c.note for c in watch.finish()}
        assert LINKS_LOST in changes["l0"] and LINKS_LOST in changes["made"]
        assert LINKS_LOST not in changes["f.txt"]
        assert not points.drop_if_unchanged("t1", watch.seen)
        assert max(p.stat().st_size for p in points.folder.glob("*.json")) < 4096
        report = points.restore()
        assert report.restored == ("f.txt",) and report.links == () and report.kept == ()
        assert (ws / "made").is_symlink() and not (ws / "l0").is_symlink()
        (ws / "made").unlink()
        (ws / "l0").symlink_to(long + "0")


def test_checkpoints_of_a_vis_that_kept_no_links_still_restore(tmp_path: Path) -> None:
    """A session an older Vis began (no links in its manifests) restores its files as
    before and leaves links alone; the next checkpoint lists the links whole, so the turns
    after it undo theirs."""
    ws, private = tmp_path / "ws", tmp_path / "private"
    ws.mkdir()
    (ws / "f.txt").write_text("0\n")
    (ws / "keep").symlink_to("k")
    points = Checkpoints(ws, private)
    for turn in (1, 2):

        def work(turn: int = turn) -> None:
            (ws / "f.txt").write_text(f"{turn}\n")
            (ws / f"l{turn}").symlink_to(f"t{turn}")

        _turn(points, f"t{turn}", turn, work)
    for manifest in private.glob("*.json"):  # as the older Vis stored them
        data = json.loads(manifest.read_text())
        for key in ("links", "link_changes", "left_links"):
            data.pop(key, None)
        manifest.write_text(json.dumps(data))
    points = Checkpoints(ws, private)

    def work3() -> None:
        (ws / "f.txt").write_text("3\n")
        (ws / "keep").unlink()

    _turn(points, "t3", 3, work3)
    report = Checkpoints(ws, private).restore()
    assert report.turns == (3,) and report.restored == ("f.txt", "keep")
    assert os.readlink(ws / "keep") == "k"
    report = Checkpoints(ws, private).restore()  # the older Vis's: files only, as before
    assert report.turns == (2,) and report.restored == ("f.txt",) and report.links == ()
    assert (ws / "f.txt").read_text() == "1\n" and os.readlink(ws / "l2") == "t2"


def test_a_file_is_never_written_through_a_folder_link_inside_the_workspace(
    tmp_path: Path,
) -> None:
    """The turn swapped folder ``src`` for a link; the person re-pointed the link to another
    folder of the workspace afterwards (kept, named). ``src/x.py``, which the turn removed,
    was written through the link into that folder, over the person's own file: it is
    refused now, as a link leading outside is."""
    ws = tmp_path / "ws"
    for folder in ("src", "other", "mine"):
        (ws / folder).mkdir(parents=True)
    (ws / "src" / "x.py").write_text("x = 1\n")
    (ws / "mine" / "x.py").write_text("the person's own\n")
    points = Checkpoints(ws, tmp_path / "private")

    def work() -> None:
        (ws / "src" / "x.py").unlink()
        (ws / "src").rmdir()
        (ws / "src").symlink_to("other")

    _turn(points, "t1", 1, work)
    (ws / "src").unlink()
    (ws / "src").symlink_to("mine")  # the person's
    with pytest.raises(OSError, match="a folder on the way to src/x.py is now a link"):
        points.restore()
    assert (ws / "mine" / "x.py").read_text() == "the person's own\n"
    assert os.readlink(ws / "src") == "mine"


def test_a_turn_that_goes_past_the_link_budget_records_none_of_its_links(
    tmp_path: Path,
) -> None:
    """Within the budget when the turn starts, past it when it ends: the turn's ``left``
    record of links would have held every one it made (4 KiB each); it holds none, its
    blocks say ``/undo`` cannot restore them, and ``/undo`` puts back its files only."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "f.txt").write_text("one\n")
    (ws / "keep").symlink_to("k")
    points = Checkpoints(ws, tmp_path / "private", max_links=20)
    points.take("t1", 1)
    watch = BlockChanges(points, "t1")
    watch.start()
    (ws / "f.txt").write_text("two\n")
    (ws / "keep").unlink()
    for n in range(30):
        (ws / f"l{n}").symlink_to("x/" * 2000 + str(n))
    changes = {c.path: c.note for c in watch.finish()}
    assert LINKS_LOST in changes["l0"] and LINKS_LOST in changes["keep"]
    assert not points.drop_if_unchanged("t1", watch.seen)
    assert max(p.stat().st_size for p in points.folder.glob("*.json")) < 4096
    report = points.restore()
    assert report.restored == ("f.txt",) and report.links == ()
    assert (ws / "l0").is_symlink() and not (ws / "keep").is_symlink()


def test_a_link_over_a_file_without_a_copy_stays(tmp_path: Path) -> None:
    """The turn replaced a file of which the checkpoint kept no copy (too large) by a link:
    ``/undo`` cannot bring the file back, so it leaves the link rather than nothing, and
    names the file, as it does a file it cannot restore."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "big.bin").write_bytes(b"x" * 64)
    points = Checkpoints(ws, tmp_path / "private", max_file_bytes=32)

    def work() -> None:
        (ws / "big.bin").unlink()
        (ws / "big.bin").symlink_to("elsewhere.bin")

    _turn(points, "t1", 1, work)
    report = points.restore()
    assert report.not_kept == ("big.bin",) and report.restored == report.removed == ()
    assert os.readlink(ws / "big.bin") == "elsewhere.bin"
