"""The temporary files an interrupted write left are removed at start, only beneath the
workspace: a folder the model swaps for a link meanwhile does not send the removal outside."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from vis_core.tools.edit import remove_stale_temps

OLD = 1_000_000_000  # 2001: a temporary file long stale
TEMPS = [f".notes.{i:04}.vis-tmp" for i in range(2000)]


def _temps(folder: Path) -> None:
    folder.mkdir(parents=True)
    for name in TEMPS:
        (folder / name).write_text("half")
        os.utime(folder / name, (OLD, OLD))


def test_only_stale_temporary_files_go(workspace: Path) -> None:
    (workspace / "sub").mkdir()
    stale, young = workspace / "sub" / ".a.py.x1.vis-tmp", workspace / ".b.py.x2.vis-tmp"
    other = workspace / "sub" / "a.py.vis-tmp"  # not one of Vis's names
    for path in (stale, young, other):
        path.write_text("half")
    os.utime(stale, (OLD, OLD))
    os.utime(other, (OLD, OLD))
    assert remove_stale_temps(workspace) == [stale]
    assert young.exists() and other.exists()


def test_a_folder_swapped_for_a_link_is_not_followed(workspace: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    _temps(workspace / "a")
    _temps(outside / "a")
    first = workspace / "a" / os.listdir(workspace / "a")[0]  # the first the walk meets

    finished, swapped = threading.Event(), threading.Event()

    def swap() -> None:  # once the removal is inside `a`, `a` becomes a link to outside
        while os.path.lexists(first) and not finished.is_set():
            pass
        os.rename(workspace / "a", workspace / "real-a")
        os.symlink(outside / "a", workspace / "a")
        swapped.set()

    swapper = threading.Thread(target=swap, daemon=True)
    swapper.start()
    remove_stale_temps(workspace)
    finished.set()
    swapper.join(30)
    assert swapped.is_set()
    assert sorted(os.listdir(outside / "a")) == sorted(TEMPS)  # nothing outside removed
