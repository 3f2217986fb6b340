"""Find the skills of a workspace: folders holding a ``SKILL.md`` with ``name`` and ``description``.

Where (the first skill of a name wins, in this order):

- a trusted project's ``.vis/skills/``, ``.agents/skills/`` and ``.claude/skills/`` (the
  folders other agents read, so a project's skills work unchanged);
- ``skills/`` in Vis's config folder (the person's own).

A skill is text and files the model reads: nothing in it runs unless the model runs it.
A project's skills still wait for trust, as its other control files do.
"""

from __future__ import annotations

import dataclasses
import itertools
import logging
import re
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from vis_core.extension_host.guides import MAX_GUIDE_BYTES, parse_guide
from vis_core.model.extensions import GuideKind
from vis_core.paths import vis_folders
from vis_core.small_files import front_matter, read_within
from vis_core.tools.discovery import Guide

log = logging.getLogger(__name__)

PROJECT_SKILL_FOLDERS = (".vis/skills", ".agents/skills", ".claude/skills")
SKILL_FILE = "SKILL.md"
MAX_FILES_NAMED = 20
MAX_FILES_SEEN = 500
MAX_DESCRIPTION = 200  # characters of the one line the system prompt shows
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


class SkillSource(StrEnum):
    PROJECT = "project"
    PERSONAL = "personal"


@dataclass(frozen=True)
class Skill:
    """One skill: its name, one-line description, folder and the guide ``doc`` returns."""

    name: str
    description: str
    folder: Path
    source: SkillSource
    guide: Guide

    @property
    def line(self) -> str:
        """What the system prompt lists: the name and the description's first line."""
        first = self.description.strip().splitlines()[0] if self.description.strip() else ""
        if len(first) > MAX_DESCRIPTION:
            first = first[: MAX_DESCRIPTION - 1].rstrip() + "…"
        return f"- `{self.name}`: {first}" if first else f"- `{self.name}`"


def read_skill(folder: Path, source: SkillSource, within: Path | None = None) -> Skill | None:
    """The skill in ``folder`` (None, logged, when its SKILL.md is missing or unreadable);
    ``within`` (a project's skills): SKILL.md must lie in that folder and outside Vis's own
    folders, links followed (see :func:`read_within`): a jailed block can make
    ``.claude/skills/x/SKILL.md`` where the project has no ``.claude/``, as a link to a file
    the jail hides."""
    path = folder / SKILL_FILE
    try:
        hidden = vis_folders() if within is not None else ()
        data = read_within(path, MAX_GUIDE_BYTES + 1, within, hidden)
        if len(data) > MAX_GUIDE_BYTES:
            log.warning("skill %s is larger than %d KiB; skipped", path, MAX_GUIDE_BYTES // 1024)
            return None
        text = data.decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        log.warning("skill %s not read: %s", path, exc)
        return None
    front, body, _ = front_matter(text)  # an unreadable header counts as none
    name = str(front.get("name") or folder.name).strip()
    if not _NAME.fullmatch(name):
        log.warning("skill %s: name %r is not a skill name; the folder's is used", path, name)
        name = folder.name
    description = " ".join(str(front.get("description") or "").split())
    # the description (any YAML form) leads the text doc() returns, as apropos expects
    lead = f"---\ndescription: {description}\n---\n" if description else ""
    guide = parse_guide(name, lead + body, GuideKind.SKILL)
    beside = _files_beside(folder)
    if beside:  # doc(name) says which files the skill brings and how to read them
        listed = ", ".join(f"`{p}`" for p in beside[:MAX_FILES_NAMED])
        more = f" and {len(beside) - MAX_FILES_NAMED} more" if len(beside) > MAX_FILES_NAMED else ""
        footer = f"\nFiles of this skill (read with `skill_file({name!r}, path)`): {listed}{more}\n"
        guide = dataclasses.replace(guide, text=guide.text + footer)
    return Skill(name, description or guide.title, folder, source, guide)


def _files_beside(folder: Path) -> list[str]:
    """The files of a skill's folder other than SKILL.md (links skipped), sorted."""
    try:
        files = (
            p.relative_to(folder).as_posix()
            for p in folder.rglob("*")
            if p.is_file() and not p.is_symlink() and p != folder / SKILL_FILE
        )
        return sorted(itertools.islice(files, MAX_FILES_SEEN))  # a huge folder stays cheap
    except OSError:
        return []


def skill_roots(
    config_dir: Path, project_root: Path, trusted: bool
) -> list[tuple[Path, SkillSource]]:
    """The folders skills are read from, most specific first."""
    roots = (
        [(project_root / p, SkillSource.PROJECT) for p in PROJECT_SKILL_FOLDERS] if trusted else []
    )
    return [*roots, (config_dir / "skills", SkillSource.PERSONAL)]


def find_skills(config_dir: Path, project_root: Path, trusted: bool) -> tuple[Skill, ...]:
    """Every skill found, sorted by name; the first of a name wins."""
    found: dict[str, Skill] = {}
    for root, source in skill_roots(config_dir, project_root, trusted):
        if not root.is_dir():
            continue
        try:
            # a linked folder in a project is not followed: what it points to can change
            # after the person trusted the project (as for .vis/extensions/)
            folders = sorted(
                p
                for p in root.iterdir()
                if p.is_dir()
                and not p.name.startswith(".")
                and not (source is SkillSource.PROJECT and p.is_symlink())
            )
        except OSError as exc:
            log.warning("skills folder %s not read: %s", root, exc)
            continue
        for folder in folders:
            if not (folder / SKILL_FILE).is_file():
                continue
            within = project_root if source is SkillSource.PROJECT else None
            skill = read_skill(folder, source, within)
            if skill is not None:
                found.setdefault(skill.name, skill)
    return tuple(sorted(found.values(), key=lambda s: s.name))


def prompt_section(skills: tuple[Skill, ...]) -> str:
    """The system prompt's ``## Skills`` section (empty without skills)."""
    if not skills:
        return ""
    return (
        "## Skills\nBefore work a skill covers, read it with `doc(name)`; read the files it "
        "names with `skill_file(name, path)`.\n" + "\n".join(skill.line for skill in skills)
    )
