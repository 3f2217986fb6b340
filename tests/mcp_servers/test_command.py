"""``/mcp`` outside the TUI: status text, reconnect, enable/disable, exposure saved to file."""

from __future__ import annotations

import json
from pathlib import Path

from vis_core.host import Host, HostOptions
from vis_core.mcp.client import State

from .conftest import http_entry, write_config


async def test_mcp_command_prints_status_and_changes_the_defining_file(
    vis_home: Path, workspace: Path, http_server: str
) -> None:
    path = write_config(
        vis_home / "mcp.json",
        {"alpha": http_entry(http_server), "gone": {"command": "no-such-command-for-vis"}},
        keep="this",
    )
    host = await Host.open(HostOptions(workspace=workspace))
    try:
        host.mcp.start()
        manager = host.mcp.manager
        await manager.wait_all(60)
        status = await host.commands.run(None, "/mcp")
        assert status.ok and status.body is not None
        gone, alpha = status.body.split("\n- ")[0], status.body.split("\n- ")[-1]
        assert gone.startswith("- `gone` failed") and "no such command" in gone  # first
        assert alpha.startswith("`alpha` connected · 10 tools · codemode · user")
        changed = await host.commands.run(None, "/mcp exposure alpha direct")
        assert changed.ok and changed.title == "alpha: exposure direct"
        saved = json.loads(path.read_text())
        assert saved["mcpServers"]["alpha"]["exposure"] == "direct" and saved["keep"] == "this"
        assert "mcp__alpha__echo" in {
            s.definition.name for s in manager.direct_specs("s", path, [].append)
        }
        off = await host.commands.run(None, "/mcp disable alpha")
        assert off.ok and manager.get("alpha").state is State.DISABLED  # type: ignore[union-attr]
        assert json.loads(path.read_text())["mcpServers"]["alpha"]["enabled"] is False
        on = await host.commands.run(None, "/mcp enable alpha")
        assert on.ok and "enabled" not in json.loads(path.read_text())["mcpServers"]["alpha"]
        again = await host.commands.run(None, "/mcp reconnect alpha")
        assert again.ok and again.title == "alpha: connected"
        unknown = await host.commands.run(None, "/mcp reconnect nope")
        assert not unknown.ok and unknown.body == "no MCP server named 'nope'"
        bad = await host.commands.run(None, "/mcp exposure alpha everywhere")
        assert not bad.ok and "must be one of codemode, deferred, direct, hidden" in str(bad.body)
        write_config(path, {})  # the entry was removed by hand meanwhile
        lost = await host.commands.run(None, "/mcp exposure alpha hidden")
        assert not lost.ok and "no longer defines server 'alpha'" in str(lost.body)
        usage = await host.commands.run(None, "/mcp frobnicate")
        assert not usage.ok and usage.title == "Usage"
    finally:
        await host.close()


async def test_without_a_config_the_manager_is_made_only_when_asked(
    vis_home: Path, workspace: Path
) -> None:
    host = await Host.open(HostOptions(workspace=workspace))
    try:
        await host.new_session()
        assert host.mcp.made is None  # no mcp.json, no extension's server: nothing to manage
        status = await host.commands.run(None, "/mcp")
        assert status.ok
        # the file is read at the start and at /reload: the way to a server added meanwhile
        assert status.body == (
            "No MCP servers. Add one with `vis mcp add NAME -- CMD ARGS`, then /reload."
        )
        assert host.mcp.made is not None and host.mcp.made.connections() == []
    finally:
        await host.close()


async def test_a_config_written_after_the_start_is_read_at_reload(
    vis_home: Path, workspace: Path, http_server: str
) -> None:
    host = await Host.open(HostOptions(workspace=workspace))
    try:
        await host.new_session()  # MCP started for the workspace
        assert host.mcp.made is None
        write_config(vis_home / "mcp.json", {"alpha": http_entry(http_server)})
        await host.reload()
        manager = host.mcp.made
        assert manager is not None
        await manager.wait_all(60)
        alpha = manager.get("alpha")
        assert alpha is not None and alpha.state is State.CONNECTED, alpha and alpha.error
    finally:
        await host.close()


async def test_a_config_written_after_the_start_is_read_at_the_reload_command(
    vis_home: Path, workspace: Path, http_server: str
) -> None:
    """/reload reads the extensions in a thread; the MCP servers still start on the loop."""
    host = await Host.open(HostOptions(workspace=workspace))
    try:
        session = await host.new_session()
        write_config(vis_home / "mcp.json", {"alpha": http_entry(http_server)})
        result = await host.commands.run(session, "/reload")
        assert result.ok, result.body
        manager = host.mcp.made
        assert manager is not None
        await manager.wait_all(60)
        alpha = manager.get("alpha")
        assert alpha is not None and alpha.state is State.CONNECTED, alpha and alpha.error
    finally:
        await host.close()


async def test_mcp_disable_of_a_project_server_keeps_the_project_trusted(
    vis_home: Path, workspace: Path, http_server: str
) -> None:
    """``/mcp disable`` writes the trusted project's ``.vis/mcp.json``: the person's own edit,
    so the project stays trusted (its servers and settings load at the next start)."""
    from vis_core.paths import TrustStore, VisPaths

    path = write_config(workspace / ".vis" / "mcp.json", {"alpha": http_entry(http_server)})
    trust = TrustStore(VisPaths.from_env())
    trust.trust(workspace)
    host = await Host.open(HostOptions(workspace=workspace))
    try:
        host.mcp.start()
        await host.mcp.manager.wait_all(60)
        off = await host.commands.run(None, "/mcp disable alpha")
        assert off.ok, off.body
    finally:
        await host.close()
    assert json.loads(path.read_text())["mcpServers"]["alpha"]["enabled"] is False
    assert trust.is_trusted(workspace)


def test_vis_run_mcp_prints_the_status_and_reconnects(
    vis_home: Path, workspace: Path, http_server: str
) -> None:
    """Outside the TUI, ``/mcp`` prints the servers as they are once they connected or failed,
    and ``/mcp reconnect NAME`` reconnects (both exited 2: "needs the app's screen")."""
    from cli_support import vis

    write_config(
        vis_home / "mcp.json",
        {"alpha": http_entry(http_server), "gone": {"command": "no-such-command-for-vis"}},
    )
    status = vis("run", "/mcp", cwd=workspace, env_home=vis_home)
    assert status.returncode == 0, status.stderr
    assert "`alpha` connected · 10 tools · codemode · user" in status.stdout
    assert "`gone` failed" in status.stdout and "no such command" in status.stdout
    assert "warn:" not in status.stderr  # what the status said is not said again
    again = vis("run", "/mcp reconnect alpha", cwd=workspace, env_home=vis_home)
    assert again.returncode == 0 and again.stdout.strip() == "alpha: connected", again.stderr
    unknown = vis("run", "/mcp reconnect nope", cwd=workspace, env_home=vis_home)
    assert unknown.returncode == 1 and "no MCP server named 'nope'" in unknown.stderr
    listed = vis("sessions", cwd=workspace, env_home=vis_home)
    assert listed.stdout.strip() == "", listed.stdout  # a command that only shows leaves none
