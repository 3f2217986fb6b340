"""A block that swaps a folder for a link to VIS_HOME while cat, ls, grep and patch run on it:
the host-side tools never read Vis's secrets nor write outside the workspace (jail on)."""

from __future__ import annotations

from pathlib import Path

import pytest
from sandbox.hostile import BWRAP_PROBLEM, run_blocks

jailed = pytest.mark.skipif(BWRAP_PROBLEM is not None, reason=str(BWRAP_PROBLEM))

SECRET = "vis-secret-5f0c2a"

# A process the block starts swaps `dir` (a folder) and a link to {target} atomically
# (renameat2 RENAME_EXCHANGE) every 0.1-0.3 ms, while the block calls the tool many times with
# a path through `dir`. Not as fast as it can: a tool looks at a path several times before it
# opens it, and a swapper faster than those looks flips the folder between them, so a
# check-then-open bug leaks only when every look saw the folder and the open the link. A fake
# such bug (realpath, then open) leaked as often at this pace in 200 rounds of reads as at
# full speed in 400, and about once in 400 patches at either pace; the swapper sleeps instead
# of taking a core for the whole loop.
SWAP_SCRIPT = """
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
open("swap.started", "w").close()
while not os.path.exists("swap.stop"):
    if libc.renameat2(-100, b"dir", -100, b"dir.link", 2) != 0:
        sys.exit("renameat2 failed: " + os.strerror(ctypes.get_errno()))
    time.sleep(0.0001)
"""

SWAPPER = """
import asyncio, os, sys
os.makedirs("dir", exist_ok=True)
open("dir/secrets", "w").write("decoy\\n")
os.symlink({target!r}, "dir.link")
open("swap.py", "w").write({script!r})
swapper = await shell("python3 swap.py")
while not os.path.exists("swap.started"):
    try:
        ended = await swapper.wait(0.05)
    except TimeoutError:
        continue
    raise RuntimeError(f"the swapper ended: {{ended}}")

async def stop_swapping():
    open("swap.stop", "w").close()
    print("swapper", (await swapper.wait(30)).exit_code)
"""


def _numbers(stdout: str, *names: str) -> list[int]:
    words = stdout.split()
    return [int(words[words.index(name) + 1]) for name in names]


def _jail_on(vis_home: Path) -> None:
    (vis_home / "config.toml").write_text("jail = true\n")
    (vis_home / "secrets").write_text(f'{{"token": "{SECRET}"}}\n')
    (vis_home / "extensions").mkdir(exist_ok=True)


READS = """
read, refused, leaked = 0, 0, []
for i in range(2000):  # 200 rounds, more until both outcomes happened (a loaded machine)
    if i >= 200 and read and refused:
        break
    for call in (lambda: cat("dir/secrets"), lambda: grep("token|decoy", "dir/secrets"),
                 lambda: ls("dir")):
        try:
            text = str(await call())
        except Exception as exc:
            refused += 1
            text = str(exc)
        else:
            read += 1
        if "vis-secret" in text or "config.toml" in text:
            leaked.append(text)
await stop_swapping()
print("read", read, "refused", refused)
print("leaked", len(leaked), leaked[:2])
"""


@jailed
@pytest.mark.parametrize("where", ["outside", "inside"])
async def test_reads_through_a_swapped_link_never_reach_vis_home(
    workspace: Path, tmp_path: Path, vis_home: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    """VIS_HOME outside the workspace (the link leads out), or inside it (the link stays in
    the workspace and leads into the folder the jail hides)."""
    if where == "inside":
        vis_home = workspace / ".config" / "vis"
        vis_home.mkdir(parents=True)
        monkeypatch.setenv("VIS_HOME", str(vis_home))
    _jail_on(vis_home)
    target = str(vis_home) if where == "outside" else ".config/vis"
    block = SWAPPER.format(target=target, script=SWAP_SCRIPT) + READS
    outcome = await run_blocks(workspace, tmp_path, block)
    finished = outcome.blocks[0]
    assert finished.error is None, finished.error
    assert "leaked 0 []" in finished.stdout, finished.stdout
    assert "swapper 0" in finished.stdout
    read, refused = _numbers(finished.stdout, "read", "refused")
    assert read > 0 and refused > 0, finished.stdout  # the race really ran


@jailed
async def test_patch_through_a_swapped_link_never_creates_files_outside(
    workspace: Path, tmp_path: Path, vis_home: Path
) -> None:
    _jail_on(vis_home)
    target = vis_home / "extensions"
    block = (
        SWAPPER.format(target=str(target), script=SWAP_SCRIPT)
        + """
made, refused = 0, 0
for i in range(2000):  # 600 rounds, more until both outcomes happened (a loaded machine)
    if i >= 600 and made and refused:
        break
    try:
        await patch(f"dir/x{i}.py", 0, "import os\\n")
        made += 1
    except Exception as exc:
        refused += 1
await stop_swapping()
print("made", made, "refused", refused)
"""
    )
    outcome = await run_blocks(workspace, tmp_path, block)
    finished = outcome.blocks[0]
    assert finished.error is None, finished.error
    assert sorted(p.name for p in target.iterdir()) == []
    assert not list(vis_home.glob("**/x*.py"))
    assert "swapper 0" in finished.stdout
    made, refused = _numbers(finished.stdout, "made", "refused")
    assert made > 0, finished.stdout  # the race really ran
    assert len(list(workspace.glob("dir*/x*.py"))) == made, finished.stdout
