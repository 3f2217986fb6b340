"""``/mcp`` sign-in and sign-out through Pilot, against the OAuth-protected test server."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp_servers.oauth_fixture import run_oauth_server
from textual.app import App

from vis_core.frontend.panels import McpPanel
from vis_core.host import Host, HostOptions
from vis_core.mcp.client import State
from vis_tui.screens.mcp import McpScreen

from .support import on_top, until


class McpApp(App[None]):
    """A real Host over ``$VIS_HOME/mcp.json``, its servers settled, then ``/mcp``."""

    def __init__(self, workspace: Path) -> None:
        super().__init__()
        self.workspace = workspace
        self.host: Host | None = None

    async def on_mount(self) -> None:
        self.host = await Host.open(HostOptions(workspace=self.workspace))
        self.host.mcp.start()
        await self.host.mcp.manager.wait_all(60)
        await self.push_screen(McpScreen(McpPanel(self.host.mcp.manager)))

    async def on_unmount(self) -> None:
        if self.host is not None:
            await self.host.close()


def _note(app: App[Any]) -> str:
    return str(app.screen.query_one("#mcp-note").render())


async def test_sign_in_and_out_from_the_mcp_screen(
    vis_home: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DISPLAY", "")  # no browser here: the page is shown to open by hand
    monkeypatch.setenv("WAYLAND_DISPLAY", "")
    with run_oauth_server() as base:
        (vis_home / "mcp.json").write_text(
            json.dumps({"mcpServers": {"locked": {"url": f"{base}/mcp"}}})
        )
        app = McpApp(workspace)
        async with app.run_test(size=(140, 40)) as pilot:
            await on_top(pilot, McpScreen, 60)
            assert app.host is not None
            conn = app.host.mcp.manager.get("locked")
            assert conn is not None and conn.state is State.NEEDS_SIGN_IN
            details = str(app.screen.query_one("#mcp-details").render())
            assert 'select "Sign in" in /mcp' in details
            await pilot.press("s")
            await until(pilot, lambda: "/authorize?" in _note(app), 60)
            assert "Open this page to sign in to locked" in _note(app)
            url = re.search(r"(http://\S+/authorize\?\S+)", _note(app).replace("\n", " "))
            assert url is not None
            async with httpx2.AsyncClient() as client:  # the person, in a browser elsewhere
                sent_to = (await client.get(url.group(1))).headers["location"]
            paste = app.screen.query_one("#mcp-paste")
            assert paste.display
            paste.focus()
            paste.value = sent_to  # type: ignore[attr-defined]
            await pilot.press("enter")
            await until(pilot, lambda: "Signed in to MCP server 'locked'" in _note(app), 60)
            await until(pilot, lambda: conn.state is State.CONNECTED, 60)
            assert not paste.display
            app.screen.query_one("OptionList").focus()
            await pilot.press("o")
            await until(pilot, lambda: "Signed out of MCP server 'locked'" in _note(app), 60)
            await until(pilot, lambda: conn.state is State.NEEDS_SIGN_IN, 60)
            # `/mcp login locked` opens /mcp signing in; Esc closes it and stops listening
            await pilot.press("escape")
            await app.push_screen(McpScreen(McpPanel(app.host.mcp.manager), sign_in="locked"))
            await until(pilot, lambda: "/authorize?" in _note(app), 60)
            redirect = re.search(r"redirect_uri=http%3A%2F%2F127\.0\.0\.1%3A(\d+)", _note(app))
            assert redirect is not None
            await pilot.press("escape")
            await until(pilot, lambda: not isinstance(app.screen, McpScreen), 60)
            async with httpx2.AsyncClient() as client:
                with pytest.raises(httpx2.ConnectError):
                    await client.get(f"http://127.0.0.1:{redirect.group(1)}/callback?code=x")
