"""``/mcp``: the slash command over the MCP servers (the TUI opens its screen instead)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from vis_core.commands import CommandAction, CommandResult
from vis_core.extension.declarations import SlashCommand
from vis_core.mcp.command import USAGE, run_mcp_command

if TYPE_CHECKING:
    from vis_core.host import Host


def mcp_command(host: Host) -> SlashCommand:
    """The built-in ``/mcp`` slash command of ``host``."""

    async def run(ctx: dict[str, Any]) -> CommandResult:
        ok_, title, body = await run_mcp_command(host.mcp.manager, list(ctx["args"]))
        opens = not ctx["args"] and ctx.get("channel") == "tui"
        return CommandResult(ok_, title, body, action=CommandAction.OPEN_MCP if opens else None)

    return SlashCommand("mcp", run, "MCP servers: status, reconnect, enable, exposure", USAGE)
