"""The memory limit holds for a block's whole process tree, not only for each process."""

from __future__ import annotations

import asyncio
import shutil
import sys
from pathlib import Path

import pytest

from vis_core.system.lifetime import ChildLimits
from vis_core.system.shell import ShellManager
from vis_core.tools import ToolContext

from .conftest import MakeSandbox

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


FILL = (
    "import errno\n"
    "for folder in ('/dev/shm', '/tmp'):\n"
    "    try:\n"
    "        with open(f'{folder}/fill', 'wb') as file:\n"
    "            for _ in range(300):\n"
    "                file.write(b'x' * 2**20)\n"
    "        print(folder, 'took 300 MB')\n"
    "    except OSError as exc:\n"
    "        print(folder, errno.errorcode[exc.errno])\n"
)


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="the jail needs bubblewrap")
async def test_jailed_memory_backed_folders_hold_no_more_than_the_limit(
    make_sandbox: MakeSandbox,
) -> None:
    """Files in /dev/shm and the jail's /tmp are memory that no process holds; under the jail
    each is a private tmpfs no larger than the memory limit."""
    box = make_sandbox(jail=True, limits=ChildLimits(memory_mb=256))
    result = await asyncio.wait_for(box.run(FILL), 60)
    assert result.error is None, result.error
    assert result.stdout == "/dev/shm ENOSPC\n/tmp ENOSPC\n"


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="the jail needs bubblewrap")
async def test_a_jailed_shell_gets_the_same_memory_backed_folders(
    workspace: Path, tmp_path: Path
) -> None:
    ctx = ToolContext(
        workspace,
        "s",
        tmp_path / "o",
        jail=True,
        shells=ShellManager(limits=ChildLimits(memory_mb=64)),
    )
    try:
        handle = await ctx.shells.start(
            "df -k /dev/shm /tmp | tail -n 2",
            cwd=workspace,
            output_dir=tmp_path / "o",
            jail_workspace=workspace,
        )
        status = await handle.wait(30)
    finally:
        await ctx.close()
    sizes = [line.split()[1] for line in status.output.splitlines()]
    assert sizes == [str(64 * 1024), str(64 * 1024)], status.output


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
