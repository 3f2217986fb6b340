"""``/export [md|html|json] [PATH]``: write this session as a file and say where."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vis_core.commands import CommandResult, code_span, err, ok
from vis_core.extension.declarations import SlashCommand
from vis_core.session_files import (
    FORMATS,
    ExportFormat,
    default_file_name,
    export_session,
    format_for_path,
    write_export,
)

if TYPE_CHECKING:
    from vis_core.command_host import CommandDeps

USAGE = "/export [md|html|json] [PATH]"


def export_command(deps: CommandDeps) -> SlashCommand:
    async def run(ctx: dict[str, Any]) -> CommandResult:
        session = ctx.get("session")
        if session is None:
            return err("No session", "Open a session first, then export it with /export.")
        args = list(ctx["args"])
        fmt = ExportFormat(args.pop(0)) if args and args[0] in FORMATS else None
        if len(args) > 1:
            return err("Cannot export", f"Write {USAGE}; quote a path with spaces.")
        root: Path | None = deps.space.root  # a path in it is walked beneath it
        if args:
            path = Path(args[0]).expanduser()
            fmt = fmt or format_for_path(path)
            if path.is_absolute():
                root = None  # the person's own choice of place
        else:
            fmt = fmt or ExportFormat.MD
            path = Path(default_file_name(session.id, fmt))
        shown = path if root is None else root / path
        row = deps.store.get_session(session.id)
        if row is None:
            return err("Cannot export", "This session has nothing stored yet.")
        try:
            text = await asyncio.to_thread(export_session, deps.store, row, fmt)
            await asyncio.to_thread(write_export, path, text, root)
        except OSError as exc:
            return err("Cannot export", f"{code_span(str(shown))}: {exc.strerror or exc}")
        return ok(f"Exported this session ({fmt.value})", f"Written to {code_span(str(shown))}.")

    return SlashCommand(
        "export", run, "Write this session as Markdown, HTML or JSON (in the workspace)", USAGE
    )
