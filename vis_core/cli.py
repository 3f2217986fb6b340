"""The ``vis`` command line: the app, ``vis run``, ``vis trust``, ``vis doctor``, ``vis mcp``,
``vis export``, ``vis replay``."""

from __future__ import annotations

import argparse
import contextlib
import gc
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vis_core import codegen_cache
from vis_core.model.channel import Channel
from vis_core.model.exit_status import EXIT_OK, EXIT_USAGE

if TYPE_CHECKING:
    from vis_core.mcp.config import McpConfig


def _add_model_options(parser: argparse.ArgumentParser, *, sub: bool = False) -> None:
    """Model options, accepted before and after a subcommand."""
    if sub:
        parser.set_defaults()
        parser.argument_default = argparse.SUPPRESS
    parser.add_argument("--model", help="provider/model, e.g. anthropic/claude-sonnet-4-6")
    parser.add_argument("--provider", help="provider name (e.g. scripted)")
    parser.add_argument("--script", type=Path, help="script file for --provider scripted")
    parser.add_argument(
        "--toggles",
        action="append",
        default=argparse.SUPPRESS if sub else [],
        metavar="ID=VALUE",
        help="override a setting for this run (repeatable)",
    )
    parser.add_argument(  # a subcommand's own default would hide ``vis -C DIR run``'s folder
        "-C",
        "--workspace",
        type=Path,
        default=argparse.SUPPRESS if sub else None,
        help="workspace folder",
    )


SUBCOMMANDS = (
    "run",
    "acp",
    "trust",
    "doctor",
    "sessions",
    "settings",
    "mcp",
    "drafts",
    "export",
    "replay",
)


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The ``vis`` parser; ``only``: the subcommand ``argv`` starts with, the one the others'
    arguments are not built for (each costs its share of the start); ``""``: none of them."""
    from vis_core import __version__

    parser = argparse.ArgumentParser(
        prog="vis", description="Vis: a terminal-first coding agent that works in Python."
    )
    parser.add_argument("--version", action="version", version=f"vis {__version__}")
    _add_model_options(parser)
    parser.add_argument(
        "--continue",
        dest="continue_",
        action="store_true",
        help="resume the latest session of this workspace",
    )
    parser.add_argument(
        "--resume",
        nargs="?",
        const="",
        default=None,
        metavar="ID",
        help="resume a session (pick one when no ID is given)",
    )
    _add_web_options(parser)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    if only in (None, "run"):
        _add_run_parser(commands)
    if only in (None, "acp"):
        acp = commands.add_parser(
            "acp", help="serve the Agent Client Protocol on stdio (for editors such as Zed)"
        )
        _add_model_options(acp, sub=True)
    if only in (None, "trust"):
        trust = commands.add_parser(
            "trust", help="trust a project: load its extensions and servers"
        )
        trust.add_argument(
            "path",
            nargs="?",
            type=Path,
            default=Path("."),
            help="the project's folder (default: this one)",
        )
    if only in (None, "doctor"):
        commands.add_parser("doctor", help="check the installation, config and extensions")
    if only in (None, "sessions"):
        sessions = commands.add_parser("sessions", help="list or search stored sessions")
        sessions.add_argument("query", nargs="?", help="search text")
    if only in (None, "settings"):
        from vis_core.settings_cli import add_settings_parser

        add_settings_parser(commands)
    if only in (None, "mcp"):
        from vis_core.mcp.arguments import add_mcp_parser

        add_mcp_parser(commands)
    if only in (None, "drafts"):
        from vis_core.drafts_cli import add_drafts_parser

        add_drafts_parser(commands)
    if only in (None, "export", "replay"):
        from vis_core.session_cli import add_export_parser, add_replay_parser

        add_export_parser(commands)
        add_replay_parser(commands)
    for sub in commands.choices.values():  # a command's own usage for what it does not take
        sub.set_defaults(command_parser=sub)
    return parser


def _add_web_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--web", action="store_true", help="serve the app to a browser on this machine"
    )
    parser.add_argument(
        "--port", type=_port, default=0, help="port for --web (default: a free one)"
    )
    parser.add_argument(
        "--host",
        default="127.0.0.1",
        help="address for --web (default 127.0.0.1; another one lets other machines in)",
    )


def parsers_for(argv: list[str]) -> str | None:
    """The ``only`` of :func:`build_parser` for ``argv``: ``vis run …`` names its subcommand
    first; ``vis`` or ``vis --continue`` (options alone, no help) opens the app and needs no
    subcommand's parser; anything else gets them all."""
    if argv and argv[0] in SUBCOMMANDS:
        return argv[0]
    if all(arg.startswith("-") for arg in argv) and not {"-h", "--help"} & set(argv):
        return ""
    return None


def _add_run_parser(commands: argparse._SubParsersAction) -> None:
    run = commands.add_parser("run", help="run one request without the app (for scripts and CI)")
    run.add_argument("request", help="what to do; - reads it from standard input")
    run.add_argument("--json", action="store_true", help="print events as JSON lines")
    run.add_argument(
        "--continue",
        dest="run_continue",
        action="store_true",
        help="run the request as one more turn of this workspace's latest session",
    )
    run.add_argument(
        "--resume",
        dest="run_resume",
        metavar="ID",
        default=None,
        help="run the request as one more turn of session ID (an id prefix works)",
    )
    run.add_argument(
        "--max-cost",
        dest="max_cost",
        metavar="USD",
        type=_positive(float),
        default=None,
        help="stop the run once its model requests cost this many dollars (exit status 4)",
    )
    run.add_argument(
        "--max-turns",
        dest="max_turns",
        metavar="N",
        type=_positive(int),
        default=None,
        help="stop the run after N model turns that call tools (exit status 3)",
    )
    run.add_argument(
        "--draft",
        dest="run_draft",
        action="store_true",
        help="run the request in a new draft and print how to review it",
    )
    run.add_argument(
        "--plan",
        dest="run_plan",
        action="store_true",
        help="plan mode: the model reads and plans but changes nothing until you approve",
    )
    run.add_argument(
        "--allow-approve",
        dest="allow_approve",
        action="store_true",
        help="let the model approve its draft (commit it) without asking",
    )
    _add_model_options(run, sub=True)


def _port(text: str) -> int:
    """An argparse type: a TCP port number (0: any free one)."""
    if not text.isdigit() or int(text) > 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number (0 to 65535)")
    return int(text)


def _positive(kind: type[int] | type[float]) -> Callable[[str], Any]:
    """An argparse type: a number of ``kind`` above zero."""

    def parse(text: str) -> Any:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if value <= 0:
            raise argparse.ArgumentTypeError(f"{text} is not above zero")
        return value

    return parse


@contextlib.asynccontextmanager
async def _session_mcp_config(workspace: Path) -> AsyncIterator[McpConfig]:
    """The MCP servers a session here would have, as ``/mcp`` lists them: the files' and those
    the enabled extensions declare (``vis.mcp_server``). Opens the Host, not the servers; while
    it is open, what the servers' SDK logs goes to the day's log file, as in a session."""
    from vis_core.host import Host
    from vis_core.host_options import HostOptions

    host = await Host.open(HostOptions(workspace=workspace, channel=Channel.CLI))
    try:
        yield host.mcp.config()
    finally:
        await host.close()


def main(argv: list[str] | None = None) -> int:
    # Python's cyclic collector would only walk what the start's imports make, all of it kept
    # for the whole run: its passes were ~5-10% of `vis run`'s CPU. It is off until the app
    # (vis_tui.collector) or `vis run` (printmode) has started, on at once for the others.
    gc.disable()
    from vis_core.system.standard_streams import hold_closed_streams

    if "stdout" in hold_closed_streams():  # `vis … >&-`: what it says would go nowhere
        print(
            "vis: standard output is closed; send it to a file or discard it (> /dev/null)",
            file=sys.stderr,
        )
        return EXIT_USAGE
    try:
        return _main(argv)
    except BrokenPipeError:
        return _reader_left()
    except KeyboardInterrupt:
        # Ctrl+C before a command took it (the app still loading, `vis run -` waiting for its
        # request): the status of an interrupted command, not Python's traceback
        return 130
    finally:
        gc.enable()


def _workspace(given: Path | None) -> Path | None:
    """The workspace: ``-C FOLDER`` or the working directory, resolved; ``None`` (said on
    stderr) when it is not a folder, before anything starts in it."""
    try:
        workspace = (given or Path.cwd()).resolve()
    except FileNotFoundError:  # the shell's working directory was removed
        print("vis: the current folder no longer exists; cd to your project", file=sys.stderr)
        return None
    if not workspace.is_dir():
        what = "does not exist" if not workspace.exists() else "is not a folder"
        print(f"vis: the workspace {workspace} {what} (-C FOLDER)", file=sys.stderr)
        return None
    return workspace


def _reader_left() -> int:
    """The program reading Vis's output stopped reading (``vis sessions | head -1``): end
    quietly with the status of a command SIGPIPE ended, not with Python's traceback."""
    import os
    import signal

    # what is still buffered goes nowhere when Python flushes at exit (not to the closed pipe)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return 128 + signal.SIGPIPE


def _main(argv: list[str] | None) -> int:
    codegen_cache.install()  # before the modules that define dataclasses are imported
    from vis_core.mcp.arguments import split_server_command

    argv, server_command = split_server_command(list(sys.argv[1:] if argv is None else argv))
    args, unknown = build_parser(parsers_for(argv)).parse_known_args(argv)
    if unknown:  # said with the usage of the command given (argparse: the top one's)
        said = getattr(args, "command_parser", None) or build_parser()
        said.error(f"unrecognized arguments: {' '.join(unknown)}")
    from vis_core.system import held_logs  # after --version and --help: logging is ~10 ms

    held_logs.hold()  # what is logged before the log file is attached goes there, not stderr
    if args.command not in ("run", None) or args.web:
        gc.enable()
    if server_command is not None:
        args.server_command = server_command
    # `vis run` loads extensions, which need the build globals, and says whether blocks are
    # jailed: both start now, beside the imports that follow (the app starts them after its
    # first frame, beside the core's import).
    if args.command in ("run", "acp"):
        from vis_core.extension.metadata import warm
        from vis_core.system.jail_check import check_in_background

        check_in_background()
        warm()
    if args.command is not None:  # a command, not the app: text Vis did not write is escaped
        from vis_core.system.redaction import redact_log_text
        from vis_core.terminal import guard_output

        # `vis run` escapes its answer and lines itself; its stdout stays raw for `vis.ask`;
        # saved secrets and keys are redacted, also before the Host attaches its redactor
        guard_output(stdout=args.command != "run", clean=redact_log_text)
    workspace = _workspace(args.workspace)
    if workspace is None:
        return EXIT_USAGE
    if args.provider == "scripted" and args.script is None:
        print("vis: --provider scripted needs --script FILE", file=sys.stderr)
        return EXIT_USAGE
    from vis_core.paths import folders_problem

    problem = folders_problem() or _trust_list_problem()
    if problem is not None:
        print(f"vis: {problem}", file=sys.stderr)
        return EXIT_USAGE
    if args.command == "run":
        from vis_core.printmode import run_print_mode

        return run_print_mode(args, workspace)
    if args.command == "acp":
        from vis_core.acp.server import run_acp

        return run_acp(args, workspace)
    if args.command == "trust":
        return _trust(args.path)
    if args.command == "doctor":
        from vis_core.doctor import run_doctor

        return run_doctor(workspace)
    if args.command == "settings":
        from vis_core.settings_cli import run_settings

        return run_settings(args, workspace)
    if args.command == "mcp":
        from vis_core.mcp.cli import run_mcp

        return run_mcp(args, workspace, _session_mcp_config)
    if args.command == "drafts":
        from vis_core.drafts_cli import run_drafts

        return run_drafts(args)
    if args.command == "export":
        from vis_core.session_cli import run_export

        return run_export(args, workspace)
    if args.command == "replay":
        from vis_core.session_cli.replay import run_replay

        return run_replay(args)
    if args.command == "sessions":
        from vis_core.doctor import list_sessions

        return list_sessions(workspace, args.query)
    if args.web:
        return _serve_web(args, workspace)
    # the collector stays off until the app's Host is open (vis_tui.collector turns it on)
    from vis_core.host_options import HostOptions

    options = HostOptions.from_args(args, workspace, Channel.TUI)
    welcome = None
    if not args.continue_ and args.resume is None:
        # A new session's welcome header: a child reads what it says (settings, trust, the
        # jail's check) on the other core while the app's modules load and it paints.
        from vis_core import welcome_probe

        welcome = welcome_probe.start(
            workspace,
            provider=options.provider,
            model=options.model,
            toggles=options.toggles,
            channel=options.channel,
        )
    from vis_tui.app import run_tui

    codegen_cache.save()  # now, not only at exit: the app may be killed rather than quit
    return run_tui(options, continue_=args.continue_, resume=args.resume, welcome=welcome)


def _serve_web(args: argparse.Namespace, workspace: Path) -> int:
    """``vis --web``: each browser tab runs the app with this command line's model options."""
    if args.continue_ or args.resume is not None:
        print(
            "vis --web: each browser tab opens a new session; "
            "open an earlier one there with /sessions",
            file=sys.stderr,
        )
        return EXIT_USAGE
    from vis_tui.web import WebOptions, app_argv, serve_web

    forwarded = [f"--toggles={item}" for item in args.toggles]
    for flag, value in (("--model", args.model), ("--provider", args.provider)):
        if value:
            forwarded += [flag, value]
    if args.script:
        forwarded += ["--script", str(args.script.resolve())]
    argv = app_argv(workspace, forwarded)
    return serve_web(WebOptions(argv=argv, host=args.host, port=args.port))


def _trust_list_problem() -> str | None:
    """Why the trust list cannot be read (every command stops: none can tell what to trust)."""
    from vis_core.paths import TrustListError, TrustStore, VisPaths

    try:
        TrustStore(VisPaths.from_env()).trusted_paths()
    except TrustListError as exc:
        return str(exc)
    return None


def _trust(path: Path) -> int:
    from vis_core.paths import TrustStore, VisPaths, trust_target

    try:
        target = trust_target(path)
    except ValueError as exc:
        print(f"vis trust: {exc}", file=sys.stderr)
        return EXIT_USAGE
    from vis_core.paths import take_snapshot
    from vis_core.settings.storage import ProjectFiles
    from vis_core.settings.trust_notice import trust_notice
    from vis_core.terminal import terminal_text

    snapshot = take_snapshot(target)
    trusted = TrustStore(VisPaths.from_env()).trust(target, snapshot)
    print(terminal_text(trust_notice(trusted, snapshot, ProjectFiles(trusted).read(snapshot))))
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
