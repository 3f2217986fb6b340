"""Find the instruction files of a workspace: personal, project root down to the workspace.

A folder's instruction file is its ``AGENTS.md``; a folder without one offers its
``CLAUDE.md``, else its ``GEMINI.md`` (what other agents read), so a project's existing file
works unchanged. The personal file is ``AGENTS.md`` in Vis's config folder.

Trust: a project's instruction file is text, not code. It is read whether or not the project
is trusted, as other agents do: it can steer the model, but so can any file the model reads.
One another user owns (the file, what it links to, or its folder) is not read: whoever can
write a shared folder would steer the model (see :func:`vis_core.paths.your_owners`).
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from vis_core.paths import not_yours, vis_folders
from vis_core.providers.common import estimate_tokens
from vis_core.small_files import read_within

log = logging.getLogger(__name__)

INSTRUCTION_NAMES = ("AGENTS.md", "CLAUDE.md", "GEMINI.md")
MAX_INSTRUCTION_BYTES = 32 * 1024  # a larger file is cut here, with a note saying so


class InstructionScope(StrEnum):
    PERSONAL = "personal"  # AGENTS.md in Vis's config folder
    PROJECT = "project"  # the project root and the folders down to the workspace
    NESTED = "nested"  # a folder below the workspace, noted when the model works there


@dataclass(frozen=True)
class InstructionFile:
    """One instruction file as read: where, which scope, its text (cut to the limit)."""

    path: Path
    scope: InstructionScope
    text: str

    @property
    def tokens(self) -> int:
        return estimate_tokens(len(self.text))

    def label(self, workspace: Path) -> str:
        """The path as a person reads it: relative to the workspace when inside it."""
        try:
            return str(self.path.relative_to(workspace))
        except ValueError:
            return str(self.path)


def folder_file(folder: Path) -> Path | None:
    """The instruction file of ``folder``: AGENTS.md, else CLAUDE.md, else GEMINI.md."""
    for name in INSTRUCTION_NAMES:
        candidate = folder / name
        if candidate.is_file():
            return candidate
    return None


def read_instruction(
    path: Path, scope: InstructionScope, within: Path | None = None
) -> InstructionFile | None:
    """The file's text, cut at :data:`MAX_INSTRUCTION_BYTES`; None (logged) if unreadable.

    ``within`` (a project's files): the file read must lie in that folder and outside Vis's
    own folders, links followed (``CLAUDE.md -> AGENTS.md`` works). A checkout's
    ``AGENTS.md -> ~/.ssh/id_rsa``, or a link a jailed block made to Vis's ``secrets`` (the
    jail masks VIS_HOME, also inside the workspace), would go to the model server as text
    (see :func:`read_within`); nor one another user owns (:func:`foreign_owner`)."""
    foreign = foreign_owner(path) if within is not None else None
    if foreign is not None:
        log.warning("instruction file %s not read: %s", path, foreign)
        return None
    try:
        hidden = vis_folders() if within is not None else ()
        data = read_within(path, MAX_INSTRUCTION_BYTES + 1, within, hidden)
    except OSError as exc:
        log.warning("instruction file %s not read: %s", path, exc)
        return None
    text = data[:MAX_INSTRUCTION_BYTES].decode("utf-8", errors="replace").strip()
    if len(data) > MAX_INSTRUCTION_BYTES:
        text += f"\n\n[Vis: {path.name} was cut at {MAX_INSTRUCTION_BYTES // 1024} KiB.]"
    return InstructionFile(path, scope, text) if text else None


def foreign_owner(path: Path) -> str | None:
    """Why the project's instruction file ``path`` is not read: another user owns its folder,
    it, or the file it links to (None: it is read)."""
    for item in (path.parent, path, Path(os.path.realpath(path))):
        foreign = not_yours(item)
        if foreign is not None:
            return f"{item} is {foreign}"
    return None


def foreign_instructions(project_root: Path, workspace: Path) -> list[str]:
    """The project's instruction files :func:`find_instructions` does not read because
    another user owns them, each with why (said once at the start)."""
    files = (folder_file(folder) for folder in project_folders(project_root, workspace))
    return [why for path in files if path is not None and (why := foreign_owner(path))]


def project_folders(project_root: Path, workspace: Path) -> list[Path]:
    """The project root and each folder down to the workspace (the workspace alone when it
    is not inside the project root)."""
    root, here = project_root.resolve(), workspace.resolve()
    if here != root and root not in here.parents:
        return [here]
    folders = [here]
    while folders[-1] != root:
        folders.append(folders[-1].parent)
    return folders[::-1]


def find_instructions(
    config_dir: Path, project_root: Path, workspace: Path
) -> tuple[InstructionFile, ...]:
    """The personal instruction file, then the project's, root first."""
    found: list[InstructionFile] = []
    personal = config_dir / "AGENTS.md"
    if personal.is_file() and (item := read_instruction(personal, InstructionScope.PERSONAL)):
        found.append(item)
    folders = project_folders(project_root, workspace)
    for folder in folders:
        path = folder_file(folder)
        if path is not None and (
            item := read_instruction(path, InstructionScope.PROJECT, within=folders[0])
        ):
            found.append(item)
    return tuple(found)


def prompt_section(files: tuple[InstructionFile, ...], workspace: Path) -> str:
    """The system prompt's ``## Instructions`` section (empty without files)."""
    if not files:
        return ""
    parts = [
        "## Instructions\nThe person's and the project's instructions for working here "
        "(later ones are more specific)."
    ]
    for item in files:
        where = "personal" if item.scope is InstructionScope.PERSONAL else item.label(workspace)
        parts.append(f"### {where}\n{item.text}")
    return "\n\n".join(parts)
