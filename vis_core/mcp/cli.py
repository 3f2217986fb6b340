"""``vis mcp add``, ``remove``, ``list``, ``login`` and ``logout``: the JSON files from a shell.

Their arguments are declared in :mod:`vis_core.mcp.arguments`, which every ``vis`` start reads.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Callable, Iterator
from contextlib import AbstractAsyncContextManager, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from vis_core.mcp.config import (
    NAME_PATTERN,
    SSE_HINT,
    McpConfig,
    ServerConfig,
    Source,
    load_config,
    parse_entry,
    project_file,
)
from vis_core.mcp.edit import EditError, add_server, remove_server
from vis_core.model.exit_status import EXIT_FAILED, EXIT_OK, EXIT_USAGE

if TYPE_CHECKING:
    from vis_core.mcp.client import ServerConnection
    from vis_core.mcp.manager import McpManager

# the servers a session in a workspace would have, while the listing runs (``vis_core.cli``)
SessionConfig = Callable[[Path], AbstractAsyncContextManager[McpConfig]]
LIST_WAIT = 30.0  # seconds `vis mcp list` waits for the slowest server beyond its timeout


def _pairs(items: list[str], option: str) -> dict[str, str]:
    pairs: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"{option} takes KEY=VALUE, got {item!r}")
        pairs[key.strip()] = value
    return pairs


def _target(args: argparse.Namespace, workspace: Path) -> Path:
    from vis_core.paths import VisPaths, find_project_root

    if args.local:
        return project_file(find_project_root(workspace))
    return VisPaths.from_env().mcp_file


@contextmanager
def _editing(args: argparse.Namespace, workspace: Path) -> Iterator[Path]:
    """The servers' file ``args`` name, to edit; the person's own edit of a trusted project's
    ``.vis/mcp.json`` keeps the project trusted (as ``vis settings set --scope project``)."""
    from vis_core.paths import TrustStore, VisPaths, find_project_root

    path = _target(args, workspace)
    if not args.local:
        yield path
        return
    root = find_project_root(workspace)
    with TrustStore(VisPaths.from_env()).keeping(root, path.relative_to(root).as_posix()):
        yield path


def _entry(args: argparse.Namespace) -> dict[str, object]:
    command = list(args.server_command)
    if args.url and command:
        raise ValueError("give either --url URL or -- CMD ARGS, not both")
    if args.url:
        if args.env or args.cwd:
            raise ValueError(
                "--env and --cwd are for stdio servers; use --header for an HTTP server"
            )
        if not args.url.startswith(("http://", "https://")):
            raise ValueError(f"--url must be an http:// or https:// address, not {args.url!r}")
        if args.url.rstrip("/").endswith("/sse"):
            print(f"vis mcp: note: {SSE_HINT}", file=sys.stderr)
        entry: dict[str, object] = {"url": args.url}
        headers = _pairs(args.header, "--header")
        if args.bearer_token_env_var:
            if any(key.lower() == "authorization" for key in headers):
                raise ValueError(
                    "give either --header Authorization=… or --bearer-token-env-var, not both"
                )
            headers["Authorization"] = f"Bearer ${{{args.bearer_token_env_var}}}"
        if headers:
            entry["headers"] = headers
        return entry
    if args.header or args.bearer_token_env_var:
        raise ValueError("--header and --bearer-token-env-var need --url")
    if not command:
        raise ValueError(
            "give the server's command after --, e.g. vis mcp add fs -- npx -y "
            "@modelcontextprotocol/server-filesystem . (or --url URL)"
        )
    entry = {"command": command[0], "args": command[1:]}
    env = _pairs(args.env, "--env")
    if env:
        entry["env"] = env
    if args.cwd:
        entry["cwd"] = args.cwd
    return entry


def _relative_arguments_note(args: argparse.Namespace, entry: dict[str, object]) -> str | None:
    """What a user server's relative path arguments will name: such a server starts in Vis's
    private folder, not where ``vis mcp add`` ran (a project's own servers start in the
    workspace), so ``server-filesystem .`` would serve an empty folder."""
    if args.local or "command" not in entry or "cwd" in entry:
        return None
    arguments = entry.get("args")
    relative = [
        a
        for a in (arguments if isinstance(arguments, list) else [])
        if isinstance(a, str) and (a in (".", "..") or a.startswith(("./", "../")))
    ]
    if not relative:
        return None
    return (
        f"note: your own servers start in Vis's private folder, not here, so {relative[0]!r} "
        "names that folder; to start this one in the workspace Vis runs in, add --cwd . "
        "(relative to the workspace), or give absolute paths"
    )


def run_mcp(
    args: argparse.Namespace,
    workspace: Path,
    session_config: SessionConfig | None = None,
) -> int:
    """``session_config`` gives the servers a session here would have (the files' and the
    enabled extensions' declarations) while the listing runs; without it ``list`` reads the
    files only."""
    if args.mcp_command == "list":
        return asyncio.run(_list(workspace, session_config))
    if args.mcp_command in ("login", "logout"):
        return _login(args.mcp_command, args.name, *workspace_config(workspace))
    if not NAME_PATTERN.fullmatch(args.name):
        print(
            f"vis mcp: server names may contain only letters, digits, '_' and '-': {args.name!r}",
            file=sys.stderr,
        )
        return EXIT_USAGE
    if args.mcp_command == "add":
        try:
            entry = _entry(args)
            source = Source.PROJECT if args.local else Source.USER
            parse_entry(args.name, entry, source=source, origin="vis mcp add")  # as Vis reads it
        except ValueError as exc:
            print(f"vis mcp add: {exc}", file=sys.stderr)
            return EXIT_USAGE
        try:
            with _editing(args, workspace) as path:
                add_server(path, args.name, entry)
        except EditError as exc:
            print(f"vis mcp add: {exc}", file=sys.stderr)
            return EXIT_FAILED
        print(
            f"Added MCP server {args.name!r} to {path}. Check it with `vis mcp list`; "
            "a running Vis starts it at /reload."
        )
        if note := _relative_arguments_note(args, entry):
            print(f"vis mcp add: {note}", file=sys.stderr)
        return EXIT_OK
    try:
        with _editing(args, workspace) as path:
            removed = remove_server(path, args.name)
    except EditError as exc:
        print(f"vis mcp remove: {exc}", file=sys.stderr)
        return EXIT_FAILED
    print(f"Removed MCP server {removed!r} from {path}.")
    return EXIT_OK


def _say(text: str) -> None:
    from vis_core.terminal import terminal_text

    print(terminal_text(text), flush=True)  # a server's metadata and errors are its text


def _login(verb: str, name: str, config: McpConfig, note: str | None = None) -> int:
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


def workspace_config(workspace: Path) -> tuple[McpConfig, str | None]:
    """The workspace's servers and a note when an untrusted project's file was skipped."""
    from vis_core.paths import TrustStore, VisPaths, find_project_root, trust_command

    paths = VisPaths.from_env()
    root = find_project_root(workspace)
    snapshot, trusted = TrustStore(paths).verified(root)  # what is checked is what is read
    note = None
    if not trusted and project_file(root).is_file():
        note = (
            f"{project_file(root)} was skipped: the project is not trusted; "
            f"run `{trust_command(root)}` to use its servers"
        )
    return load_config(paths.mcp_file, root, trusted=trusted, snapshot=snapshot), note


async def _list(workspace: Path, session_config: SessionConfig | None) -> int:
    config, note = workspace_config(workspace)
    if session_config is None:
        return await _list_servers(workspace, config, note)
    async with session_config(workspace) as config:  # with what extensions declare, as /mcp
        return await _list_servers(workspace, config, note)


async def _list_servers(workspace: Path, config: McpConfig, note: str | None) -> int:
    from vis_core.mcp.client import State
    from vis_core.mcp.manager import McpManager
    from vis_core.paths import VisPaths

    if note:
        print(f"note: {note}")
    manager = McpManager(config, workspace=workspace, paths=VisPaths.from_env())
    if not config.servers and not config.problems:
        print("No MCP servers are configured. Add one with `vis mcp add NAME -- CMD ARGS`.")
        return EXIT_OK
    manager.start()
    starting = [s for s in config.servers if s.enabled]
    if starting and sys.stderr.isatty():  # a server may take its whole timeout: say it waits
        longest = max(s.timeout for s in starting)
        print(
            f"Connecting to {len(starting)} server{'s' if len(starting) != 1 else ''} "
            f"(a slow one up to {longest:g} s)…",
            file=sys.stderr,
            flush=True,
        )
    await manager.wait_all(max((s.timeout for s in config.servers), default=0) + LIST_WAIT)
    failed = bool(config.problems)
    try:
        for conn in manager.connections():
            server = conn.config
            tools = len(conn.tools)
            state = conn.state
            if server.enabled and state is not State.CONNECTED:
                failed = True
            count = f"{tools} tool{'s' if tools != 1 else ''}" if state is State.CONNECTED else "-"
            print(
                f"{server.name}  {state.value}  {count}  {server.exposure.value}  {_source(server)}"
            )
            for tool in conn.tools:
                exposure = server.exposure_of(tool.tool)
                if exposure is not server.exposure:
                    print(f"  {tool.name}  {exposure.value}")
            if state is State.CONNECTED:
                for note in unmatched_tool_exposure(server, [t.tool for t in conn.tools]):
                    print(f"  note: {note}")
            if conn.error:
                print(f"  error: {conn.error}")
            if conn.unreadable_lines:
                print(f"  note: {_unreadable_note(conn)}")
            tail = conn.stderr_tail().strip()
            if tail and state is not State.CONNECTED:
                print("  stderr:")
                print("\n".join(f"    {line}" for line in tail.splitlines()[-10:]))
        for line in overridden_lines(manager):
            print(line)
        for problem in config.problems:
            print(f"invalid: {problem}")
    finally:
        await manager.close()
    return EXIT_FAILED if failed else EXIT_OK


def _unreadable_note(conn: ServerConnection) -> str:
    """One line on what a server wrote to its stdout that was no MCP message."""
    from vis_core.terminal import terminal_text
    from vis_core.tools.display import plural

    count = conn.unreadable_lines
    was = "was" if count == 1 else "were"
    first = terminal_text(conn.first_unreadable or "")
    return (
        f"{plural(count, 'line')} of its stdout {was} not MCP and skipped (a stdio server "
        f"may write only MCP messages there); the first: {first}"
    )


def unmatched_tool_exposure(server: ServerConfig, tools: list[str]) -> list[str]:
    """``toolExposure`` keys that name no tool of the server (keys are the server's names)."""
    from vis_core.mcp.config import tool_pattern_matches
    from vis_core.mcp.names import safe

    notes = []
    for key, _exposure in server.tool_exposure:
        if any(tool_pattern_matches(key, tool) for tool in tools):
            continue
        alike = [tool for tool in tools if safe(tool) == safe(key)]
        hint = f"; the server calls it {alike[0]!r}" if alike else ""
        notes.append(f"toolExposure {key!r} matches no tool of {server.name!r}{hint}")
    return notes


def _source(server: ServerConfig) -> str:
    return f"{server.source.value} ({server.origin})"


def overridden_lines(manager: McpManager) -> list[str]:
    """One line per server an extension adds that a file entry of the same name overrides."""
    lines = []
    for server in manager.config.overridden:
        if server.source is not Source.EXTENSION:
            continue
        winner = manager.get(server.name)
        wins = f"the {_source(winner.config)} entry" if winner is not None else "a file entry"
        lines.append(f"{server.name}  overridden  {_source(server)}: {wins} of the same name wins")
    return lines
