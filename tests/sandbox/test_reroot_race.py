"""A block entering its draft cannot take a protected name of the draft while the jail is
moved: a thread of the block tries to rename the draft's ``.vis`` the whole time, from before
the draft folder becomes writable until ``draft_create()`` returns (it meets the read-only
folder, then a mount point); it never succeeds, and ``.vis`` is read-only in the draft. The
window the move left (the draft writable before its protected names were bound) was a few
microseconds, too short for a Python thread to meet reliably: this test shows the outcome."""

from __future__ import annotations

from pathlib import Path

import pytest

from .hostile import BWRAP_PROBLEM, run_blocks

pytestmark = pytest.mark.skipif(BWRAP_PROBLEM is not None, reason=BWRAP_PROBLEM or "")

RACE = """
import errno, os, threading
drafts = {drafts!r}
slot = None
for line in open("/proc/self/mountinfo"):
    point = line.split()[4]
    if point.startswith(drafts + "/") and "/outputs" not in point:
        slot = point + "/tree"  # the draft's folder, made in the slot shown read-only
print("slot found:", slot is not None)
done, taken, seen = threading.Event(), [], {{}}
def take():
    while not done.is_set():
        try:
            os.rename(slot + "/.vis", slot + "/.vis-taken")
        except OSError as exc:
            seen[exc.errno] = seen.get(exc.errno, 0) + 1
            continue
        taken.append(True)
        return
worker = threading.Thread(target=take, daemon=True)
worker.start()
await draft_create("race")
done.set()
worker.join(10)
print("in draft:", os.getcwd() == slot, "taken:", bool(taken))
print("tried while read-only:", seen.get(errno.EROFS, 0) > 0)
print("tried once writable, refused as a mount point:", seen.get(errno.EBUSY, 0) > 0)
try:
    open(".vis/x", "w")
except OSError as exc:
    print("vis read-only:", exc.errno == 30)
"""


async def test_the_draft_s_protected_names_are_bound_before_it_is_writable(
    tmp_path: Path, vis_home: Path
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "a.txt").write_text("a\n")
    (vis_home / "config.toml").write_text("jail = true\n")
    code = RACE.format(drafts=str((vis_home / "drafts").resolve()))
    (block,) = (await run_blocks(workspace, tmp_path, code)).blocks
    assert block.error is None, block.error
    assert "slot found: True" in block.stdout
    assert "in draft: True taken: False" in block.stdout, block.stdout
    assert "vis read-only: True" in block.stdout
    assert "tried while read-only: True" in block.stdout
    assert "tried once writable, refused as a mount point: True" in block.stdout
