"""The memory limit holds for a block's whole process tree, not only for each process."""

from __future__ import annotations

import ast
import asyncio
import os
import shutil
import sys
from pathlib import Path

import pytest

from vis_core.system.lifetime import VIS_FOLDER_BYTES, VIS_FOLDERS, ChildLimits, JailTmpfs
from vis_core.system.shell import ShellManager
from vis_core.tools import ToolContext

from .conftest import MakeSandbox

MiB = 1 << 20
# Each process holds 100 MB, under the 256 MB limit of one process; four hold 400 MB.
HOLDER = "import time; b = b'x' * (100 * 2**20); print('holding', flush=True); time.sleep(120)"


async def test_processes_each_under_the_limit_but_over_it_together_are_stopped(
    make_sandbox: MakeSandbox,
) -> None:
    box = make_sandbox(limits=ChildLimits(memory_mb=256))
    code = (
        "import subprocess, sys\n"
        f"procs = [subprocess.Popen([sys.executable, '-c', {HOLDER!r}]) for _ in range(4)]\n"
        "for p in procs:\n"
        "    p.wait()\n"
    )
    result = await asyncio.wait_for(box.run(code), 60)
    assert result.error is not None
    assert "the block's processes together held" in result.error, result.error
    assert "over the memory limit of 256 MB (setting memory_limit)" in result.error
    after = await asyncio.wait_for(box.run("print('next block runs')"), 60)
    assert after.error is None and "next block runs" in after.stdout


async def test_a_shell_commands_processes_are_held_to_the_limit_together(
    workspace: Path, tmp_path: Path
) -> None:
    holder = f'python3 -c "{HOLDER}"'
    ctx = ToolContext(
        workspace, "s", tmp_path / "o", shells=ShellManager(limits=ChildLimits(memory_mb=256))
    )
    try:
        handle = await ctx.shells.start(
            f"for i in 1 2 3 4; do {holder} & done; wait", cwd=workspace, output_dir=tmp_path / "o"
        )
        status = await handle.wait(60)
    finally:
        await ctx.close()
    assert "over the memory limit (setting memory_limit)" in status.state, str(status)


async def test_memory_a_process_holds_after_its_main_thread_exited_counts(
    workspace: Path, tmp_path: Path
) -> None:
    """A process whose main thread exited alone (``SYS_exit``) shows no memory of its own (its
    leader is a zombie) while a thread of it holds 100 MB: it counted as none, and four such
    processes went on holding 400 MB under a limit of 256 MB."""
    (workspace / "holder.py").write_text(
        "import ctypes, os, threading, time\n"
        "def hold():\n"
        "    while open(f'/proc/{os.getpid()}/stat').read().rsplit(') ', 1)[1][0] != 'Z':\n"
        "        time.sleep(0.01)  # until the main thread has exited\n"
        "    b = b'x' * (100 * 2**20)\n"
        "    time.sleep(30)\n"
        "threading.Thread(target=hold).start()\n"
        "ctypes.CDLL(None).syscall(60, 0)  # SYS_exit: only the main thread ends\n"
    )
    ctx = ToolContext(
        workspace, "s", tmp_path / "o", shells=ShellManager(limits=ChildLimits(memory_mb=256))
    )
    try:
        handle = await ctx.shells.start(
            f"for i in 1 2 3 4; do {sys.executable} holder.py & done; wait",
            cwd=workspace,
            output_dir=tmp_path / "o",
        )
        status = await handle.wait(60)
    finally:
        await ctx.close()
    assert "over the memory limit (setting memory_limit)" in status.state, str(status)


# Fill each folder with 1 MiB writes until the kernel refuses one; print what each took.
FILL = """
import errno, os
held = {{}}
for folder in {folders!r}:
    written, error = 0, "none"
    try:
        with open(os.path.join(folder, "fill"), "wb", buffering=0) as out:
            chunk = bytes(1 << 20)
            while written < {most}:
                written += out.write(chunk)
    except OSError as exc:
        error = errno.errorcode[exc.errno]
    held[folder] = (written, error)
print(held)
"""


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="the jail needs bubblewrap")
async def test_jailed_memory_backed_folders_hold_the_limit_together(
    make_sandbox: MakeSandbox, vis_home: Path
) -> None:
    """Files in the jail's tmpfs mounts are memory that no process holds. The tester's attack:
    with a limit of 1024 MiB a block wrote 1200 MiB to home and 1200 MiB to an emptied Vis
    folder (the kernel's default size, half the RAM each). Every writable one is sized now,
    ``/dev`` is read-only, and together they took no more than the limit."""
    limit = 256
    box = make_sandbox(jail=True, limits=ChildLimits(memory_mb=limit))
    folders = ["/tmp", str(Path.home()), "/dev/shm", str(vis_home), "/dev"]
    result = await box.run(FILL.format(folders=folders, most=2 * limit * MiB))
    assert result.error is None, result.error
    held: dict[str, tuple[int, str]] = ast.literal_eval(result.stdout.strip())
    errors = {folder: error for folder, (_, error) in held.items()}
    assert errors == {**dict.fromkeys(folders[:4], "ENOSPC"), "/dev": "EROFS"}
    assert sum(written for written, _ in held.values()) <= limit * MiB
    assert held["/tmp"][0] >= limit * MiB // 2 - VIS_FOLDERS * VIS_FOLDER_BYTES


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="the jail needs bubblewrap")
async def test_a_jailed_shell_gets_the_same_memory_backed_folders(
    workspace: Path, tmp_path: Path
) -> None:
    """A shell the model leaves running holds what it wrote until it ends: its folders are
    sized as the sandbox's are."""
    ctx = ToolContext(
        workspace,
        "s",
        tmp_path / "o",
        jail=True,
        shells=ShellManager(limits=ChildLimits(memory_mb=64)),
    )
    try:
        handle = await ctx.shells.start(
            'df -B1 /dev/shm /tmp "$HOME" | tail -n 3; head -c 64M /dev/zero > "$HOME/f"',
            cwd=workspace,
            output_dir=tmp_path / "o",
            jail_workspace=workspace,
        )
        status = await handle.wait(30)
    finally:
        await ctx.close()
    sizes = [int(line.split()[1]) for line in status.output.splitlines()[:3]]
    expected = JailTmpfs.within(64 * MiB)
    assert sizes == [expected.shm, expected.tmp, expected.home], status.output
    assert "No space left on device" in status.output


def test_without_a_limit_the_folders_share_half_the_ram() -> None:
    """What the kernel gives one tmpfs by default, for all of them together."""
    sizes = JailTmpfs.within(0)
    ram = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    assert sizes.tmp + sizes.home + sizes.shm + VIS_FOLDERS * sizes.vis <= ram // 2
    assert sizes.tmp > ram // 5


async def test_memory_forked_processes_share_counts_once(make_sandbox: MakeSandbox) -> None:
    """A block that holds 200 MB and forks three workers holds 200 MB, not 800 MB: pages the
    workers share with it are not counted once per worker."""
    box = make_sandbox(limits=ChildLimits(memory_mb=512))
    code = (
        "import os, time\n"
        "data = b'x' * (200 * 2**20)\n"
        "pids = []\n"
        "for _ in range(3):\n"
        "    pid = os.fork()\n"
        "    if pid == 0:\n"
        "        time.sleep(1.5)\n"
        "        os._exit(0)\n"
        "    pids.append(pid)\n"
        "print([os.waitstatus_to_exitcode(os.waitpid(p, 0)[1]) for p in pids])\n"
    )
    result = await asyncio.wait_for(box.run(code), 60)
    assert result.error is None, result.error
    assert result.stdout == "[0, 0, 0]\n"
