"""Figure: what looking for a new git repository in a workspace's folders costs after a
block (``NestedGits``: at most ``MAX_GIT_FOLDERS`` folders listed a look, ``MAX_KNOWN_FOLDERS``
taken at one ``lstat`` each): the first looks (until every folder is listed once) and a later
look at the unchanged tree, in CPU milliseconds, and the folders each look takes.
Run: ``.venv/bin/python bench/nested_gits.py [FOLDER ...]`` (default: this checkout, /usr).
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

from vis_core.system.nested_gits import MAX_GIT_FOLDERS, MAX_KNOWN_FOLDERS, SETTLED_NS, NestedGits


def main(folders: list[str]) -> None:
    for folder in folders:
        looks = NestedGits(Path(folder))
        started = time.process_time()
        looks.new()
        first = (time.process_time() - started) * 1000
        firsts = 1
        while looks.last_listed == MAX_GIT_FOLDERS:  # until every folder was listed once
            started = time.process_time()
            looks.new()
            first += (time.process_time() - started) * 1000
            firsts += 1
        time.sleep(SETTLED_NS / 1e9)  # listings are kept once their folder settled
        looks.new()
        later = []
        for _ in range(7):
            started = time.process_time()
            looks.new()
            later.append((time.process_time() - started) * 1000)
        print(
            f"{folder}: first {firsts} looks {first:.1f} ms in all, later look "
            f"{statistics.median(later):.1f} ms (median of 7), {looks.looked_in:,} folders "
            f"taken a look; bounds {MAX_GIT_FOLDERS:,} listed, {MAX_KNOWN_FOLDERS:,} taken"
        )


if __name__ == "__main__":
    main(sys.argv[1:] or [str(Path(__file__).resolve().parents[1]), "/usr"])
