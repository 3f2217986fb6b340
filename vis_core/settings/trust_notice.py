"""What ``vis trust`` says it lets a project do: each kind of file it loads, named."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from vis_core.model.lines import on_one_line
from vis_core.paths import EXTENSIONS_FOLDER, ControlSnapshot
from vis_core.settings.storage import ProjectValues

# project values that loosen what protects the person (said first, with what they do)
LOOSENING = {"jail": (False, "the model's blocks and shell commands run unjailed here")}


def trust_notice(root: Path, snapshot: ControlSnapshot, values: ProjectValues) -> str:
    """The lines ``vis trust`` prints once it trusted ``root``, as ``snapshot`` read it."""
    names = sorted(snapshot.digests)  # a checkout's names and values: each kept on its line
    extensions = [n.removeprefix(EXTENSIONS_FOLDER) for n in names if _extension(n)]
    environment = [n for n in names if n.startswith(".env") and "/" not in n]
    prompts = [n for n in names if n.startswith((".claude/", ".agents/", ".vis/skills/"))]
    settings = {**values.toggles, **values.saved}
    lines = [f"Trusted {root}: Vis loads its files below from now on; its code runs as you."]
    for setting_id, (value, effect) in LOOSENING.items():
        if setting_id in settings and settings[setting_id] == value:
            lines.append(f"  ! {setting_id} = {_shown(value)}: {effect}")
    if extensions:
        lines.append(f"  extensions (outside the jail): {_listed(extensions)}")
    if ".vis/mcp.json" in names:
        lines.append("  MCP servers: .vis/mcp.json")
    if settings:
        shown = [f"{key} = {_shown(value)}" for key, value in sorted(settings.items())]
        lines.append(f"  settings: {_listed(shown)}")
    files = [n for n in ("vis.yml", ".vis/settings.toml", *environment) if n in names]
    if files:
        lines.append(f"  environment and settings files: {_listed(files)}")
    if prompts:
        lines.append(f"  commands and skills: {len(prompts)} files")
    if len(lines) == 1:
        lines[0] = f"Trusted {root}: it has no extensions, MCP servers or settings for Vis yet."
    lines.append("A change to these files takes the trust back until you run `vis trust` again.")
    return "\n".join(lines)


def _extension(name: str) -> bool:
    return name.startswith(EXTENSIONS_FOLDER) and name.endswith(".py")


def _shown(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def _listed(items: list[str]) -> str:
    return ", ".join(on_one_line(item) for item in items)
