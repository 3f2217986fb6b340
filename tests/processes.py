"""Whether a process the tests started still lives (a zombie waiting for its reaper does not)."""

from __future__ import annotations

import os


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
