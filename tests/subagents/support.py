"""Helpers of the child-session tests: scripts with session tracks, a host, the events."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cli_support import yaml_text

from vis_core.host import Host, HostOptions

# the scripted model with prices, so that its usage has a cost
PRICES = '[models."scripted/script"]\ninput_price = 3.0\noutput_price = 15.0\n'


def script(
    path: Path, responses: list[dict], sessions: dict[str, list[dict]] | None = None
) -> Path:
    data: Any = {"responses": responses, "sessions": sessions or {}}
    path.write_text(yaml_text(data, sort_keys=False), encoding="utf-8")
    return path


async def open_host(workspace: Path, script_path: Path) -> Host:
    return await Host.open(
        HostOptions(workspace=workspace, provider="scripted", script=script_path)
    )


def write_config(vis_home: Path, text: str) -> None:
    config = vis_home / "config.toml"
    old = config.read_text(encoding="utf-8") if config.exists() else ""
    config.write_text(old + text, encoding="utf-8")
