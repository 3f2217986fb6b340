"""Guides and skills an extension ships as Markdown next to its entry file, for ``apropos``/``doc``.

A folder extension (``name/__init__.py``, also an installed package) may hold:

- ``guides/NAME.md``: a guide, found by ``apropos`` and read whole by ``doc``;
- ``skills/NAME.md`` or ``skills/NAME/SKILL.md``: a skill (a multi-step procedure).

Each is named ``<alias or extension name>.<NAME>`` (e.g. ``git.history``) and titled by its
first ``# `` heading (else its NAME). A leading ``---`` front-matter block is dropped from the
text; its ``description:`` line, when present, becomes the opening that ``apropos`` matches.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path

from vis_core.extension_host.loaded import LoadedExtension, LoadedExtensions
from vis_core.model.extensions import GuideKind
from vis_core.small_files import FRONT_MATTER
from vis_core.tools.discovery import Guide

log = logging.getLogger(__name__)

GUIDE_FOLDERS = (("guides", GuideKind.GUIDE), ("skills", GuideKind.SKILL))
MAX_GUIDE_BYTES = 256 * 1024
_TITLE = re.compile(r"^#\s+(.+?)\s*#*\s*$", re.MULTILINE)


def _files(folder: Path, kind: GuideKind) -> list[tuple[str, Path]]:
    """``(NAME, file)`` pairs of one guides/skills folder, sorted by NAME."""
    found: dict[str, Path] = {}
    for item in folder.iterdir():
        if item.name.startswith((".", "_")):
            continue
        if item.is_file() and item.suffix == ".md":
            found[item.stem] = item
        elif kind is GuideKind.SKILL and item.is_dir() and (item / "SKILL.md").is_file():
            found.setdefault(item.name, item / "SKILL.md")
    return sorted(found.items())


def parse_guide(name: str, text: str, kind: GuideKind = GuideKind.GUIDE) -> Guide:
    """A :class:`Guide` from Markdown: front matter dropped, title from the first ``#``."""
    description = ""
    front = FRONT_MATTER.match(text)
    if front:
        for line in front.group(1).splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "description":
                description = value.strip().strip("\"'")
        text = text[front.end() :]
    body = text.strip() + "\n"
    title_match = _TITLE.search(body)
    title = title_match.group(1) if title_match else name.rsplit(".", 1)[-1].replace("-", " ")
    if description:  # apropos matches the opening paragraph: put the description first
        heading = title_match.group(0) if title_match else ""
        rest = body.replace(heading, "", 1).lstrip("\n") if heading else body
        body = (f"{heading}\n\n" if heading else "") + f"{description}\n\n{rest}"
    return Guide(name=name, title=title, text=body, kind=kind)


def guides_of(extension: LoadedExtension) -> list[Guide]:
    """The guides and skills shipped in ``extension``'s folder (none for a single file)."""
    root = extension.path
    if not root.is_dir():
        return []
    prefix = extension.alias or extension.name
    guides: list[Guide] = []
    for folder_name, kind in GUIDE_FOLDERS:
        folder = root / folder_name
        if not folder.is_dir():
            continue
        for stem, path in _files(folder, kind):
            try:
                if path.stat().st_size > MAX_GUIDE_BYTES:
                    log.warning(
                        "extension %s: %s is larger than %d KiB and was skipped; split it",
                        extension.name,
                        path,
                        MAX_GUIDE_BYTES // 1024,
                    )
                    continue
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                log.warning(
                    "extension %s: cannot read %s (%s); it is not offered to apropos",
                    extension.name,
                    path,
                    exc,
                )
                continue
            guides.append(parse_guide(f"{prefix}.{stem}", text, kind))
    return guides


def extension_guides(extensions: LoadedExtensions) -> list[Guide]:
    """Every enabled extension's guides and skills, in load order."""
    return [guide for ext in extensions.enabled for guide in guides_of(ext)]
