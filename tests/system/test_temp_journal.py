"""The temporary files of writes cut short are found by the journal, not by a walk: each is
removed once stale, only if Vis named it, never through a link swapped in since."""

from __future__ import annotations

import os
from pathlib import Path

from cut_short import cut_short

from vis_core.paths import VisPaths
from vis_core.system.files import atomic_write
from vis_core.system.temp_journal import remove_stale_temps

OLD = 1_000_000_000  # 2001: long stale


def _age(*paths: Path) -> None:
    for path in paths:
        os.utime(path, (OLD, OLD), follow_symlinks=False)


def test_only_the_stale_temporary_files_vis_named_go(workspace: Path) -> None:
    journal = VisPaths.from_env().temps_journal_dir
    (workspace / "sub").mkdir()
    stale = cut_short(workspace, "sub/a.py")
    young = cut_short(workspace, "b.py")  # another Vis may be writing it now
    gone = cut_short(workspace, "c.py")
    gone.unlink()
    theirs = workspace / "sub" / ".d.py.x1y2z3.vis-tmp"  # Vis's pattern, not Vis's file
    theirs.write_text("someone else's")
    _age(stale, theirs, *journal.iterdir())
    assert remove_stale_temps(VisPaths.from_env()) == [stale]
    assert not stale.exists() and young.exists() and theirs.exists()
    (left,) = journal.iterdir()  # the young file's entry waits; the gone one's is dropped
    assert left.read_bytes() == os.fsencode(young)


def test_a_finished_write_leaves_nothing_behind(workspace: Path) -> None:
    atomic_write(workspace / "a.txt", b"whole", mode=None)
    assert (workspace / "a.txt").read_bytes() == b"whole"
    assert [p.name for p in workspace.iterdir()] == ["a.txt"]
    assert list(VisPaths.from_env().temps_journal_dir.iterdir()) == []


def test_a_folder_swapped_for_a_link_is_not_followed(workspace: Path, tmp_path: Path) -> None:
    """The folder of a named temporary file became a link to another folder holding a file
    of the same name: the removal does not follow it, nor any entry naming a file that is
    not a temporary file or a path with ``..``."""
    journal = VisPaths.from_env().temps_journal_dir
    (workspace / "a").mkdir()
    temp = cut_short(workspace, "a/notes.txt")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / temp.name).write_text("not Vis's")
    os.rename(workspace / "a", workspace / "real-a")
    os.symlink(outside, workspace / "a")
    precious = outside / "precious.txt"
    precious.write_text("keep")
    for n, named in enumerate([precious, workspace / "a" / ".." / "outside" / temp.name]):
        (journal / f"forged{n}").write_bytes(os.fsencode(named))
    _age(workspace / "real-a" / temp.name, *journal.iterdir())
    assert remove_stale_temps(VisPaths.from_env()) == []
    assert (outside / temp.name).exists() and precious.exists()
    assert list(journal.iterdir()) == []  # entries that named nothing to remove are dropped
