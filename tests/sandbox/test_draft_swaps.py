"""A jailed block cannot make Vis copy a host file into its draft. While ``draft_create()``
copies the workspace on the host, a thread of the block waits for the copy to read the
first file of a folder (its access time moves), then swaps that folder for a link to a
folder the jail hides, holding files of the same names. A copy that opened each file by its
path followed that link for every file after the first; now the copy is refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from .hostile import BWRAP_PROBLEM, make_repo, swap_attack

pytestmark = pytest.mark.skipif(BWRAP_PROBLEM is not None, reason=BWRAP_PROBLEM or "")

NAMES = [f"n{i:03}.txt" for i in range(200)]

SWAP = """
import os, threading
os.makedirs("z/d")
for name in {names!r}:
    open(f"z/d/{{name}}", "w").write("plain\\n")
live = os.getcwd()
first = f"{{live}}/z/d/{{min({names!r})}}"
os.utime(first, (1, 1))  # long ago: the copy's read sets it to now
def swap():
    while os.stat(first).st_atime == 1:
        pass
    os.rename(f"{{live}}/z/d", f"{{live}}/z/real")  # z is listed already
    os.symlink({outside!r}, f"{{live}}/z/d")
worker = threading.Thread(target=swap, daemon=True)
worker.start()
try:
    await draft_create("swapped")
except Exception as exc:
    print("refused:", exc)
worker.join(5)
print("swapped:", not worker.is_alive())
if os.getcwd() != live:
    leaked = [n for n in os.listdir("z/d") if "HOST-ONLY" in open(f"z/d/{{n}}").read()]
    print("in draft, leaked:", len(leaked))
"""


@pytest.mark.parametrize("backend", ["copy", "worktree"])
async def test_a_draft_never_copies_through_a_folder_swapped_for_a_link(
    tmp_path: Path, vis_home: Path, backend: str
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    if backend == "worktree":  # the untracked files are carried into the draft
        make_repo(workspace)
    outside, block = await swap_attack(workspace, tmp_path, SWAP, NAMES, "HOST-ONLY-5d1e\n")
    assert "leaked" not in block.stdout or "leaked: 0" in block.stdout, block.stdout
    copied = [p for p in (vis_home / "drafts").rglob("*") if p.is_file() and not p.is_symlink()]
    assert not [p for p in copied if b"HOST-ONLY" in p.read_bytes()]
