"""A session's skills: listed in its system prompt, read by ``doc``, their files by ``skill_file``.

The list is read when the session opens and again when each turn starts (never between a
turn's requests, so the system prompt stays the same through a turn).
"""

from __future__ import annotations

import itertools
import os
import stat
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import Any

from vis_core.model.activity import (
    Activity,
    ActivityPresentation,
    ActivityText,
    RenderPhase,
    SymbolTag,
)
from vis_core.skills.found import MAX_FILES_SEEN, Skill, find_skills, prompt_section
from vis_core.tools.discovery import Guide
from vis_core.tools.registry import HostTool

MAX_SKILL_FILE_BYTES = 256 * 1024
MAX_LISTED = 200


class SessionSkills:
    """The skills one session offers, as read at its latest turn start."""

    def __init__(self, config_dir: Path, project_root: Path, trusted: Callable[[], bool]) -> None:
        self._config_dir = config_dir
        self._project_root = project_root
        self._trusted = trusted
        self.skills: tuple[Skill, ...] = ()
        self._section = ""
        self.refresh()

    def refresh(self) -> None:
        self.skills = find_skills(self._config_dir, self._project_root, self._trusted())
        self._section = prompt_section(self.skills)

    def section(self) -> str:
        return self._section

    def guides(self) -> list[Guide]:
        return [skill.guide for skill in self.skills]

    def get(self, name: str) -> Skill:
        for skill in self.skills:
            if skill.name == name:
                return skill
        known = ", ".join(s.name for s in self.skills) or "none"
        raise ValueError(f"skill_file: no skill is named {name!r} (skills: {known})")


def _open_beneath(root: Path, parts: tuple[str, ...]) -> int:
    """A descriptor of ``root/parts…`` opened without following any link on the way."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for index, part in enumerate(parts):
            last = index == len(parts) - 1
            flags = os.O_RDONLY | os.O_NOFOLLOW | (os.O_NONBLOCK if last else os.O_DIRECTORY)
            next_fd = os.open(part, flags, dir_fd=fd)
            os.close(fd)
            fd = next_fd
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_skill_file(skill: Skill, path: str | None) -> str:
    """The text of ``path`` in ``skill``'s folder, or (no ``path``) the folder's file list."""
    if path is None or path in ("", "."):
        found = (
            str(p.relative_to(skill.folder))
            for p in skill.folder.rglob("*")
            if p.is_file() and not p.is_symlink()
        )
        files = sorted(itertools.islice(found, MAX_FILES_SEEN))
        shown = files[:MAX_LISTED]
        more = f"\n… and {len(files) - len(shown)} more" if len(files) > len(shown) else ""
        return "\n".join(shown) + more
    pure = PurePosixPath(path)
    if pure.is_absolute() or ".." in pure.parts:
        raise ValueError(
            f"skill_file: {path!r} is not a path inside skill {skill.name!r}; give one relative "
            "to its folder, e.g. 'scripts/run.py' (skill_file(name) lists them)"
        )
    try:
        fd = _open_beneath(skill.folder, pure.parts)
    except OSError as exc:
        raise ValueError(
            f"skill_file: {path!r} of skill {skill.name!r} cannot be read ({exc.strerror}); "
            "links are not followed; skill_file(name) lists its files"
        ) from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):  # a pipe would wait for a writer for ever
        os.close(fd)
        raise ValueError(
            f"skill_file: {path!r} of skill {skill.name!r} is not a regular file (a folder, a "
            "pipe or a device); skill_file(name) lists its files"
        )
    os.set_blocking(fd, True)
    with os.fdopen(fd, "rb") as handle:
        data = handle.read(MAX_SKILL_FILE_BYTES + 1)
    if len(data) > MAX_SKILL_FILE_BYTES:
        raise ValueError(f"skill_file: {path!r} is larger than 256 KiB")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"skill_file: {path!r} is not UTF-8 text") from None


def _render(
    *, phase: str, args: tuple[Any, ...], kwargs: dict[str, Any], result: Any, error: Any
) -> ActivityPresentation | None:
    name = str(args[0] if args else kwargs.get("name", ""))
    path = args[1] if len(args) > 1 else kwargs.get("path")
    where = f"{name}/{path}" if path else name
    if phase == RenderPhase.FAILURE:
        return ActivityPresentation("Read skill file", f"{where}: {error}")
    content = (ActivityText(result),) if isinstance(result, str) else ()
    return ActivityPresentation("Read skill file", where, content)


SKILL_FILE_ACTIVITY = Activity(label="Read skill file", show_start=False, render=_render)


def skill_file_tool(skills: SessionSkills) -> HostTool:
    """``skill_file(name, path=None)``: read a file beside a skill's SKILL.md."""

    def skill_file(name: str, path: str | None = None) -> str:
        """Read a file in a skill's folder (`path` relative to it); without `path`, list them.

        Skills from Vis's config folder lie outside the workspace: read their files here.
        """
        return read_skill_file(skills.get(name), path)

    # not in the tool list: the system prompt's Skills section names it when there are skills
    return HostTool(
        "skill_file", skill_file, SymbolTag.OBSERVATION, SKILL_FILE_ACTIVITY, is_hidden=True
    )
