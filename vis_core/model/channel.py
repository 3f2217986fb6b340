"""Which front end a session runs in: the closed set extensions read as ``ctx["channel"]``."""

from __future__ import annotations

from enum import StrEnum


class Channel(StrEnum):
    """The front end of a session; a ``str``, so extensions compare it with text."""

    TUI = "tui"  # the terminal app (and `vis --web`)
    CLI = "cli"  # `vis run` and the other subcommands
    ACP = "acp"  # an editor over the Agent Client Protocol
