"""``/mcp``: the slash command over the MCP servers (the TUI opens its screen instead; `vis run`
and ACP print the status, or do what it says)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from vis_core.commands import CommandAction, CommandResult
from vis_core.extension.declarations import SlashCommand
from vis_core.mcp.command import USAGE, run_mcp_command
from vis_core.model.channel import Channel

if TYPE_CHECKING:
    from vis_core.command_host import CommandDeps


def mcp_command(deps: CommandDeps) -> SlashCommand:
    """The built-in ``/mcp`` slash command."""

    async def run(ctx: dict[str, Any]) -> CommandResult:
        args = list(ctx["args"])
        tui = ctx.get("channel") == Channel.TUI
        if tui and len(args) == 2 and args[0] == "login":
            # the TUI signs in on its /mcp screen: the page, a paste box, the outcome
            return CommandResult(True, f"Sign in to {args[1]}", data=args[1], action=OPEN_MCP)
        # the TUI's screen follows the servers as they connect; elsewhere the status is
        # printed once, so it is taken once they connected or failed
        manager = deps.mcp.manager if args or tui else await deps.mcp.settle()
        ok_, title, body = await run_mcp_command(manager, args)
        if not args and not tui:
            manager.status_shown()
        opens = not args and tui
        return CommandResult(ok_, title, body, action=OPEN_MCP if opens else None)

    return SlashCommand(
        "mcp", run, "MCP servers: status, reconnect, enable, exposure, sign in and out", USAGE
    )


OPEN_MCP = CommandAction.OPEN_MCP
