"""What ``/mcp`` does: server status as text, reconnect, enable, exposure (no command types)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the MCP client loads when /mcp runs, not when the command is declared
    from vis_core.mcp.manager import McpManager

USAGE = "/mcp [reconnect|enable|disable SERVER | exposure SERVER MODE]"


def status_text(manager: McpManager) -> str:
    from vis_core.mcp.cli import overridden_lines
    from vis_core.mcp.client import State
    from vis_core.mcp.config import Source
    from vis_core.mcp.manager import attention_first

    rows = []
    for conn in attention_first(manager.connections()):
        server = conn.config
        tools = f"{len(conn.tools)} tools" if conn.state is State.CONNECTED else "-"
        row = (
            f"- `{server.name}` {conn.state.value} · {tools} · {server.exposure.value} · "
            f"{server.source.value}"
            + (f" ({server.origin})" if server.source is Source.EXTENSION else "")
        )
        if conn.error:
            row += f"\n  {conn.error}"
        rows.append(row)
    rows += [f"- {line}" for line in overridden_lines(manager)]
    for problem in manager.config.problems:
        rows.append(f"- invalid: {problem}")
    return "\n".join(rows) or "No MCP servers. Add one with `vis mcp add NAME -- CMD ARGS`."


async def run_mcp_command(manager: McpManager, args: list[str]) -> tuple[bool, str, str | None]:
    """(ok, title, body) of ``/mcp ARGS``."""
    from vis_core.mcp.config import parse_exposure
    from vis_core.mcp.edit import EditError

    if not args:
        return True, "MCP servers", status_text(manager)
    verb, rest = args[0], args[1:]
    try:
        if verb == "reconnect" and len(rest) == 1:
            return True, await manager.reconnect(rest[0]), None
        if verb in ("enable", "disable") and len(rest) == 1:
            return True, await manager.set_enabled(rest[0], verb == "enable"), None
        if verb == "exposure" and len(rest) == 2:
            exposure = parse_exposure(rest[1], "exposure")
            return True, await manager.set_exposure(rest[0], exposure), None
    except (LookupError, ValueError, OSError, EditError) as exc:
        return False, f"/mcp {verb} failed", str(exc)
    return False, "Usage", USAGE
