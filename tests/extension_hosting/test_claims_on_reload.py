"""A newcomer that claims a setting id, tool name or slash command another extension holds:
Reload keeps the holder and fails the newcomer, naming the holder; a fresh start goes by load
order (bundled, packages, the user's folder, the project's; in a folder by file name)."""

from __future__ import annotations

from pathlib import Path

from vis_core.model.extensions import ExtensionStatus

from .harness import install_extension, open_host, write_script

TICKETS = '''
import blockether.vis.extension as vis


def tickets_open() -> list[str]:
    """The open tickets."""
    return []


def sync(args: str) -> str:
    return "synced"


vis.register_extension(vis.Extension(
    name="tickets", description="Tickets.", alias="tickets",
    symbols=[vis.Symbol(tickets_open)],
    settings=[vis.Setting(id="tickets_sync", label="Sync", default=False)],
    slash_commands=[vis.SlashCommand("tickets-sync", sync, "Sync the tickets")],
))
'''
SAME_SETTING = """
import blockether.vis.extension as vis

vis.register_extension(vis.Extension(
    name="dupe", description="Claims the setting id.",
    settings=[vis.Setting(id="tickets_sync", label="Mine", default=True)],
))
"""
SAME_TOOL = '''
import blockether.vis.extension as vis


def tickets_open() -> list[str]:
    """Mine."""
    return ["mine"]


vis.register_extension(vis.Extension(
    name="dupe-tool", description="Claims the tool name.", alias="dupetool",
    symbols=[vis.Symbol(tickets_open)],
))
'''
SAME_COMMAND = """
import blockether.vis.extension as vis


def sync(args: str) -> str:
    return "mine"


vis.register_extension(vis.Extension(
    name="dupe-command", description="Claims the command.",
    slash_commands=[vis.SlashCommand("tickets-sync", sync, "Mine")],
))
"""
NEWCOMERS = {"dup": SAME_SETTING, "dup_tool": SAME_TOOL, "dup_command": SAME_COMMAND}
CLAIMS = {
    "dupe": "setting id 'tickets_sync'",
    "dupe-tool": "tool name 'tickets_open'",
    "dupe-command": "slash command /tickets-sync",
}


def _statuses(host) -> dict[str, tuple[ExtensionStatus, str]]:  # type: ignore[no-untyped-def]
    return {
        e.name: (e.status, "" if e.error is None else str(e.error))
        for e in host.catalog.loaded.extensions
        if e.name in ("tickets", *CLAIMS)
    }


async def test_reload_keeps_what_a_loaded_extension_holds_and_fails_the_newcomer(
    vis_home: Path, workspace: Path, script_path: Path
) -> None:
    install_extension(vis_home, "tickets", TICKETS)
    write_script(script_path, [{"text": "Done."}])
    host = await open_host(workspace, script_path)
    try:
        assert _statuses(host)["tickets"][0] is ExtensionStatus.LOADED
        for name, source in NEWCOMERS.items():  # each sorts before tickets.py
            install_extension(vis_home, name, source)
        summary = await host.reload()
        found = _statuses(host)
        assert found["tickets"] == (ExtensionStatus.LOADED, ""), found
        for name, claim in CLAIMS.items():
            status, error = found[name]
            assert status is ExtensionStatus.FAILED, found
            assert f"{claim} is already" in error and "extension 'tickets'" in error, error
            assert f"- {name}:" in summary
        assert host.settings.owner("tickets_sync").name == "tickets"
    finally:
        await host.close()

    # a fresh start: load order decides, the same on every machine (dup*.py before tickets.py)
    host = await open_host(workspace, script_path)
    try:
        found = _statuses(host)
        assert found["tickets"][0] is ExtensionStatus.FAILED
        assert "already declared by extension 'dupe'" in found["tickets"][1], found
    finally:
        await host.close()
