"""``vis mcp login NAME`` and ``vis mcp logout NAME``: OAuth sign-in from a shell."""

from __future__ import annotations

import asyncio
import sys

from vis_core.mcp.config import McpConfig

EXIT_OK, EXIT_FAILED = 0, 1


def _say(text: str) -> None:
    from vis_core.terminal import terminal_text

    print(terminal_text(text), flush=True)  # a server's metadata and errors are its text


def run_login(verb: str, name: str, config: McpConfig, note: str | None = None) -> int:
    """Sign in to (or out of) the server ``name`` of the user and trusted project files;
    ``note``: why an untrusted project's file was skipped."""
    from vis_core.paths import VisPaths

    server = config.get(name)
    if server is None:
        known = ", ".join(s.name for s in config.servers) or "none"
        print(
            f"vis mcp {verb}: no MCP server named {name!r} in mcp.json (servers: {known})"
            + (f"; {note}" if note else ""),
            file=sys.stderr,
        )
        return EXIT_FAILED
    secrets = VisPaths.from_env().secrets_file
    if verb == "logout":
        from vis_core.mcp.oauth_login import sign_out

        _say(sign_out(server, secrets))
        return EXIT_OK
    from vis_core.mcp.oauth_login import SignInFailed, pasted_lines, sign_in

    def show(url: str, opened: bool) -> None:
        where = "Your browser should open this page" if opened else "Open this page"
        _say(f"{where} to sign in to MCP server {server.name!r}:\n\n  {url}\n")
        _say(
            "Waiting for approval. If the browser runs on another machine, paste the address "
            "it was sent to here and press Enter."
        )

    try:
        done = asyncio.run(
            sign_in(server, secrets, show=show, listening=lambda lst: pasted_lines(lst, _say))
        )
    except SignInFailed as exc:
        from vis_core.terminal import terminal_text

        print(terminal_text(f"vis mcp login: {exc}"), file=sys.stderr)
        return EXIT_FAILED
    except KeyboardInterrupt:
        print("vis mcp login: cancelled", file=sys.stderr)
        return EXIT_FAILED
    _say(done)
    return EXIT_OK
