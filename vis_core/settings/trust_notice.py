"""What trusting a project lets it do, each kind of file named: said by ``vis trust``, and
at the start in a project not trusted (what was skipped)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from vis_core.model.lines import on_one_line
from vis_core.paths import (
    EXTENSIONS_FOLDER,
    ControlSnapshot,
    control_files,
    lapsed_reason,
    lapsed_remedy,
    trust_command,
)
from vis_core.settings.storage import ProjectValues

# project values that loosen what protects the person (said first, with what they do)
LOOSENING = {"jail": (False, "the model's blocks and shell commands run unjailed here")}


def trust_notice(root: Path, snapshot: ControlSnapshot, values: ProjectValues) -> str:
    """The lines ``vis trust`` prints once it trusted ``root``, as ``snapshot`` read it."""
    settings = {**values.toggles, **values.saved}
    lines = [f"Trusted {root}: Vis loads its files below from now on; its code runs as you."]
    for setting_id, (value, effect) in LOOSENING.items():
        if setting_id in settings and settings[setting_id] == value:
            lines.append(f"  ! {setting_id} = {_shown(value)}: {effect}")
    lines += [f"  ! {line}" for line in not_loaded(snapshot)]
    kinds = _kinds(name for name in snapshot.digests if name not in snapshot.problems)
    if settings:
        shown = [f"{key} = {_shown(value)}" for key, value in sorted(settings.items())]
        kinds.insert(2, f"settings: {_listed(shown)}")
    lines += [f"  {kind}" for kind in kinds]
    if snapshot.links:  # what a link's target holds loads, so a change of it is one to see
        followed = [f"{name} -> {target}" for name, target in sorted(snapshot.links.items())]
        lines.append(f"  links followed (their targets load): {_listed(followed)}")
    if len(lines) == 1:
        lines[0] = f"Trusted {root}: it has no extensions, MCP servers or settings for Vis yet."
    lines.append("A change to these files takes the trust back until you run `vis trust` again.")
    return "\n".join(lines)


def not_loaded(snapshot: ControlSnapshot, prefix: str = "") -> list[str]:
    """Each control file (whose name starts with ``prefix``) Vis would load but did not, as
    ``name: why`` (a link out of the project, a hard link, a file it could not read)."""
    return [
        _listed([f"{name} not loaded: {why}"])
        for name, why in sorted(snapshot.problems.items())
        if name.startswith(prefix)
    ]


def skipped_notice(
    root: Path, *, lapsed: bool = False, settings: Mapping[str, str] | None = None
) -> str | None:
    """What a project not trusted holds that Vis skipped (None: nothing), in one note whether
    it was never trusted or ``lapsed``: trusted once, with control files that changed since
    (said even when none are left: the trust waits for ``vis trust`` again). ``settings``: the
    ids each file sets, listed, by its name (:meth:`SettingsService.skipped_settings`)."""
    kinds = _kinds((path.relative_to(root).as_posix() for path in control_files(root)), settings)
    if not kinds and not lapsed:
        return None
    skipped = "; ".join(kinds) or "extensions, MCP servers, environment and settings"
    reason = _untrusted(root, lapsed)
    if lapsed:
        reason = reason[:1].upper() + reason[1:]  # the sentence starts with it
    return f"{reason}, so Vis skipped its {skipped}; {_run(root, lapsed)} to allow them"


def _untrusted(root: Path, lapsed: bool) -> str:
    """Why Vis does not load the project at ``root``: its trust never given, or ``lapsed``."""
    return lapsed_reason(root) if lapsed else f"project {root} is not trusted"


def _run(root: Path, lapsed: bool) -> str:
    """What to do about it: the ``vis trust`` command, after a review of a lapsed trust."""
    return lapsed_remedy(root) if lapsed else f"run `{trust_command(root)}`"


def skipped_command(
    name: str, root: Path, extensions: list[str], *, lapsed: bool, files: Sequence[str] = ()
) -> str:
    """What the CLI, the app and ``vis acp`` add to "/name is not a command" when Vis skipped
    the project's command ``files`` that define ``/name`` (named, when there are) or its
    ``extensions`` (entry files, one of which may offer ``/name``): why, as the start note
    says it, and the ``vis trust`` command that loads them."""
    skipped = list(files) or extensions
    one = len(skipped) == 1
    what = "command file" if files else "extension"
    return (
        f"Vis skipped the project's {what}{'' if one else 's'} {_listed(skipped)}"
        f"{'' if files else f', which may offer /{name}'}: {_untrusted(root, lapsed)}; "
        f"{_run(root, lapsed)} to allow {'it' if one else 'them'}"
    )


def _kinds(files: Iterable[str], settings: Mapping[str, str] | None = None) -> list[str]:
    """The project's control files by what they do, each kind named with its files (and a
    settings file with the ids ``settings`` lists for it)."""
    names = sorted(files)  # a checkout's names and values: each kept on its line
    extensions = [n.removeprefix(EXTENSIONS_FOLDER) for n in names if _extension(n)]
    environment = [n for n in names if n.startswith(".env") and "/" not in n]
    prompts = [n for n in names if n.startswith((".claude/", ".agents/", ".vis/skills/"))]
    kinds = []
    if extensions:
        kinds.append(f"extensions (outside the jail): {_listed(extensions)}")
    if ".vis/mcp.json" in names:
        kinds.append("MCP servers: .vis/mcp.json")
    files = [n for n in ("vis.yml", ".vis/settings.toml", *environment) if n in names]
    if files:
        sets = settings or {}
        shown = [f"{n} (sets {sets[n]})" if sets.get(n) else n for n in files]
        kinds.append(f"environment and settings files: {_listed(shown)}")
    if prompts:
        count = len(prompts)
        kinds.append(f"commands and skills: {count} file{'' if count == 1 else 's'}")
    return kinds


def _extension(name: str) -> bool:
    return name.startswith(EXTENSIONS_FOLDER) and name.endswith(".py")


def _shown(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def _listed(items: list[str]) -> str:
    return ", ".join(on_one_line(item) for item in items)
