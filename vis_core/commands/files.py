"""Slash commands from Markdown files: ``.vis/commands/NAME.md`` and Claude Code's
``.claude/commands/NAME.md`` of a trusted project and ``commands/NAME.md`` in Vis's config
folder define ``/NAME``.

The file's front matter may set ``description`` (shown in completion and ``/help``),
``argument-hint`` (the usage) and ``model`` (``provider/model``: the turn runs on it). Its body
is the request sent to the model, with ``$ARGUMENTS`` replaced by everything after the name and
``$1`` … ``$9`` by the arguments one by one (quotes group words). The format is the one other
agents read, so a person's existing command files work unchanged: a ``.claude/commands``
file in a subfolder (``frontend/component.md``) defines ``/component``, as Claude Code reads
it, and a Claude model name (``claude-…``) runs on the ``anthropic`` provider.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from vis_core.paths import vis_folders
from vis_core.small_files import front_matter, read_within

log = logging.getLogger(__name__)

MAX_COMMAND_BYTES = 64 * 1024
_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
_PLACEHOLDER = re.compile(r"\$(ARGUMENTS|[1-9])")


class CommandSource(StrEnum):
    PROJECT = "project"
    PERSONAL = "personal"


CLAUDE_FOLDER = Path(".claude") / "commands"  # Claude Code's command files (subfolders too)


@dataclass(frozen=True)
class CommandFile:
    """One command file as read."""

    name: str
    description: str
    usage: str
    model: str | None
    body: str
    path: Path
    source: CommandSource

    def expand(self, raw: str, args: Sequence[str]) -> str:
        """The body with ``$ARGUMENTS`` (``raw``) and ``$1``…``$9`` (of ``args``, the
        command's words) replaced (missing ones empty)."""

        def value(match: re.Match[str]) -> str:
            key = match.group(1)
            if key == "ARGUMENTS":
                return raw
            index = int(key) - 1
            return args[index] if index < len(args) else ""

        return _PLACEHOLDER.sub(value, self.body)


def read_command_file(
    path: Path, source: CommandSource, within: Path | None = None
) -> tuple[CommandFile | None, str | None]:
    """The command of ``path``, or a problem saying why it is not offered; ``within`` (a
    project's files): the file must lie in that folder and outside Vis's own folders,
    links followed (see :func:`read_within`)."""
    name = path.stem
    where = f"{path}"
    if not _NAME.fullmatch(name):
        return None, (
            f"command file {where} was not loaded: /{name} is not a command name (lowercase "
            "letters, digits, - and _); rename the file"
        )
    try:
        hidden = vis_folders() if within is not None else ()
        data = read_within(path, MAX_COMMAND_BYTES + 1, within, hidden)
        if len(data) > MAX_COMMAND_BYTES:
            return None, f"command file {where} is larger than 64 KiB and was not loaded"
        text = data.decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return None, f"command file {where} was not read: {exc}"
    front, text, problem = front_matter(text)
    if problem is not None:
        return None, f"command file {where}: {problem}"
    body = text.strip()
    if not body:
        return None, f"command file {where} was not loaded: it has no request after its header"
    description = " ".join(str(front.get("description") or "").split())
    if not description:
        description = " ".join(body.splitlines()[0].split())[:80]
    hint = str(front.get("argument-hint") or "").strip()
    if not hint and _PLACEHOLDER.search(body):
        hint = "ARGUMENTS"
    usage = f"/{name} {hint}".strip()
    model = str(front.get("model") or "").strip() or None
    if model is not None and "/" not in model and model.startswith("claude-"):
        model = f"anthropic/{model}"  # a Claude Code file names Anthropic's models bare
    return CommandFile(name, description, usage, model, body, path, source), None


def command_folders(
    config_dir: Path, project_root: Path, trusted: bool
) -> list[tuple[Path, CommandSource]]:
    """Where command files are read from, the project's first (it wins a shared name), and
    of the project's ``.vis/commands`` before Claude Code's ``.claude/commands``."""
    folders = (
        [
            (project_root / ".vis" / "commands", CommandSource.PROJECT),
            (project_root / CLAUDE_FOLDER, CommandSource.PROJECT),
        ]
        if trusted
        else []
    )
    return [*folders, (config_dir / "commands", CommandSource.PERSONAL)]


def project_files_of(names: Iterable[str], name: str) -> list[str]:
    """Which of a project's files ``names`` (relative posix paths) are command files that
    define ``/name`` in a trusted project, as :func:`find_command_files` reads them."""
    if not _NAME.fullmatch(name):  # no file defines it (nor can a name with / match one)
        return []
    vis_file = f".vis/commands/{name}.md"
    claude = f"{CLAUDE_FOLDER.as_posix()}/"
    return [
        n
        for n in names
        if n == vis_file or (n.startswith(claude) and n.rpartition("/")[2] == f"{name}.md")
    ]


def _markdown_files(folder: Path, nested: bool) -> list[Path]:
    """The ``*.md`` files of ``folder``, sorted; ``nested``: its subfolders' too (links to
    folders are not followed)."""
    if not nested:
        return sorted(p for p in folder.glob("*.md") if p.is_file())
    found: list[Path] = []
    for where, dirs, files in os.walk(folder):
        dirs.sort()
        found += [Path(where) / f for f in sorted(files) if f.endswith(".md")]
    return [p for p in found if p.is_file()]


def find_command_files(
    config_dir: Path, project_root: Path, trusted: bool
) -> tuple[list[CommandFile], list[str]]:
    """Every command file found (the first of a name wins) and the problems met."""
    found: dict[str, CommandFile] = {}
    problems: list[str] = []
    for folder, source in command_folders(config_dir, project_root, trusted):
        if not folder.is_dir():
            continue
        try:
            paths = _markdown_files(folder, nested=folder == project_root / CLAUDE_FOLDER)
        except OSError as exc:
            problems.append(f"command folder {folder} was not read: {exc}")
            continue
        for path in paths:
            within = project_root if source is CommandSource.PROJECT else None
            command, problem = read_command_file(path, source, within)
            if problem is not None:
                problems.append(problem)
            elif command is not None:
                first = found.setdefault(command.name, command)
                if first is not command and first.source == command.source:
                    problems.append(
                        f"command file {path} was not loaded: {first.path} defines "
                        f"/{command.name} too and wins; rename one of them"
                    )
    return list(found.values()), problems
