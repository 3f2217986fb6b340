"""The keeper ends a command's whole tree when its owner dies by kill -9, as root and as an
ordinary user (a bare uid), with the system Python the keeper needs (stdlib only); a jailed
command stopped right after it starts ends by the SIGTERM alone."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import pytest

from vis_core.system.jail import jail_argv
from vis_core.system.jail_check import find_bwrap, jail_problem
from vis_core.system.keeper import children
from vis_core.system.lifetime import KEEPER
from vis_core.system.process import ChildProcess

# The owner stands in for Vis: it holds its end of the socket pair and starts the keeper.
OWNER = """
import socket, subprocess, sys
keeper, command = sys.argv[1], sys.argv[2]
ours, theirs = socket.socketpair()
subprocess.Popen(
    [sys.executable, "-I", "-S", keeper, str(theirs.fileno()), "shell", "0", "0", "--",
     "bash", "-c", command],
    pass_fds=(theirs.fileno(),), start_new_session=True,
)
theirs.close()
ours.send(b"go\\n")  # the command may start
print("started", flush=True)
sys.stdin.read()
"""


def marked(mark: str) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        try:
            with open(f"/proc/{name}/cmdline", "rb") as file:
                cmdline = file.read()
            with open(f"/proc/{name}/stat") as file:
                state = file.read().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if mark.encode() in cmdline and state != "Z":
            found.append(int(name))
    return found


def named(mark: str) -> set[str]:
    """The names (``argv[0]``) of the live processes named after ``mark``."""
    names = set()
    for pid in marked(mark):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as file:
                names.add(file.read().split(b"\0")[0].decode())
        except OSError:
            continue
    return names


@pytest.fixture(params=["root", "plain"])
def user(request: pytest.FixtureRequest) -> int | None:
    """``None`` (this process's user) or an ordinary user's bare uid."""
    if request.param == "root" or os.geteuid() != 0:
        return None
    return request.getfixturevalue("plain_uid")


def test_kill_9_of_the_owner_ends_every_process_of_the_tree(user: int | None) -> None:
    python = sys.executable if user is None else shutil.which("python3", path="/usr/bin:/bin")
    if python is None:
        pytest.skip("no system python3 an ordinary user can run")
    mark = f"vis-kept-{uuid.uuid4().hex}"
    command = (
        f"setsid bash -c 'exec -a {mark}-setsid sleep 300' & "
        f"(setsid bash -c 'exec -a {mark}-double sleep 300' &) ; exec -a {mark}-main sleep 300"
    )
    folder = Path(tempfile.mkdtemp())
    os.chmod(folder, 0o755)
    owner = folder / "owner.py"
    owner.write_text(OWNER)
    proc = subprocess.Popen(
        [python, str(owner), str(KEEPER), command],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        user=user,
        cwd=folder,
        env={"PATH": "/usr/bin:/bin"},
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline() == b"started\n"
        deadline = time.monotonic() + 30
        kinds = {f"{mark}-{kind}" for kind in ("setsid", "double", "main")}
        while not kinds <= named(mark):
            assert time.monotonic() < deadline, f"the command did not start: {named(mark)}"
            time.sleep(0.02)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        deadline = time.monotonic() + 20
        while marked(mark) and time.monotonic() < deadline:
            time.sleep(0.02)
        left = marked(mark)
    finally:
        proc.kill()
        for pid in marked(mark):
            os.kill(pid, signal.SIGKILL)
        shutil.rmtree(folder, ignore_errors=True)
    assert left == [], "processes of the command outlived the owner's kill -9"


def _program(pid: int) -> str:
    """What ``pid`` runs (its ``argv[0]``); empty once it is gone."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as file:
            return file.read().split(b"\0")[0].decode()
    except OSError:
        return ""


@pytest.mark.skipif(jail_problem() is not None, reason=str(jail_problem()))
async def test_a_jailed_command_stopped_as_it_starts_ends_by_the_sigterm(workspace: Path) -> None:
    """A SIGTERM that came while the keeper's child still had the keeper's handlers was taken
    as the keeper's and lost; one that ended the outer bubblewrap before the inner one (the
    jail's first process, which drops a SIGTERM from outside) had asked to die with it left
    the inner one, and the command, running: both until the SIGKILL after the grace. The
    command is stopped at each of those moments in turn, and no SIGKILL ever follows."""
    bwrap = find_bwrap()
    for attempt in range(30):
        started: list[int] = []
        child = ChildProcess(
            ["bash", "-c", "sleep 300"],
            env={"PATH": "/usr/bin:/bin"},
            cwd=workspace,
            jail=lambda argv: jail_argv(argv, workspace),
            keeper="shell",
        )
        try:
            while child.running and not (started := children(child.pid)):
                pass  # forked: it may not have reset the keeper's handlers yet
            if attempt % 3 and child.running:  # bubblewrap, before or after its namespace
                while child.running and _program(started[0]) not in ("", bwrap):
                    pass
                while attempt % 3 == 2 and child.running and not children(started[0]):
                    pass
            child.terminate()
            try:
                code = await asyncio.wait_for(child.wait(), 20)
            except TimeoutError:
                left = [_program(pid) for pid in children(child.pid)]
                pytest.fail(f"stop {attempt}: the SIGTERM left {left} running")
            assert code == -signal.SIGTERM, attempt
        finally:
            child.kill()
            await child.wait()
