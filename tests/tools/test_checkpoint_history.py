"""A long session: past ``KEEP`` checkpoints the oldest go with the copies only they used,
every kept one restores exactly the files and links of then, and a turn stores its changes,
not a listing of every file."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from vis_core.tools.checkpoints import KEEP, Checkpoints

Files = dict[str, tuple[bytes, int] | str]


def _files(ws: Path) -> Files:
    """Every file of the workspace: its bytes and mode; and every link: its target."""
    return {
        str(p.relative_to(ws)): os.readlink(p)
        if p.is_symlink()
        else (p.read_bytes(), p.stat().st_mode & 0o777)
        for p in ws.rglob("*")
        if p.is_symlink() or p.is_file()
    }


def _work(ws: Path, turn: int, links: bool = True) -> None:
    """What turn ``turn`` does: changes, makes, removes and chmods files (each change of a
    file gives it a new size, so no change hides behind an unchanged mtime; /undo puts a
    mode back with the bytes)."""
    (ws / "a.txt").write_text(f"a{turn}\n" * turn)
    (ws / "src").mkdir(exist_ok=True)
    (ws / "src" / f"m{turn % 4}.py").write_text(f"x = {turn}\n" * turn)
    (ws / f"made{turn}.txt").write_text(f"made in turn {turn}\n")
    if turn % 3 == 0:
        (ws / f"made{turn - 1}.txt").unlink(missing_ok=True)
    if turn % 5 == 0:
        (ws / "run.sh").write_text("#!/bin/sh\n" + "echo\n" * turn)
        (ws / "run.sh").chmod(0o755 if turn % 10 else 0o644)
    if not links:
        return
    # and links: one re-pointed each turn, one made, some removed, one a link or a file in turn
    (ws / "current").unlink(missing_ok=True)
    (ws / "current").symlink_to(f"made{turn}.txt")
    (ws / "src" / f"link{turn}").symlink_to(f"../t{turn}")
    if turn % 4 == 0:
        (ws / "src" / f"link{turn - 1}").unlink(missing_ok=True)
    if turn % 3 == 1:
        (ws / "either").unlink(missing_ok=True)
        if turn % 2:
            (ws / "either").symlink_to(f"t{turn}")
        else:
            (ws / "either").write_text(f"a file in turn {turn}\n")


def _blobs(private: Path) -> set[str]:
    return {blob.name for blob in (private / "blobs").iterdir()}


def _used(points: Checkpoints) -> set[str]:
    return {f[3] for c in points.newest_first() for f in c.files.values() if f[3]}


def _session(
    ws: Path, private: Path, turns: range, looks: tuple[int, ...], links: bool = True
) -> dict[int, Files]:
    """Take a checkpoint before each of ``turns``, do its work and end the turn; after each
    of ``looks`` a turn that changes nothing (its checkpoint dropped). The files before
    each turn."""
    ws.mkdir(exist_ok=True)
    (ws / "keep.txt").write_text("never changed\n")
    (ws / "run.sh").write_text("#!/bin/sh\n")
    points = Checkpoints(ws, private)
    before = {}
    for turn in turns:
        before[turn] = _files(ws)
        points.take(f"t{turn}", turn)
        _work(ws, turn, links)
        assert not points.drop_if_unchanged(f"t{turn}")
        if turn in looks:
            points.take(f"look{turn}", turn)
            assert points.drop_if_unchanged(f"look{turn}")
    return before


def test_after_many_turns_each_kept_checkpoint_restores_exactly(tmp_path: Path) -> None:
    ws, private = tmp_path / "ws", tmp_path / "private"
    # the 21st checkpoint is a look's (after turn 20): dropped, it takes no turn's place
    before = _session(ws, private, range(1, 26), looks=(7, 20))
    points = Checkpoints(ws, private)
    assert _blobs(private) == _used(points)  # the copies only pruned checkpoints used are gone
    points.take("look", 26)  # nor does a look after the last turn
    assert points.drop_if_unchanged("look")
    with pytest.raises(LookupError, match=f"only {KEEP} turn"):
        points.restore(KEEP + 1)
    for turn in range(25, 25 - KEEP, -1):  # undo one turn at a time, to the oldest kept
        if turn % 2:  # every other one in a new process: read from what is stored
            points = Checkpoints(ws, private)
        assert points.restore().turns == (turn,)
        assert _files(ws) == before[turn]
    with pytest.raises(LookupError, match="already undid turns 6–25, and no checkpoint"):
        points.restore()


def test_undo_far_back_then_go_on(tmp_path: Path) -> None:
    ws, private = tmp_path / "ws", tmp_path / "private"
    before = _session(ws, private, range(1, 24), looks=())
    points = Checkpoints(ws, private)
    assert points.restore(KEEP - 1).turns == tuple(range(23, 24 - KEEP, -1))
    assert _files(ws) == before[5]
    points.take("t30", 30)
    _work(ws, 30)
    points = Checkpoints(ws, private)
    assert points.restore(2).turns == (30, 4) and _files(ws) == before[4]


def test_a_turn_stores_its_changes_not_a_listing(tmp_path: Path) -> None:
    ws, private = tmp_path / "ws", tmp_path / "private"
    for n in range(200):
        (ws / f"d{n % 10}").mkdir(parents=True, exist_ok=True)
        (ws / f"d{n % 10}" / f"f{n}.txt").write_text(f"file {n}\n")
    points = Checkpoints(ws, private)
    points.take("t1", 1)
    listing = sum(p.stat().st_size for p in private.glob("*.json"))
    for turn in range(2, 10):
        (ws / "d3" / "f3.txt").write_text(f"changed in turn {turn}\n" * turn)
        points.take(f"t{turn}", turn)
    stored = sum(p.stat().st_size for p in private.glob("*.json"))
    assert stored < 2 * listing  # one listing and the changes, not one listing a turn


def test_checkpoints_an_older_vis_stored_still_restore(tmp_path: Path) -> None:
    """An older Vis listed every file in each manifest; a session it began goes on past
    ``KEEP`` checkpoints, and its oldest kept checkpoint still restores."""
    ws, private = tmp_path / "ws", tmp_path / "private"
    before = _session(ws, private, range(1, 16), looks=(), links=False)  # it kept none
    for c in list(Checkpoints(ws, private).newest_first()):  # stored as an older Vis did
        old = {"turn_id": c.turn_id, "position": c.position, "taken_at": c.taken_at}
        (private / f"{c.index}.json").write_text(json.dumps({**old, "files": c.files}))
    (private / "files.json").unlink()
    points = Checkpoints(ws, private)
    for turn in range(16, 26):
        before[turn] = _files(ws)
        points.take(f"t{turn}", turn)
        _work(ws, turn, links=False)
    points = Checkpoints(ws, private)
    assert _blobs(private) == _used(points)
    assert points.restore(KEEP).turns == tuple(range(25, 25 - KEEP, -1))
    assert _files(ws) == before[6]
