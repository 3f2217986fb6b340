"""What ``/mcp`` does: server status as text, reconnect, enable, exposure, sign in and out."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the MCP client loads when /mcp runs, not when the command is declared
    from vis_core.mcp.manager import McpManager

USAGE = "/mcp [reconnect|enable|disable|login|logout SERVER | exposure SERVER MODE]"
# a running Vis reads mcp.json at its start and at /reload: a server added from a shell
# meanwhile is listed from then
NO_SERVERS = "No MCP servers. Add one with `vis mcp add NAME -- CMD ARGS`, then /reload."


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
    return "\n".join(rows) or NO_SERVERS


async def run_mcp_command(
    manager: McpManager, args: list[str], say: Callable[[str], None] | None = None
) -> tuple[bool, str, str | None]:
    """(ok, title, body) of ``/mcp ARGS``; ``say`` shows the sign-in page of ``login``
    while it waits (on standard error without it)."""
    from vis_core.mcp.config import parse_exposure
    from vis_core.mcp.edit import EditError
    from vis_core.mcp.oauth_login import SignInFailed

    if not args:
        return True, "MCP servers", status_text(manager)
    verb, rest = args[0], args[1:]
    try:
        if verb == "reconnect" and len(rest) == 1:
            return True, await manager.reconnect(rest[0]), None
        if verb in ("enable", "disable") and len(rest) == 1:
            return True, await manager.set_enabled(rest[0], verb == "enable"), None
        if verb in ("login", "logout") and len(rest) == 1:
            return True, await _sign(manager, verb, rest[0], say), None
        if verb == "exposure" and len(rest) == 2:
            exposure = parse_exposure(rest[1], "exposure")
            return True, await manager.set_exposure(rest[0], exposure), None
    except (LookupError, ValueError, OSError, EditError, SignInFailed) as exc:
        return False, f"/mcp {verb} failed", str(exc)
    return False, "Usage", USAGE


async def _sign(
    manager: McpManager, verb: str, name: str, say: Callable[[str], None] | None
) -> str:
    from vis_core.mcp.oauth_login import login_server, logout_server

    if verb == "logout":
        return await logout_server(manager, name)

    def show(url: str, opened: bool) -> None:
        where = "Your browser should open this page" if opened else "Open this page"
        text = f"{where} to sign in to MCP server {name!r}:\n\n  {url}\n\nWaiting for approval."
        if say is not None:
            say(text)
        else:
            print(text, file=sys.stderr, flush=True)

    return await login_server(manager, name, show=show)
