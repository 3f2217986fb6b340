"""Commands the model runs, shown in the editor's own terminals (``terminal/create``).

The command itself runs where Vis runs it (in the jail, with the project's values only): the
editor's terminal would run it with the editor's environment and none of the jail. What the
editor runs is a small viewer of Vis's own that prints the command's (redacted) output as it
comes, from a private file, as text (control sequences written ``\x1b``), and exits with its
exit code; the tool call embeds that terminal.
"""

from __future__ import annotations

import logging
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from acp.helpers import tool_terminal_ref

from vis_core.frontend import terminal_text
from vis_core.model.activity import ActivityTerminal

log = logging.getLogger(__name__)
OUTPUT_LIMIT = 1_000_000  # bytes the editor keeps of one terminal
VIEWER = """
import os, sys, time
path, vis = sys.argv[1], int(sys.argv[2])
with open(path, "rb") as f:
    while True:
        chunk = f.read(65536)
        if chunk:
            sys.stdout.buffer.write(chunk)
            sys.stdout.flush()
        elif os.path.exists(path + ".exit") and (code := open(path + ".exit").read().strip()):
            sys.exit(min(max(int(code), 0), 255) if code.lstrip("-").isdigit() else 0)
        elif not os.path.exists(path):
            sys.exit(0)  # Vis closed the session
        else:
            try:
                os.kill(vis, 0)
            except ProcessLookupError:
                sys.exit(0)  # Vis is gone
            time.sleep(0.05)
"""


@dataclass
class _Shown:
    terminal_id: str
    path: Path
    written: int = 0  # output lines written so far (omitted ones counted)
    ended: bool = False


class EditorTerminals:
    """One session's commands, each mirrored into a terminal of the editor."""

    def __init__(self, connection: Any, session_id: str, cwd: Path) -> None:
        self.connection = connection
        self.session_id = session_id
        self.cwd = cwd
        self.folder = Path(tempfile.mkdtemp(prefix="vis-acp-terminals-"))  # 0700
        self._shown: dict[str, _Shown] = {}
        self._failed: set[str] = set()

    async def show(self, key: str, item: ActivityTerminal, *, final: bool) -> Any | None:
        """The terminal content of the command ``key`` (an Activity's id), its new output
        written and, once it exited or the Activity ended (``final``), its end; None when the
        editor refused a terminal."""
        if key in self._failed:
            return None
        shown = self._shown.get(key)
        try:
            if shown is None:
                shown = await self._create(key, item)
            self._write(shown, item)
            if (item.exit is not None or final) and not shown.ended:
                shown.ended = True
                await self._finish(shown, item.exit)
        except Exception:
            log.warning("the editor could not show a terminal; shown as text", exc_info=True)
            self._failed.add(key)
            return None
        return tool_terminal_ref(shown.terminal_id)

    async def _create(self, key: str, item: ActivityTerminal) -> _Shown:
        path = self.folder / f"{len(self._shown)}.out"
        path.write_text(terminal_text(f"$ {item.command_as_run()}\n"), encoding="utf-8")
        path.chmod(0o600)
        created = await self.connection.create_terminal(
            session_id=self.session_id,
            command=sys.executable,
            args=["-I", "-S", "-c", VIEWER, str(path), str(os.getpid())],
            env=[],
            cwd=str(self.cwd),
            output_byte_limit=OUTPUT_LIMIT,
        )
        shown = _Shown(created.terminal_id, path)
        self._shown[key] = shown
        return shown

    def _write(self, shown: _Shown, item: ActivityTerminal) -> None:
        first = item.omitted_lines  # the index of item.lines[0] in the whole output
        text = []
        if first > shown.written:
            text.append(f"… {first - shown.written} lines not shown\n")
            shown.written = first
        for line in item.lines[shown.written - first :]:
            text.append(line.text + "\n")
        shown.written = max(shown.written, first + len(item.lines))
        if text:
            with shown.path.open("a", encoding="utf-8") as file:
                file.write(terminal_text("".join(text)))  # a terminal: sequences as text

    async def _finish(self, shown: _Shown, code: int | None) -> None:
        """The viewer ends: with the command's exit code, or (still running when the
        Activity ended: a later one shows the rest) with 0 after saying so."""
        if code is None:
            with shown.path.open("a", encoding="utf-8") as file:
                file.write("… still running\n")
        exit_file = shown.path.with_name(shown.path.name + ".exit")
        written = exit_file.with_name(exit_file.name + ".new")  # whole, or not there at all
        written.write_text("0" if code is None else str(code), encoding="utf-8")
        os.replace(written, exit_file)
        await self.connection.wait_for_terminal_exit(
            session_id=self.session_id, terminal_id=shown.terminal_id
        )
        await self.connection.release_terminal(  # the tool call keeps showing its output
            session_id=self.session_id, terminal_id=shown.terminal_id
        )

    def close(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)
