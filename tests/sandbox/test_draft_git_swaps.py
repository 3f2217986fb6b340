"""A jailed block cannot make Vis's git read a host file in its draft. Working in a git
draft, the block asks for approval (``git add -A`` in the draft on the host) while its thread
waits for git to read the first file of a folder, then swaps the folder for a link to a
folder the jail hides, holding files of the same names: git hashed every later file through
the link into the repository's objects, which the jail shows read-only."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from .hostile import BWRAP_PROBLEM, make_repo, swap_attack

pytestmark = pytest.mark.skipif(BWRAP_PROBLEM is not None, reason=BWRAP_PROBLEM or "")

NAMES = [f"n{i:03}.txt" for i in range(200)]

SWAP = """
import os, threading
await draft_create("w")
os.makedirs("z/d")
for name in {names!r}:
    open(f"z/d/{{name}}", "w").write("plain\\n")
here = os.getcwd()
first = f"{{here}}/z/d/{{min({names!r})}}"
os.utime(first, (1, 1))  # long ago: git's read sets it to now
def swap():
    while os.stat(first).st_atime == 1:
        pass
    os.rename(f"{{here}}/z/d", f"{{here}}/z/real")  # z is listed already
    os.symlink({outside!r}, f"{{here}}/z/d")
worker = threading.Thread(target=swap, daemon=True)
worker.start()
try:
    await draft_approve()
except Exception as exc:
    print("approve:", type(exc).__name__)
worker.join(5)
print("swapped:", not worker.is_alive())
"""


async def test_git_in_a_draft_never_reads_through_a_folder_swapped_for_a_link(
    tmp_path: Path, vis_home: Path
) -> None:
    (tmp_path / "ws").mkdir()
    workspace = make_repo(tmp_path / "ws")
    outside, block = await swap_attack(workspace, tmp_path, SWAP, NAMES, "HOST-ONLY-5d1e\n")
    objects = subprocess.run(
        ["git", "cat-file", "--batch-all-objects", "--batch"],
        cwd=workspace,
        capture_output=True,
        check=True,
    ).stdout
    assert objects.count(b"HOST-ONLY") == 0
