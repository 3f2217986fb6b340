"""Processes the tests started: whether one still lives (a zombie waiting for its reaper does
not), which carry a mark, what this one read, and a call that must not wait on a pipe."""

from __future__ import annotations

import os
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
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as file:
                cmdline = file.read()
            with open(f"/proc/{name}/stat") as file:
                state = file.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if mark.encode() in cmdline and state != "Z":
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
