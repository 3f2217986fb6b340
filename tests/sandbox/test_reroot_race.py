"""A block entering its draft cannot take a protected name of the draft while the jail is
moved: a thread of the block tries to rename the draft's ``.vis`` the whole time, from before
the draft folder becomes writable until ``draft_create()`` returns (it meets the read-only
folder, then a mount point); it never succeeds, and ``.vis`` is read-only in the draft. The
window the move left (the draft writable before its protected names were bound) was a few
microseconds, too short for a Python thread to meet reliably: this test shows the outcome.

The thread meets both sides whatever the load: an extension's ``draft/create`` hook (it runs
after the draft is made, before the jail is moved) holds the draft read-only until the thread
has met it, and the thread goes on after ``draft_create()`` returns until it has met the
mount point."""

from __future__ import annotations

from pathlib import Path

import pytest

from .hostile import BWRAP_PROBLEM, run_blocks

pytestmark = pytest.mark.skipif(BWRAP_PROBLEM is not None, reason=BWRAP_PROBLEM or "")

MET = "met-read-only"  # the thread makes it in the workspace when it met the read-only draft

HOLD = '''
import os
import time

import vis_core.extension as vis


def hold(call):
    """The new draft stays read-only in the jail until the block's thread met it."""
    deadline = time.monotonic() + 60
    while not os.path.exists({met!r}) and time.monotonic() < deadline:
        time.sleep(0.01)


vis.register_extension(vis.Extension(
    name="hold", description="Holds a new draft until the block met it.",
    op_hooks=[vis.OpHook("draft/create", hold, phase="after")],
))
'''

RACE = """
import errno, os, threading
drafts = {drafts!r}
slot = None
for line in open("/proc/self/mountinfo"):
    point = line.split()[4]
    if point.startswith(drafts + "/") and "/outputs" not in point:
        slot = point + "/tree"  # the draft's folder, made in the slot shown read-only
print("slot found:", slot is not None)
met = os.path.join(os.getcwd(), {met!r})
done, stop, taken, seen = threading.Event(), threading.Event(), [], {{}}
def take():
    while not stop.is_set() and not (done.is_set() and errno.EBUSY in seen):
        try:
            os.rename(slot + "/.vis", slot + "/.vis-taken")
        except OSError as exc:
            if exc.errno == errno.EROFS and errno.EROFS not in seen:
                open(met, "w").close()  # the hook lets the jail move on
            seen[exc.errno] = seen.get(exc.errno, 0) + 1
            continue
        taken.append(True)
        return
worker = threading.Thread(target=take, daemon=True)
worker.start()
await draft_create("race")
done.set()
worker.join(30)
stop.set()
print("in draft:", os.getcwd() == slot, "taken:", bool(taken))
print("seen:", {{errno.errorcode[e]: n for e, n in seen.items()}})
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
    (vis_home / "extensions").mkdir()
    hold = HOLD.format(met=str((workspace / MET).resolve()))
    (vis_home / "extensions" / "hold.py").write_text(hold)
    code = RACE.format(drafts=str((vis_home / "drafts").resolve()), met=MET)
    (block,) = (await run_blocks(workspace, tmp_path, code)).blocks
    assert block.error is None, block.error
    assert "slot found: True" in block.stdout
    assert "in draft: True taken: False" in block.stdout, block.stdout
    assert "vis read-only: True" in block.stdout, block.stdout
    assert "tried while read-only: True" in block.stdout, block.stdout
    assert "tried once writable, refused as a mount point: True" in block.stdout, block.stdout
