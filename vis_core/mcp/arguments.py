"""The ``vis mcp`` command line: its parser and the words after ``--`` (no MCP code loaded)."""

from __future__ import annotations

import argparse


def add_mcp_parser(commands: argparse._SubParsersAction) -> None:
    mcp = commands.add_parser("mcp", help="add, remove, check, sign in to MCP servers (mcp.json)")
    sub = mcp.add_subparsers(dest="mcp_command", required=True)
    add = sub.add_parser(
        "add",
        help="add a server: NAME -- CMD ARGS… (stdio) or NAME --url URL (streamable HTTP)",
        # the words after ``--`` are no argument argparse knows: its own usage left them out
        usage="%(prog)s [-l] NAME [--env K=V]… [--cwd DIR] -- CMD ARGS…\n"
        "       %(prog)s [-l] NAME --url URL [--header K=V]… [--bearer-token-env-var VAR]",
        description="Add a server to mcp.json; a running Vis starts it at /reload.",
    )
    add.add_argument("-l", "--local", action="store_true", help="write the project's .vis/mcp.json")
    add.add_argument("name", metavar="NAME", help="the server's name: letters, digits, _ and -")
    add.add_argument(
        "--env", action="append", default=[], metavar="K=V", help="set a stdio server's variable"
    )
    add.add_argument("--cwd", metavar="DIR", help="the folder a stdio server starts in")
    add.add_argument("--url", help="the address of a streamable HTTP server")
    add.add_argument(
        "--header", action="append", default=[], metavar="K=V", help="send an HTTP header"
    )
    add.add_argument(
        "--bearer-token-env-var", metavar="VAR", help="send the token in $VAR as a bearer token"
    )
    add.set_defaults(server_command=[])  # the words after ``--`` (split_server_command)
    remove = sub.add_parser("remove", help="remove a server")
    remove.add_argument("-l", "--local", action="store_true", help="edit the project's file")
    remove.add_argument("name", metavar="NAME", help="the server's name in mcp.json")
    sub.add_parser("list", help="connect to every enabled server and print its state")
    login = sub.add_parser("login", help="sign in to an HTTP server with OAuth")
    login.add_argument("name", metavar="NAME", help="the server's name in mcp.json")
    logout = sub.add_parser("logout", help="delete a server's stored OAuth sign-in")
    logout.add_argument("name", metavar="NAME", help="the server's name in mcp.json")


def split_server_command(argv: list[str]) -> tuple[list[str], list[str] | None]:
    """``vis mcp add … -- CMD ARGS``: the words after ``--`` are the server's command."""
    if "--" not in argv:
        return argv, None
    cut = argv.index("--")
    head = argv[:cut]
    if "mcp" not in head or "add" not in head[head.index("mcp") :]:
        return argv, None
    return head, argv[cut + 1 :]
