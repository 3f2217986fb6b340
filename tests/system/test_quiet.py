"""``model_stopped`` holds the model's jailed commands: two holders at once (an editor's file call
under ``vis acp`` and git in a draft), a command started while they hold, and a process whose
main thread exited while its others run on."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from vis_core.system.git import run_git
from vis_core.system.jail_check import jail_problem
from vis_core.system.keeper import children
from vis_core.system.quiet import held_processes, model_stopped
from vis_core.system.shell import ShellHandle, ShellManager

pytestmark = pytest.mark.skipif(jail_problem() is not None, reason=str(jail_problem()))


def _status(pid: int) -> dict[str, str]:
    lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    return dict(line.split(":\t", 1) for line in lines if ":\t" in line)


def _state(pid: int) -> str:
    return _status(pid)["State"][0]


async def _jailed(shells: ShellManager, workspace: Path, command: str) -> ShellHandle:
    return await shells.start(
        command, cwd=workspace, output_dir=workspace / "out", jail_workspace=workspace
    )


async def _spinning(shells: ShellManager, workspace: Path) -> ShellHandle:
    """A jailed endless loop, once its processes exist: its keeper, bwrap, and the first
    process in the jail."""
    spinner = await _jailed(shells, workspace, "while :; do :; done")
    while len(held_processes()) < 3:
        assert spinner.running, spinner.status()
        await asyncio.sleep(0.01)
    return spinner


@contextmanager
def _held_elsewhere() -> Iterator[Callable[[], None]]:
    """``model_stopped`` held by another thread (as an editor's file call is); the callable
    makes it leave, and returns once it has."""
    inside, leave = threading.Event(), threading.Event()
    failed: list[BaseException] = []

    def hold() -> None:
        try:
            with model_stopped():
                inside.set()
                leave.wait()
        except BaseException as exc:  # shown by the test
            failed.append(exc)
            inside.set()

    holder = threading.Thread(target=hold)
    holder.start()

    def leaves() -> None:
        leave.set()
        holder.join()

    try:
        inside.wait()
        assert not failed, failed
        yield leaves
    finally:
        leaves()


async def test_the_first_to_leave_does_not_continue_what_the_other_holds(
    workspace: Path,
) -> None:
    shells = ShellManager()
    try:
        spinner = await _spinning(shells, workspace)
        with _held_elsewhere() as leave_first, model_stopped():
            leave_first()
            seen = {_state(pid) for pid in held_processes()}
        assert seen == {"T"}
        assert _state(spinner.pid) != "T"  # continued once both have left
    finally:
        await shells.close_all()


async def test_a_command_started_while_the_model_is_held_starts_when_it_is_no_longer(
    workspace: Path,
) -> None:
    """Its keeper waits, set up and asleep, with no process of the command; told once the last
    holder leaves, it starts the command."""
    shells = ShellManager()
    try:
        with _held_elsewhere():
            handle = await _jailed(shells, workspace, "echo ran > ran.txt")
            caught = 1 << (10 - 1)  # SIGUSR1: the keeper's handlers are in place
            while not int(_status(handle.pid)["SigCgt"], 16) & caught:
                await asyncio.sleep(0.01)
            while _state(handle.pid) != "S":  # asleep: once started, it would have forked
                await asyncio.sleep(0.01)
            assert children(handle.pid) == []
            assert handle.running
        status = await handle.wait(None)
        assert status.exit_code == 0, status
        assert (workspace / "ran.txt").read_text() == "ran\n"
    finally:
        await shells.close_all()


async def test_a_drafts_files_land_in_the_workspace_while_the_model_is_held(
    workspace: Path,
) -> None:
    """Approval writes into the live workspace by path: a command the model left running there
    (started before its draft) is stopped while the files land, so it cannot swap a folder
    for a link between a check and a rename."""
    from vis_core.drafts.files import land_files

    shells = ShellManager()
    try:
        spinner = await _spinning(shells, workspace)
        seen: list[str] = []

        def write(temporary: Path) -> None:
            seen.extend(_state(pid) for pid in held_processes())
            temporary.write_text("landed\n")

        land_files(workspace, [("notes.txt", write)])
        assert seen and set(seen) == {"T"}
        assert (workspace / "notes.txt").read_text() == "landed\n"
        assert _state(spinner.pid) != "T"  # continued once the files are in
    finally:
        await shells.close_all()


async def test_host_git_runs_while_every_thread_of_a_process_whose_leader_exited_is_stopped(
    workspace: Path, tmp_path: Path
) -> None:
    """A jailed process's main thread exits alone (``SYS_exit``) and shows ``Z`` while a thread
    of it runs on: it was taken for stopped by its leader's state, and ran through the hold
    host git is under. What git runs (here an alias of the test's) sees each thread stopped."""
    (workspace / "spin.py").write_text(
        "import ctypes, threading\n"
        "def spin():\n"
        "    while True:\n"
        "        pass\n"
        "threading.Thread(target=spin).start()\n"
        "ctypes.CDLL(None).syscall(60, 0)  # SYS_exit: only the main thread ends\n"
    )
    shells = ShellManager()
    try:
        spinner = await _jailed(shells, workspace, "python3 spin.py")

        def leader_exited() -> int | None:
            for pid in held_processes():
                with contextlib.suppress(OSError):
                    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
                    if fields[0] == "Z" and int(fields[17]) > 1:  # num_threads
                        return pid
            return None

        while (pid := leader_exited()) is None:
            assert spinner.running, spinner.status()
            await asyncio.sleep(0.01)
        seen = tmp_path / "seen"
        look = f"alias.look=!cat /proc/{pid}/task/*/stat > {seen}"
        done = run_git(["-c", look, "look"], tmp_path)
        assert done.returncode == 0, done.stderr
        states = {  # by thread id
            int(line.split()[0]): line.rsplit(")", 1)[1].split()[0]
            for line in seen.read_text().splitlines()
        }
        assert states.pop(pid) == "Z" and set(states.values()) == {"T"}, states
        tasks = Path(f"/proc/{pid}/task")
        after = {
            (task / "stat").read_text().rsplit(")", 1)[1].split()[0] for task in tasks.iterdir()
        }
        assert "T" not in after, after  # continued once git has run
    finally:
        await shells.close_all()
