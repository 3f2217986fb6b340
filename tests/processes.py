"""Processes the tests started: whether one still lives (a zombie waiting for its reaper does
not), which carry a mark, what this one read, and a call that must not wait on a pipe."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest

T = TypeVar("T")


def alive(pid: int) -> bool:
    """``pid`` runs and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"  # the name may hold ")"
    except (FileNotFoundError, ProcessLookupError):
        return False


def marked(mark: str) -> list[int]:
    """Live processes whose argv holds ``mark``."""
    found, wanted = [], mark.encode()
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as file:
                if wanted not in file.read():
                    continue  # the state of the machine's other processes is never read
        except OSError:
            continue
        if alive(int(name)):
            found.append(int(name))
    return found


def bytes_read() -> int:
    """The bytes this process has read so far (``rchar``): a huge file read whole shows."""
    with open("/proc/self/io") as io:
        for line in io:
            if line.startswith("rchar:"):
                return int(line.split()[1])
    raise AssertionError("no rchar in /proc/self/io")


def without_waiting_on(pipe: Path, call: Callable[[], T]) -> T:
    """What ``call`` returns (or raises), run in a thread. A call still waiting after 60 s to
    open the named pipe ``pipe`` is let go (a writer opens it) and fails the test."""
    outcome: list[T] = []
    failed: list[BaseException] = []

    def run() -> None:
        try:
            outcome.append(call())
        except BaseException as exc:  # raised again in the test
            failed.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(60)
    if thread.is_alive():  # still waiting for a writer: let it go, then fail
        with open(pipe, "wb"):
            pass
        thread.join(60)
        pytest.fail(f"the call waited on the named pipe {pipe.name}")
    if failed:
        raise failed[0]
    return outcome[0]


# The start of a script for :func:`fresh_python`: ``watch_imports(wanted)`` prints
# "NAME imported on the loop" (the main thread's) or "NAME imported off the loop" at the first
# import of each module whose name ``wanted`` accepts.
WATCH_IMPORTS = """
import importlib.abc, sys, threading

class _Watch(importlib.abc.MetaPathFinder):
    def __init__(self, wanted):
        self.wanted = wanted

    def find_spec(self, name, path, target=None):
        if self.wanted(name) and name not in sys.modules:
            loop = threading.current_thread() is threading.main_thread()
            print(name, "imported on the loop" if loop else "imported off the loop", flush=True)
        return None

def watch_imports(wanted):
    sys.meta_path.insert(0, _Watch(wanted))
"""


def fresh_python(
    script: str, *args: str, vis_home: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``script`` run with ``args`` in a Python process of its own, where nothing is imported
    yet, with ``VIS_HOME=vis_home`` and ``env`` added to this environment."""
    return subprocess.run(
        [sys.executable, "-c", script, *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **(env or {}), "VIS_HOME": str(vis_home)},
    )
