"""A jailed block cannot make Vis delete host files when its git draft is discarded. ``git
worktree remove`` deletes a folder's files by path after it opened the folder: the block's
thread waits for the first file of a folder to go, then swaps the folder for a link to a
folder the jail hides, holding files of the same names, and git deleted those through it."""

from __future__ import annotations

from pathlib import Path

import pytest

from .hostile import BWRAP_PROBLEM, make_repo, swap_attack

pytestmark = pytest.mark.skipif(BWRAP_PROBLEM is not None, reason=BWRAP_PROBLEM or "")

NAMES = [f"n{i:04}.txt" for i in range(2000)]

SWAP = """
import os, threading
await draft_create("w")
os.makedirs("z/d")
for name in {names!r}:
    open(f"z/d/{{name}}", "w").write("plain\\n")
here = os.getcwd()
first = f"{{here}}/z/d/{{os.listdir('z/d')[0]}}"  # the first git's listing meets
def swap():
    while os.path.lexists(first):
        pass
    os.rename(f"{{here}}/z/d", f"{{here}}/z/real")
    os.symlink({outside!r}, f"{{here}}/z/d")
worker = threading.Thread(target=swap, daemon=True)
worker.start()
await draft_discard()
worker.join(5)
print("swapped:", not worker.is_alive())
"""


async def test_discarding_a_draft_never_deletes_through_a_folder_swapped_for_a_link(
    tmp_path: Path, vis_home: Path
) -> None:
    (tmp_path / "ws").mkdir()
    workspace = make_repo(tmp_path / "ws")
    outside, block = await swap_attack(workspace, tmp_path, SWAP, NAMES, "HOST-ONLY\n")
    assert sorted(p.name for p in outside.iterdir()) == NAMES
