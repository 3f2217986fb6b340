"""A session's instructions: the files in its system prompt, and nested ones noted on the way.

The files are read when the session opens and again when each turn starts, never between
the requests of one turn: the system prompt stays byte-identical through a turn, so each
request extends the previous one (a provider's prompt cache keeps working).

A folder below the workspace with its own instruction file is noted when the model works
there (``cat``, ``ls`` or ``patch`` of a path beneath it): its text joins the result of that
block, once per folder per session.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path

from vis_core.instructions.files import (
    InstructionFile,
    InstructionScope,
    find_instructions,
    folder_file,
    prompt_section,
    read_instruction,
)

PATH_TOOLS = frozenset({"cat", "ls", "patch"})  # built-ins whose first argument is a path
_NOTE = re.compile(r"\[Vis: .+? holds instructions for the files under (.+?)/; follow them there\]")


class SessionInstructions:
    """What one session's system prompt carries from instruction files, and the nested
    files its blocks came near."""

    def __init__(self, config_dir: Path, project_root: Path, workspace: Path) -> None:
        self._config_dir = config_dir
        self._project_root = project_root
        self.workspace = workspace.resolve()
        self.files: tuple[InstructionFile, ...] = ()
        self._section = ""
        self._noted: set[Path] = set()
        self._pending: list[InstructionFile] = []
        self.refresh()

    def refresh(self) -> None:
        """Read the files again (at a turn's start: a file changed since counts from now)."""
        self.files = find_instructions(self._config_dir, self._project_root, self.workspace)
        self._section = prompt_section(self.files, self.workspace)
        self._noted |= {f.path.parent for f in self.files if f.scope is InstructionScope.PROJECT}

    def section(self) -> str:
        """The ``## Instructions`` part of the system prompt, as read at the turn's start."""
        return self._section

    def touch(self, tool: str, path: object) -> None:
        """``tool`` (a built-in) was called on ``path``: note the instruction files of the
        folders between it and the workspace that the model has not been given yet."""
        if tool not in PATH_TOOLS or not isinstance(path, str | os.PathLike):
            return
        raw = Path(os.fspath(path))
        target = Path(os.path.normpath(raw if raw.is_absolute() else self.workspace / raw))
        if target == self.workspace or self.workspace not in target.parents:
            return
        folder = target if tool == "ls" and target.is_dir() else target.parent
        chain: list[Path] = []
        while folder != self.workspace and self.workspace in folder.parents:
            chain.append(folder)
            folder = folder.parent
        for folder in reversed(chain):  # the outermost first
            if folder in self._noted:
                continue
            self._noted.add(folder)
            found = folder_file(folder)
            if found is not None and (
                item := read_instruction(found, InstructionScope.NESTED, within=self.workspace)
            ):
                self._pending.append(item)

    def remember_noted(self, results: Iterable[str]) -> None:
        """Folders whose file an earlier block result of this session carried already (a
        reopened session): not noted again."""
        for text in results:
            for match in _NOTE.finditer(text):
                self._noted.add(Path(os.path.normpath(self.workspace / match.group(1))))

    def take_notes(self) -> str:
        """The notes for the block that just ended (each nested file once per session)."""
        pending, self._pending = self._pending, []
        return "".join(
            f"\n\n[Vis: {item.label(self.workspace)} holds instructions for the files under "
            f"{item.path.parent.relative_to(self.workspace)}/; follow them there]\n{item.text}"
            for item in pending
        )
