"""``vis export`` and ``vis replay``: a stored session as a file, or re-run as a regression test."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from vis_core.model.exit_status import EXIT_OK, EXIT_USAGE
from vis_core.session_files import FORMATS, ExportFormat, export_session, write_export
from vis_core.store.stored_session import SessionNotFound, find_session, latest_session
from vis_core.terminal import raw_stream


def add_export_parser(commands: argparse._SubParsersAction) -> None:
    export = commands.add_parser(
        "export", help="write a stored session as Markdown, HTML or JSON (stdout by default)"
    )
    export.add_argument(
        "session_id",
        metavar="ID",
        nargs="?",
        help="the session id (a prefix works); default: the workspace's latest session",
    )
    export.add_argument("--format", choices=FORMATS, default=None, help="md (default), html, json")
    export.add_argument("-o", "--output", type=Path, default=None, help="write to FILE")


def add_replay_parser(commands: argparse._SubParsersAction) -> None:
    replay = commands.add_parser(
        "replay",
        help="re-run a stored session's model answers against the current code and a copy of "
        "the workspace; exit 1 where a block's output or an Activity's outcome differs",
        description="Re-run a stored session's model answers against the current code and a "
        "copy of its workspace. The recorded code is the model's: it always runs in the jail "
        "(whatever the jail setting), so the live workspace is never touched; where the jail "
        "cannot run, the replay is refused unless --unjailed is given. The replayed session "
        "and its drafts are not kept.",
    )
    replay.add_argument("session_id", metavar="ID", help="the session id (a prefix works)")
    replay.add_argument("--json", action="store_true", help="print the report as JSON")
    replay.add_argument(
        "--unjailed",
        action="store_true",
        help="run the recorded code without the jail, where it cannot run (without this flag "
        "the replay is always jailed, whatever the jail setting, and refused where the jail "
        "cannot run): the model's code then reads and writes whatever your user can, the "
        "live workspace included",
    )


def run_export(args: argparse.Namespace, workspace: Path) -> int:
    from vis_core.paths import VisPaths
    from vis_core.session_files import format_for_path
    from vis_core.store import Store
    from vis_core.store.session_lock import session_held

    output: Path | None = args.output
    fmt = ExportFormat(args.format) if args.format else None
    if fmt is None:
        fmt = format_for_path(output) if output is not None else ExportFormat.MD
    paths = VisPaths.from_env().ensure()
    store = Store(paths.db_file)
    try:
        row = (
            find_session(store, args.session_id)
            if args.session_id is not None
            else latest_session(store, workspace)
        )
        cut_off = not session_held(paths.session_locks_dir, row.id)
        text = export_session(store, row, fmt, cut_off=cut_off)
    except SessionNotFound as exc:
        print(f"vis export: {exc}", file=sys.stderr)
        return EXIT_USAGE
    finally:
        store.close()
    if output is None:
        # the text is escaped and redacted already; JSON's own escapes must stay JSON
        stream = raw_stream(sys.stdout)
        stream.write(text)
        stream.flush()
        return EXIT_OK
    try:
        write_export(output, text)
    except OSError as exc:
        print(f"vis export: cannot write {output}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_USAGE
    print(f"Exported session {row.id[:8]} ({fmt.value}) to {output.resolve()}")
    return EXIT_OK
