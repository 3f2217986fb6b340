"""``/mcp`` through Pilot: servers attention first, details, exposure and enable saved to file."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from textual.app import App

from vis_core.frontend.panels import McpPanel
from vis_core.host import Host, HostOptions
from vis_core.mcp.client import State
from vis_tui.screens.mcp import McpScreen

from .support import on_top, until


class McpApp(App[None]):
    """A real Host over ``$VIS_HOME/mcp.json``, its servers connected, then ``/mcp``."""

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


def _details(app: App[Any]) -> str:
    return str(app.screen.query_one("#mcp-details").render())


async def test_mcp_screen_shows_attention_first_and_saves_changes(
    vis_home: Path, workspace: Path, http_server: str
) -> None:
    """A server's URL is shown with its credentials masked: a user and password, a key in
    the query (the screen showed them as mcp.json has them)."""
    config = vis_home / "mcp.json"
    signed = http_server.replace("://", "://alice:hunter2-secret@", 1)
    config.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "alpha": {"url": f"{signed}/mcp?api_key=key-4567-secret&v=2"},
                    "broken": {"command": "sh", "args": ["-c", "echo API_URL is unset >&2"]},
                    "bad": {"type": "sse", "url": "http://localhost/sse"},
                },
                "keep": "this",
            }
        )
    )
    app = McpApp(workspace)
    async with app.run_test(size=(120, 40)) as pilot:
        await on_top(pilot, McpScreen, 60)
        screen = app.screen
        assert isinstance(screen, McpScreen)
        listing = screen.query_one("OptionList")
        rows = [str(listing.get_option_at_index(i).prompt) for i in range(listing.option_count)]
        assert rows[0].startswith("! broken") and "failed" in rows[0]
        assert "alpha" in rows[1] and "connected" in rows[1] and "10 tools" in rows[1]
        assert "API_URL is unset" in _details(app)  # the stderr tail of the failed server
        assert "invalid: server 'bad'" in str(screen.query_one("#mcp-problems").render())
        await pilot.press("down")
        details = _details(app)
        assert "mcp__alpha__weather" in details and "codemode" in details
        masked = http_server.replace("://", "://***@", 1)
        assert f"http:{masked}/mcp?api_key=***&v=2" in "".join(details.split()), details
        assert "hunter2" not in details and "4567" not in details, details
        await pilot.press("x")
        await until(
            pilot, lambda: "exposure deferred" in str(screen.query_one("#mcp-note").render()), 60
        )
        saved = json.loads(config.read_text())
        assert saved["mcpServers"]["alpha"]["exposure"] == "deferred" and saved["keep"] == "this"
        await pilot.press("e")
        manager = app.host.mcp.manager if app.host else None
        assert manager is not None
        await until(pilot, lambda: manager.get("alpha").state is State.DISABLED, 60)
        assert json.loads(config.read_text())["mcpServers"]["alpha"]["enabled"] is False
        await pilot.press("e")
        await until(pilot, lambda: manager.get("alpha").state is State.CONNECTED, 60)
        assert "enabled" not in json.loads(config.read_text())["mcpServers"]["alpha"]
        await pilot.press("r")
        await until(
            pilot, lambda: "alpha: connected" in str(screen.query_one("#mcp-note").render()), 60
        )
        await pilot.press("escape")
        await asyncio.sleep(0)


GOOD_SERVER = """
from mcp.server.mcpserver import MCPServer

app = MCPServer("good")


@app.tool()
def add(a: int, b: int) -> int:
    return a + b


app.run()
"""


async def test_mcp_screen_reads_well_at_80_columns(
    vis_home: Path, workspace: Path, tmp_path: Path
) -> None:
    import sys

    server = tmp_path / "a_server_in_a_rather_deep_folder" / "good_server.py"
    server.parent.mkdir()
    server.write_text(GOOD_SERVER)
    (vis_home / "mcp.json").write_text(
        json.dumps(
            {
                "mcpServers": {
                    "codemode-tools": {"command": sys.executable, "args": [str(server)]},
                    "crashstart": {"command": sys.executable, "args": ["-c", "exit(3)"]},
                    "missing-command-server": {"command": "/nonexistent/bin/not-here"},
                }
            }
        )
    )
    app = McpApp(workspace)
    async with app.run_test(size=(80, 30)) as pilot:
        screen = await on_top(pilot, McpScreen, 60)
        listing = screen.query_one("OptionList")
        await pilot.pause()
        lines = [strip.text.rstrip() for strip in listing.render_lines(listing.region.reset_offset)]
        await pilot.press("down", "down")
        await pilot.pause()
        details = screen.query_one("#mcp-details")
        width = details.content_region.width
        shown = _details(app).splitlines()
    rows = [line.strip(" ▊▎▔▁") for line in lines if line.strip(" ▊▎▔▁")]
    assert len(rows) == 3, rows  # one line each
    assert rows[0].startswith("! crashstart") and "failed" in rows[0]
    assert rows[1].startswith("! missing-") and "… failed" in rows[1]
    assert rows[2].startswith("codemode-t… connected") and rows[2].endswith("1 tool")
    path = [line for line in shown if line.startswith("stdio: ")][0]
    following = shown[shown.index(path) :]
    wrapped = following[: next(n for n, text in enumerate(following) if text.endswith(".py")) + 1]
    assert str(server) in "".join(wrapped).replace(" ", "") and path.endswith("/")
    assert all(len(line) <= width for line in wrapped)  # broken after a / or at a space


async def test_a_server_that_fails_at_the_start_is_said_once_without_a_turn(
    workspace: Path, vis_home: Path, tmp_path: Path
) -> None:
    """A server that failed at the start was said only when the first turn began: a person
    who opened Vis and read its screen saw nothing wrong until they asked for something
    (spec 001: failed connections are reported once after startup). It is said once the
    servers settle, and the turn after does not say it again."""
    from pilot_keys import type_keys

    from .support import started, vis_app, write_script

    servers = {"exits": {"command": "sh", "args": ["-c", "exit 3"]}}
    (vis_home / "mcp.json").write_text(json.dumps({"mcpServers": servers}))
    app = vis_app(workspace, write_script(tmp_path, [{"text": "answered"}]))
    said = "MCP server 'exits' failed"

    def text() -> str:
        return "\n".join(str(note.render()) for note in app.main.transcript.query(".warning"))

    async with app.run_test(size=(100, 40)) as pilot:
        await started(app, pilot)
        await until(pilot, lambda: said in text(), seen=text)
        await type_keys(pilot, *"go", "enter")
        await until(pilot, lambda: app.main.transcript.last_answer == "answered")
        await pilot.pause()
        assert text().count(said) == 1, text()
        assert not [n for n in app._notifications if said in n.message]  # no toast of it


DECLARING = """
import vis_core.extension as vis

vis.mcp_server("shadowed", {"url": URL})
vis.register_extension(vis.Extension(name="declarer", description="Declares a server."))
"""


async def test_mcp_screen_lists_an_extension_server_a_file_entry_overrides(
    vis_home: Path, workspace: Path, http_server: str
) -> None:
    """`vis mcp list` said 'shadowed  overridden  extension (declarer): …' while the screen
    listed only the file's entry (spec 001: /mcp lists the overridden registration)."""
    url = f"{http_server}/mcp"
    (vis_home / "extensions").mkdir()
    (vis_home / "extensions" / "declarer.py").write_text(DECLARING.replace("URL", repr(url)))
    config = vis_home / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"shadowed": {"url": url}}}))
    app = McpApp(workspace)
    async with app.run_test(size=(160, 40)) as pilot:
        await on_top(pilot, McpScreen, 60)
        screen = app.screen
        listing = screen.query_one("OptionList")
        assert listing.option_count == 1  # the file's entry, which wins
        shown = screen.query_one("#mcp-overridden")
        assert shown.display
        assert str(shown.render()) == (
            f"shadowed  overridden  extension (declarer): the user ({config}) entry of the "
            "same name wins"
        )
        await pilot.press("escape")
        await asyncio.sleep(0)


async def test_a_failed_servers_stderr_is_shown_with_its_secrets_redacted(
    vis_home: Path, workspace: Path, monkeypatch: Any
) -> None:
    """A server given ``API_TOKEN`` (written in mcp.json) and ``DB_PASSWORD`` (``${LEAK_TOKEN}``)
    that printed both to stderr and exited: ``vis mcp list`` and ``vis run`` said [REDACTED],
    but the notice after the start ("its stderr ends: …") and the stderr lines of ``/mcp``
    showed both values."""
    from pilot_keys import type_keys

    from .support import started, vis_app

    monkeypatch.setenv("LEAK_TOKEN", "from-the-environment-8765")
    leaky = {
        "command": "sh",
        "args": ["-c", 'echo "token $API_TOKEN db $DB_PASSWORD" >&2; exit 2'],
        "env": {"API_TOKEN": "literal-secret-4321", "DB_PASSWORD": "${LEAK_TOKEN}"},
    }
    (vis_home / "mcp.json").write_text(json.dumps({"mcpServers": {"leaky": leaky}}))
    app = vis_app(workspace)

    def notes() -> str:
        return "\n".join(str(note.render()) for note in app.main.transcript.query(".warning"))

    async with app.run_test(size=(120, 40)) as pilot:
        await started(app, pilot)
        await until(pilot, lambda: "MCP server 'leaky' failed" in notes(), seen=notes)
        said = notes()
        await type_keys(pilot, *"/mcp", "enter")
        await on_top(pilot, McpScreen, 60)
        details = _details(app)
    for shown in (said, details):
        assert "token [REDACTED] db [REDACTED]" in shown, shown
        assert "literal-secret-4321" not in shown and "from-the-environment" not in shown


async def test_an_unreadable_mcp_json_is_said_without_the_advice_to_add_a_server(
    vis_home: Path, workspace: Path
) -> None:
    """The list said "No MCP servers. Add one with `vis mcp add …`" above the file's error,
    and `vis mcp add` refuses a file it cannot read."""
    (vis_home / "mcp.json").write_text('{"mcpServers": {"x": {"command": "a",}}}')
    app = McpApp(workspace)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await on_top(pilot, McpScreen, 60)
        assert screen.query_one("OptionList").option_count == 0
        problems = str(screen.query_one("#mcp-problems").render())
        assert problems.startswith(f"invalid: {vis_home / 'mcp.json'}: not valid JSON")
