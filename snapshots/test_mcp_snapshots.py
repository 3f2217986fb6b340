"""SVG snapshot of ``/mcp``: a failed server first with its error and stderr, then the others."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from textual.app import App
from textual.pilot import Pilot
from warm_servers import command

from vis_core.frontend.panels import McpPanel
from vis_core.host import Host, HostOptions
from vis_core.paths import VisPaths
from vis_tui.screens.mcp import McpScreen

WORKSPACE = Path("/tmp/vis-snapshots/project")
SERVER = Path(__file__).parents[1] / "tests" / "mcp_servers" / "server_app.py"


class McpSnapshotApp(App[None]):
    """A real Host whose mcp.json has a working, a failing, a disabled and an invalid server."""

    def __init__(self) -> None:
        super().__init__()
        self.host: Host | None = None
        self.ready = asyncio.Event()

    async def on_mount(self) -> None:
        program, *args = command(SERVER, "stdio")  # started warm
        servers = {
            "fixture": {"command": program, "args": args},
            "notes": {"command": "sh", "args": ["-c", "exit 0"], "exposure": "direct"},
            "broken": {"command": "sh", "args": ["-c", "echo 'API_URL is not set' >&2; exit 4"]},
            "paused": {"command": "unused", "enabled": False},
            "legacy": {"type": "sse", "url": "http://localhost:9000/sse"},
        }
        VisPaths.from_env().mcp_file.write_text(json.dumps({"mcpServers": servers}))
        self.host = await Host.open(HostOptions(workspace=WORKSPACE))
        self.host.mcp.start()
        await self.host.mcp.manager.wait_all(60)
        await self.push_screen(McpScreen(McpPanel(self.host.mcp.manager)))
        self.ready.set()

    async def on_unmount(self) -> None:
        if self.host is not None:
            await self.host.close()


def test_mcp_servers_screen(snap_compare: Any) -> None:
    async def run(pilot: Pilot[Any]) -> None:
        app = pilot.app
        assert isinstance(app, McpSnapshotApp)
        await asyncio.wait_for(app.ready.wait(), 240)  # servers start slowly under load
        await pilot.pause()

    assert snap_compare(McpSnapshotApp(), terminal_size=(130, 34), run_before=run)
