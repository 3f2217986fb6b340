"""Whether a process the tests started still lives (a zombie waiting for its reaper does not)."""

from __future__ import annotations


def alive(pid: int) -> bool:
    """``pid`` runs and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"  # the name may hold ")"
    except (FileNotFoundError, ProcessLookupError):
        return False
