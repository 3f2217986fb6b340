"""Workspace checkpoints: restore what turns changed, leave ignored files and git alone."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from vis_core.tools.checkpoints import Checkpoints
from vis_core.tools.ignore import listed_files


def _git(workspace: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(workspace), *args], check=True, capture_output=True)


def test_restore_puts_back_changed_deleted_and_created_files(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("one\n")
    (ws / "gone.txt").write_text("keep me\n")
    (ws / ".gitignore").write_text("cache/\n")
    (ws / "cache").mkdir()
    (ws / "cache" / "blob.bin").write_text("ignored\n")
    (ws / "run.sh").write_text("#!/bin/sh\n")
    (ws / "run.sh").chmod(0o755)
    _git(ws, "init", "-q")
    _git(ws, "add", "a.txt")
    index = (ws / ".git" / "index").read_bytes()
    points = Checkpoints(ws, tmp_path / "private")
    points.take("t1", 1)
    assert points.take("t1", 1) is None  # once per turn
    (ws / "a.txt").write_text("two\n")
    (ws / "gone.txt").unlink()
    (ws / "made.txt").write_text("new\n")
    (ws / "run.sh").write_text("#!/bin/sh\necho changed\n")
    (ws / "cache" / "blob.bin").write_text("ignored, changed\n")
    points.take("t2", 2)
    (ws / "a.txt").write_text("three\n")
    report = points.restore()
    assert report.turns == (2,) and report.restored == ("a.txt",)
    assert (ws / "a.txt").read_text() == "two\n"
    report = points.restore()
    assert report.turns == (1,)
    assert set(report.restored) == {"a.txt", "gone.txt", "run.sh"}
    assert report.removed == ("made.txt",)
    assert (ws / "a.txt").read_text() == "one\n" and (ws / "gone.txt").read_text() == "keep me\n"
    assert (ws / "run.sh").stat().st_mode & 0o777 == 0o755 and not (ws / "made.txt").exists()
    assert (ws / "cache" / "blob.bin").read_text() == "ignored, changed\n"
    assert (ws / ".git" / "index").read_bytes() == index
    assert (tmp_path / "private").stat().st_mode & 0o077 == 0
    with pytest.raises(LookupError, match="/undo already undid turns 1–2, and no checkpoint of an"):
        points.restore()


def test_a_second_undo_says_the_turn_was_undone_and_made_folders_go(tmp_path: Path) -> None:
    """After ``/undo`` of the one turn that changed files, a second ``/undo`` said "no turn of
    this session has changed files yet", and the folders that turn made stayed, empty. It
    says the turn was undone, and the emptied folders it made are gone."""
    ws = tmp_path / "ws"
    (ws / "pkg").mkdir(parents=True)
    (ws / "pkg" / "old.py").write_text("x\n")
    points = Checkpoints(ws, tmp_path / "private")
    with pytest.raises(LookupError, match="no turn of this session has changed files yet"):
        points.restore()
    points.take("t1", 1)
    (ws / "pkg" / "sub" / "deep").mkdir(parents=True)
    (ws / "pkg" / "sub" / "deep" / "mod.py").write_text("y\n")
    (ws / "pkg" / "sub" / "x.py").write_text("z\n")
    assert points.restore().turns == (1,)
    assert not (ws / "pkg" / "sub").exists() and (ws / "pkg" / "old.py").exists()
    with pytest.raises(LookupError) as said:
        points.restore()
    assert str(said.value) == (
        "nothing left to undo: /undo already undid turn 1, and no checkpoint of an earlier turn "
        "is kept"
    )
    points.take("t2", 2)
    (ws / "pkg" / "old.py").write_text("changed\n")
    with pytest.raises(LookupError, match=r"only 1 turn of this session can be undone \(/undo"):
        points.restore(2)


def test_undo_n_goes_back_several_turns_and_refuses_too_many(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    points = Checkpoints(ws, tmp_path / "private")
    for turn in range(1, 4):
        points.take(f"t{turn}", turn)
        (ws / "f.txt").write_text(f"after turn {turn}\n")
    with pytest.raises(LookupError, match="only 3"):
        points.restore(4)
    report = points.restore(2)
    assert report.turns == (3, 2) and (ws / "f.txt").read_text() == "after turn 1\n"


def test_a_link_that_now_leads_outside_is_not_written_through(tmp_path: Path) -> None:
    """A folder swapped for a link to a folder outside after the turn (by a command it left
    running) is not written through: /undo refuses."""
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    (ws / "src").mkdir(parents=True)
    outside.mkdir()
    (ws / "src" / "x.py").write_text("x = 1\n")
    points = Checkpoints(ws, tmp_path / "private")
    points.take("t1", 1)
    (ws / "src" / "x.py").unlink()
    assert not points.drop_if_unchanged("t1")
    (ws / "src").rmdir()
    (ws / "src").symlink_to(outside)
    with pytest.raises(OSError, match="outside the workspace"):
        points.restore()
    assert list(outside.iterdir()) == []


def test_a_link_the_turn_put_where_a_folder_was_goes_before_the_files_come_back(
    tmp_path: Path,
) -> None:
    """The turn itself swapped folder ``src`` for a link to a folder outside: /undo said the
    folder "now leads outside" and put nothing back. The link goes first (the link itself:
    what it led to stays as it is), then the folder and its file come back."""
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    (ws / "src").mkdir(parents=True)
    outside.mkdir()
    (outside / "x.py").write_text("the user's own\n")
    (ws / "src" / "x.py").write_text("x = 1\n")
    points = Checkpoints(ws, tmp_path / "private")
    points.take("t1", 1)
    (ws / "src" / "x.py").unlink()
    (ws / "src").rmdir()
    (ws / "src").symlink_to(outside)
    assert not points.drop_if_unchanged("t1")
    report = points.restore()
    assert report.restored == ("src/x.py",)
    assert report.removed == ("src",) and report.links == ("src",)
    assert not (ws / "src").is_symlink() and (ws / "src" / "x.py").read_text() == "x = 1\n"
    assert [p.name for p in outside.iterdir()] == ["x.py"]
    assert (outside / "x.py").read_text() == "the user's own\n"


def test_a_turn_that_changed_nothing_leaves_no_checkpoint(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("one\n")
    points = Checkpoints(ws, tmp_path / "private")
    points.take("t1", 1)
    (ws / "a.txt").write_text("two\n")
    assert not points.drop_if_unchanged("t1")
    points.take("t2", 2)  # e.g. !ls: looked, changed nothing
    assert points.drop_if_unchanged("t2")
    report = points.restore()  # /undo reaches the turn that changed a.txt
    assert report.turns == (1,) and (ws / "a.txt").read_text() == "one\n"


def test_files_past_the_size_limits_are_listed_not_kept(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "small.txt").write_text("tiny\n")
    (ws / "big.txt").write_text("x" * 100)
    points = Checkpoints(ws, tmp_path / "private", max_file_bytes=10)
    points.take("t1", 1)
    (ws / "small.txt").write_text("changed\n")
    (ws / "big.txt").write_text("y" * 50)
    report = points.restore()
    assert report.restored == ("small.txt",) and report.not_kept == ("big.txt",)
    assert (ws / "big.txt").read_text() == "y" * 50  # never replaced by something else


def test_restore_never_writes_through_a_link_planted_beside_the_file(tmp_path: Path) -> None:
    ws, outside = tmp_path / "ws", tmp_path / "outside.txt"
    ws.mkdir()
    outside.write_text("the user's file\n")
    (ws / "notes.txt").write_text("as it was\n")
    points = Checkpoints(ws, tmp_path / "private")
    points.take("t1", 1)
    (ws / "notes.txt").write_text("changed by the turn\n")
    # what an earlier fixed temp name invited: a link where /undo writes its copy
    (ws / ".notes.txt.vis-undo").symlink_to(outside)
    points.restore()
    assert (ws / "notes.txt").read_text() == "as it was\n"
    assert outside.read_text() == "the user's file\n"
    assert not (ws / "notes.txt").is_symlink()


def test_a_file_swapped_for_a_link_after_the_scan_is_not_copied(tmp_path: Path) -> None:
    ws, secret = tmp_path / "ws", tmp_path / "id_rsa"
    ws.mkdir()
    secret.write_text("PRIVATE KEY\n")
    (ws / "a.txt").write_text("one\n")
    points = Checkpoints(ws, tmp_path / "private")
    real_scan = points.scan

    def scan_then_swap(*, again: bool = False) -> dict:
        found = real_scan(again=again)
        (ws / "a.txt").unlink()
        (ws / "a.txt").symlink_to(secret)  # a background command racing the checkpoint
        return found

    points.scan = scan_then_swap  # type: ignore[method-assign]
    points.take("t1", 1)
    blobs = tmp_path / "private" / "blobs"
    assert all(b.read_text() != "PRIVATE KEY\n" for b in blobs.iterdir())


def test_the_first_checkpoint_copies_only_what_git_does_not_hold(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    for n in range(20):
        (ws / "src" / f"m{n}.py").write_text(f"value = {n}\n" * 200)
    (ws / "run.sh").write_text("#!/bin/sh\n")
    (ws / "run.sh").chmod(0o755)
    (ws / ".gitattributes").write_text("* text=auto\n")  # common; no bytes change here
    _git(ws, "init", "-q")
    _git(ws, "add", ".")
    _git(ws, "-c", "user.email=a@b", "-c", "user.name=a", "commit", "-qm", "start")
    (ws / "src" / "m0.py").write_text("edited before the turn\n")  # dirty: git lacks it
    (ws / "notes.txt").write_text("untracked\n")  # untracked: git lacks it
    index = (ws / ".git" / "index").read_bytes()
    objects = sorted(p.name for p in (ws / ".git" / "objects").rglob("*"))
    points = Checkpoints(ws, tmp_path / "private")
    taken = points.take("t1", 1)
    assert taken is not None
    kept = sorted(p.name for p in (tmp_path / "private" / "blobs").iterdir())
    assert len(kept) == 2  # m0.py as edited and notes.txt; the 20 others are git's
    assert taken.files["src/m5.py"][3].startswith("git:")
    (ws / "src" / "m5.py").write_text("changed by the turn\n")
    (ws / "src" / "m0.py").write_text("changed again\n")
    (ws / "run.sh").unlink()
    (ws / "notes.txt").unlink()
    report = points.restore()
    assert set(report.restored) == {"src/m5.py", "src/m0.py", "run.sh", "notes.txt"}
    assert (ws / "src" / "m5.py").read_text() == "value = 5\n" * 200
    assert (ws / "src" / "m0.py").read_text() == "edited before the turn\n"
    assert (ws / "run.sh").stat().st_mode & 0o777 == 0o755
    assert (ws / "notes.txt").read_text() == "untracked\n"
    assert (ws / ".git" / "index").read_bytes() == index  # git's index and objects untouched
    assert sorted(p.name for p in (ws / ".git" / "objects").rglob("*")) == objects


def test_undo_racing_a_folder_swapped_for_a_link_never_touches_outside(tmp_path: Path) -> None:
    """A command left running by a block swaps ``dir`` and a link to a folder outside the
    workspace (atomically, renameat2 RENAME_EXCHANGE) while /undo restores and removes files
    in ``dir``: nothing outside is written or removed. An undo that saw the real folder under
    the other name removes its files as made by the turn, and the folder when that empties
    it: the swapper waits for a folder again and the next turn makes one."""
    import errno
    import os
    import signal
    import sys

    ws, outside = tmp_path / "ws", tmp_path / "outside"
    (ws / "dir").mkdir(parents=True)
    outside.mkdir()
    names = [f"f{i}.txt" for i in range(5)]
    for name in names:
        (ws / "dir" / name).write_text("before\n")
        (outside / name).write_text("the user's file\n")
    os.symlink(outside, ws / "dir.link")
    # links left as they are: the race of links is test_checkpoint_links's
    points = Checkpoints(ws, tmp_path / "private", max_links=0)
    swapper = (
        "import ctypes, sys\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "print('swapping', flush=True)\n"
        "while libc.renameat2(-100, b'dir', -100, b'dir.link', 2) == 0"
        f" or ctypes.get_errno() == {errno.ENOENT}:\n"
        "    pass\n"
        "sys.exit('renameat2 failed')\n"
    )
    racer = subprocess.Popen([sys.executable, "-c", swapper], cwd=ws, stdout=subprocess.PIPE)
    refused = 0
    try:
        assert racer.stdout is not None and racer.stdout.readline() == b"swapping\n"
        for turn in range(200):
            racer.send_signal(signal.SIGSTOP)  # the turn itself sees a still workspace:
            os.waitpid(racer.pid, os.WUNTRACED)  # a stop lands later than the signal
            points.take(f"turn-{turn}", turn)
            real = ws / ("dir.link" if (ws / "dir").is_symlink() else "dir")
            real.mkdir(exist_ok=True)  # an undo removed it (see above)
            for name in names:  # the turn changes every file and makes new ones
                (real / name).write_text("after\n")
                (real / ("new-" + name)).write_text("made by the turn\n")
            racer.send_signal(signal.SIGCONT)
            try:
                points.restore(1)
            except OSError:
                refused += 1
    finally:
        racer.kill()
        racer.wait()
    assert refused > 0  # the race really ran
    assert sorted(p.name for p in outside.iterdir()) == names
    assert {p.read_text() for p in outside.iterdir()} == {"the user's file\n"}


def test_a_tracked_folder_swapped_for_a_link_shows_nothing_outside(tmp_path: Path) -> None:
    """In a git repository the listing comes from git, whose index still names ``z/f.txt``
    after the model swapped folder ``z`` for a link to a folder outside. Each listed file was
    then looked at by path, through the link: the outside file's name, size and time went into
    the checkpoint (and a change to it into a block's file list), and into the ``@`` list.
    Files are now looked at through their folders' descriptors, never through a link."""
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    for folder in ("a/b", "a-c", "z"):
        (ws / folder).mkdir(parents=True)
    names = ["a/b/c.txt", "a/d.txt", "a-c/e.txt", "top.txt", "z/f.txt"]
    for name in names:
        (ws / name).write_text(name)
    _git(ws, "init", "-q")
    _git(ws, "add", ".")
    (ws / "a" / "b" / "new.txt").write_text("untracked\n")
    outside.mkdir()
    (outside / "f.txt").write_text("a secret of another size\n")
    (ws / "z").rename(ws / "y")
    (ws / "z").symlink_to(outside, target_is_directory=True)

    seen = Checkpoints(ws, tmp_path / "points").scan()
    assert sorted(seen) == [
        "a-c/e.txt",
        "a/b/c.txt",
        "a/b/new.txt",
        "a/d.txt",
        "top.txt",
        "y/f.txt",
    ]
    assert seen["a/d.txt"].st_size == len("a/d.txt")
    assert str(ws / "z" / "f.txt") not in listed_files(str(ws), hidden=False)


def test_undo_puts_back_a_mode_the_turn_changed_alone(tmp_path: Path) -> None:
    """A turn whose only change was ``chmod +x`` is a turn that changed files: its
    checkpoint stays, and ``/undo`` makes the file not executable again."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "run.sh").write_text("#!/bin/sh\n")
    (ws / "run.sh").chmod(0o644)
    (ws / "big.bin").write_bytes(b"x" * 64)
    (ws / "big.bin").chmod(0o600)
    points = Checkpoints(ws, tmp_path / "private", max_file_bytes=32)  # big.bin: listed only
    points.take("t1", 1)
    (ws / "run.sh").chmod(0o755)
    (ws / "big.bin").chmod(0o644)
    assert not points.drop_if_unchanged("t1")
    report = points.restore()
    assert report.turns == (1,) and report.restored == ("big.bin", "run.sh")
    assert (ws / "run.sh").stat().st_mode & 0o777 == 0o644
    assert (ws / "run.sh").read_text() == "#!/bin/sh\n"
    assert (ws / "big.bin").stat().st_mode & 0o777 == 0o600  # its mode, though not its bytes


def test_a_file_rewritten_between_the_scan_and_the_copy_is_recorded_with_its_bytes(
    tmp_path: Path,
) -> None:
    """A command left running rewrites ``f.txt`` in place, same size, each version ``n`` with
    its modification time set to ``n``: a state of that time holds those bytes and no other.
    A checkpoint copied the bytes after its scan and checked only their size, so it could
    record one version's state with a later version's bytes (``/undo`` then put back bytes
    the state never had). Now each copy is of the state the checkpoint records."""
    import sys

    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "f.txt").write_bytes(b"%08d" % 0)
    rewriter = (
        "import os\n"
        "fd = os.open('f.txt', os.O_WRONLY)\n"
        "print('writing', flush=True)\n"
        "n = 0\n"
        "while True:\n"
        "    n += 1\n"
        "    os.pwrite(fd, b'%08d' % n, 0)\n"
        "    os.utime('f.txt', ns=(n, n))\n"
    )
    racer = subprocess.Popen([sys.executable, "-c", rewriter], cwd=ws, stdout=subprocess.PIPE)
    points = Checkpoints(ws, tmp_path / "private")
    paired: dict[int, bytes] = {}  # each version's time, with the bytes recorded with it
    try:
        assert racer.stdout is not None and racer.stdout.readline() == b"writing\n"
        for turn in range(300):
            taken = points.take(f"turn-{turn}", turn)
            assert taken is not None
            _, mtime, _, digest = taken.files["f.txt"][:4]
            if mtime < 10**12 and digest is not None:  # a version's time, not a write's
                paired[mtime] = points.kept_bytes(digest) or b""
    finally:
        racer.kill()
        racer.wait()
    assert len(paired) >= 5  # the race really ran, and copies of versions were checked
    assert {t: b for t, b in paired.items() if b != b"%08d" % t} == {}
