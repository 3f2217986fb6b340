"""`vis acp` with the editor's fs methods: a command of the model's that keeps swapping a link
into the path, running or still starting, is stopped while Vis checks the path and the editor
opens it."""

from __future__ import annotations

import os
import textwrap
import uuid
from pathlib import Path
from typing import Any

import pytest
from acp import PROTOCOL_VERSION, text_block
from acp.schema import ClientCapabilities, FileSystemCapabilities
from acp_client import EditorClient, vis_acp
from cli_support import script

FS = ClientCapabilities(fs=FileSystemCapabilities(read_text_file=True, write_text_file=True))
TRIES = 6  # turns until the editor is handed a path (the race must really run)


def _swapper(mark: str) -> list[tuple[str, str]]:
    """``(state, pid namespace)`` of each process running the model's swapping loop (and of
    the wrappers whose command line names it): those whose command line holds ``mark``."""
    found = []
    for name in os.listdir("/proc"):
        try:
            cmdline = Path(f"/proc/{name}/cmdline").read_bytes()
            if mark.encode() not in cmdline:
                continue
            state = Path(f"/proc/{name}/stat").read_text().rsplit(")", 1)[1].split()[0]
            found.append((state, os.readlink(f"/proc/{name}/ns/pid")))
        except (OSError, IndexError, ValueError):
            continue
    return found


class WatchfulEditor(EditorClient):
    """Notes, at each fs call, whether the model's swapper could act and what the path was."""

    def __init__(self, mark: str) -> None:
        super().__init__()
        self.mark = mark
        self.seen: list[tuple[list[tuple[str, str]], bool]] = []

    def _look(self, path: str) -> None:
        self.seen.append((_swapper(self.mark), os.path.islink(path)))

    async def read_text_file(self, session_id: str, path: str, **kwargs: Any) -> Any:
        self._look(path)
        return await super().read_text_file(session_id, path, **kwargs)

    async def write_text_file(self, session_id: str, path: str, content: str, **kwargs: Any) -> Any:
        self._look(path)
        return await super().write_text_file(session_id, path, content, **kwargs)


# The model's loop: a link out of the workspace, then the plain file, each for 0.5 ms. A swap
# between Vis's check of a path and its stop of the model is what a check-then-open bug leaks
# by, so the loop swaps often; in Python, without the four processes a round that a shell loop
# of ln, cp and mv forked, and sleeping in between rather than taking a core.
SWAP = """\
import os, shutil, time
open("started", "w").close()
while True:
    try:
        os.symlink({secret!r}, "l.tmp")
    except FileExistsError:
        pass
    os.replace("l.tmp", "notes.txt")
    time.sleep(0.0005)
    shutil.copy("keep.txt", "n.tmp")
    os.replace("n.tmp", "notes.txt")
    time.sleep(0.0005)
"""


@pytest.mark.parametrize("started", [True, False], ids=["running", "starting"])
async def test_a_link_swapped_in_by_the_model_never_reaches_the_editor(
    workspace, vis_home, tmp_path, started
):
    """``running``: the loop is under way at every call (it made its own ``started`` file);
    ``starting``: each call comes right after the command was started, while its keeper and
    bwrap are still setting the jail up (no process of it may act then either)."""
    secret = tmp_path / "secret.txt"
    secret.write_text("SECRET outside the workspace\n")
    (workspace / "notes.txt").write_text("plain notes\n")
    (workspace / "keep.txt").write_text("plain notes\n")
    (workspace / "swap.py").write_text(SWAP.format(secret=str(secret)))
    mark = f"swapper-{uuid.uuid4().hex}"  # this test's loop, not one of a test beside it
    command = f"python3 swap.py {mark}"
    start = f"h = await shell({command!r})\n"
    # the loop may have ended with its link in place: the plain file back. A SIGTERM that
    # lands while the keeper and bwrap still set the jail up can miss the command, which then
    # runs on until the SIGKILL after the stop's grace: 0.1 s here, not the default 2 s.
    stop = "await h.stop(0.1)\nshutil.copy('keep.txt', 'n.tmp')\nos.replace('n.tmp', 'notes.txt')\n"
    calls = (  # a read and an edit through the editor
        "try:\n"
        "    seen.append(str(await cat('notes.txt')))\n"
        "except Exception as exc:\n"
        "    seen.append(type(exc).__name__)\n"
        "try:\n"
        "    await patch('notes.txt', 1, [{'start': 1, 'end': 1, 'text': 'edited\\n'}])\n"
        "except Exception as exc:\n"
        "    seen.append(type(exc).__name__)\n"
    )
    if started:  # this turn's loop makes the file anew: one of an earlier turn is no sign
        body = (
            "if os.path.exists('started'):\n    os.remove('started')\n" + start + "while not "
            "os.path.exists('started'):\n    await asyncio.sleep(0.01)\nfor i in range(30):\n"
            + textwrap.indent(calls, "    ")
            + stop
        )
    else:
        body = "for i in range(10):\n" + textwrap.indent(start + calls + stop, "    ")
    code = (
        "import asyncio, os, shutil\nseen = []\n"
        + body
        + "print('SECRET' in ''.join(seen), len(seen))"
    )
    client = WatchfulEditor(mark)
    steps = [{"code": code}, {"text": "done"}] * TRIES
    async with vis_acp(client, workspace, vis_home, script(tmp_path, steps)) as (conn, _):
        await conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=FS)
        sid = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        for _ in range(TRIES):  # a loaded machine may send every call of a turn to disk
            await conn.prompt(session_id=sid, prompt=[text_block("read it while it moves")])
            if client.seen:
                break

    assert client.seen, "no read or write reached the editor"
    own = os.readlink("/proc/self/ns/pid")
    for swapper, is_link in client.seen:
        # every process of the command is stopped while the editor opens: the loop in the
        # jail and what starts it (its keeper, bwrap's outer half)
        assert swapper and all(state == "T" for state, _ in swapper), swapper
        if started:  # and the loop itself was there to be stopped
            assert any(ns != own for _, ns in swapper), swapper
        assert not is_link
    assert "SECRET" not in secret.read_text().replace("SECRET outside", "")
    assert secret.read_text() == "SECRET outside the workspace\n"  # never written through
    shown = "".join(
        c.content.text
        for _, u in client.updates
        if isinstance(getattr(u, "content", None), list)
        for c in u.content
        if c.type == "content"
    )
    assert "\nTrue " not in shown and "\nFalse " in shown  # the secret never reached the model


def _threads(mark: str) -> dict[str, list[str]]:
    """The state of each thread of each process whose command line holds ``mark``, by pid: read
    through its threads, as a leader that exited has no command line of its own."""
    found: dict[str, list[str]] = {}
    for name in filter(str.isdigit, os.listdir("/proc")):
        try:
            tasks = os.listdir(f"/proc/{name}/task")
            if not any(
                mark.encode() in Path(f"/proc/{name}/task/{tid}/cmdline").read_bytes()
                for tid in tasks
            ):
                continue
            found[name] = [
                Path(f"/proc/{name}/task/{tid}/stat").read_text().rsplit(")", 1)[1].split()[0]
                for tid in tasks
            ]
        except (OSError, IndexError):
            continue
    return found


class ThreadWatchingEditor(EditorClient):
    """Notes, at each read, the states of the swapper's threads and whether the path was a link."""

    def __init__(self, mark: str) -> None:
        super().__init__()
        self.mark = mark
        self.seen: list[tuple[dict[str, list[str]], bool]] = []

    async def read_text_file(self, session_id: str, path: str, **kwargs: Any) -> Any:
        self.seen.append((_threads(self.mark), os.path.islink(path)))
        return await super().read_text_file(session_id, path, **kwargs)


async def test_a_swapper_whose_leader_exited_is_stopped_too(workspace, vis_home, tmp_path):
    """The swapping loop runs in a thread of a process whose main thread then exits alone
    (``SYS_exit``): the leader shows ``Z`` while the loop runs on. Vis took the process for
    stopped by its leader's state and never stopped it; the editor was handed the host's
    secret through a link (found by an attacker)."""
    secret = tmp_path / "secret.txt"
    secret.write_text("SECRET outside the workspace\n")
    (workspace / "notes.txt").write_text("plain notes\n")
    (workspace / "keep.txt").write_text("plain notes\n")
    (workspace / "swap.py").write_text(  # paced like SWAP, 1 ms each way
        "import ctypes, os, shutil, threading, time\n"
        "def swap():\n"
        "    open('started', 'w').close()\n"
        "    while True:\n"
        "        try:\n"
        f"            os.symlink({str(secret)!r}, 'l.tmp')\n"
        "        except FileExistsError:\n"
        "            pass\n"
        "        os.replace('l.tmp', 'notes.txt')\n"
        "        time.sleep(0.001)\n"
        "        shutil.copy('keep.txt', 'n.tmp')\n"
        "        os.replace('n.tmp', 'notes.txt')\n"
        "        time.sleep(0.001)\n"
        "threading.Thread(target=swap).start()\n"
        "time.sleep(0.2)\n"
        "ctypes.CDLL(None).syscall(60, 0)  # SYS_exit: only the main thread ends\n"
    )
    mark = f"swapper-{uuid.uuid4().hex}"
    code = (
        "import asyncio, os, shutil\nseen = []\n"
        "if os.path.exists('started'):\n    os.remove('started')\n"
        f"h = await shell('python3 swap.py {mark}')\n"
        "while not os.path.exists('started'):\n    await asyncio.sleep(0.01)\n"
        "await asyncio.sleep(0.5)  # the main thread has exited\n"
        "for i in range(30):\n"
        "    try:\n"
        "        seen.append(str(await cat('notes.txt')))\n"
        "    except Exception as exc:\n"
        "        seen.append(type(exc).__name__)\n"
        "await h.stop()\n"
        "shutil.copy('keep.txt', 'n.tmp')\nos.replace('n.tmp', 'notes.txt')\n"
        "print('SECRET' in ''.join(seen), len(seen))"
    )
    client = ThreadWatchingEditor(mark)
    steps = [{"code": code}, {"text": "done"}] * TRIES
    async with vis_acp(client, workspace, vis_home, script(tmp_path, steps)) as (conn, _):
        await conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=FS)
        sid = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        for _ in range(TRIES):  # a loaded machine may send every call of a turn to disk
            await conn.prompt(session_id=sid, prompt=[text_block("read it while it moves")])
            if client.seen:
                break

    assert client.seen, "no read reached the editor"
    for swapper, is_link in client.seen:
        # the loop's process is there, its leader exited, and every thread of it is stopped
        assert any(states[0] == "Z" and "T" in states for states in swapper.values()), swapper
        assert all(set(states) <= {"T", "Z"} for states in swapper.values()), swapper
        assert not is_link
    shown = "".join(
        c.content.text
        for _, u in client.updates
        if isinstance(getattr(u, "content", None), list)
        for c in u.content
        if c.type == "content"
    )
    assert "\nTrue " not in shown and "\nFalse " in shown  # the secret never reached the model
