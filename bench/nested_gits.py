"""Figure: what looking for a new ``.git`` in a workspace's subfolders costs after a block
(``NestedGits``, at most ``MAX_GIT_FOLDERS`` folders): the first look (lists every folder)
and a later look at the unchanged tree (one ``lstat`` per folder), in CPU milliseconds, the
folders it lists and whether the bound was reached.
Run: ``.venv/bin/python bench/nested_gits.py [FOLDER ...]`` (default: this checkout, /usr).
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

from vis_core.host.nested_gits import MAX_GIT_FOLDERS, NestedGits


def main(folders: list[str]) -> None:
    for folder in folders:
        looks = NestedGits(Path(folder))
        started = time.process_time()
        looks.new()
        first = (time.process_time() - started) * 1000
        later = []
        for _ in range(7):
            started = time.process_time()
            looks.new()
            later.append((time.process_time() - started) * 1000)
        listed = len(looks._listed)
        print(
            f"{folder}: first look {first:.1f} ms, later look {statistics.median(later):.1f} ms "
            f"(median of 7), {listed:,} folders kept listed, bound {MAX_GIT_FOLDERS:,}"
        )


if __name__ == "__main__":
    main(sys.argv[1:] or [str(Path(__file__).resolve().parents[1]), "/usr"])
