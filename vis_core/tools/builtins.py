"""The built-in tools bound to one session's :class:`ToolContext`, as registry entries."""

from __future__ import annotations

from typing import Any

from vis_core.model.activity import Activity, SymbolTag
from vis_core.system.shell import ShellHandle, time_limit
from vis_core.tools.activities import Renders
from vis_core.tools.context import ToolContext
from vis_core.tools.edit import PatchResult, patch_file
from vis_core.tools.files import cat_file, list_folder
from vis_core.tools.registry import HostTool
from vis_core.tools.search import search
from vis_core.tools.testing import TestReport, run_test_suite


def builtin_tools(ctx: ToolContext) -> list[HostTool]:
    """``cat``, ``grep``, ``patch``, ``ls``, ``shell`` and ``run_tests`` for one session."""

    def cat(path: str, start: int | None = None, end: int | None = None) -> str:
        """Read a text file as numbered lines under a `path @version` header.

        `start`/`end` pick lines (1-based, inclusive). Long files page at 2,000 lines / 50 KB;
        the note at the end says how to read on. Pass the header's version and these line
        numbers to `patch`. Binary files are refused; use `Path.read_bytes()` for them and
        `Path.read_text()` for data you will not edit.
        """
        return cat_file(ctx, path, start, end)

    async def grep(
        query: str,
        paths: str | list[str] = ".",
        *,
        literal: bool = False,
        case: str = "smart",
        word: bool = False,
        include: str | list[str] | None = None,
        exclude: str | list[str] | None = None,
        context: int = 0,
        hidden: bool = False,
        limit: int = 100,
        offset: int = 0,
    ) -> str:
        """Search file contents; results are grouped per file under `path @version` headers.

        `query` is a regular expression (`literal=True` for plain text). `case` is `smart`
        (case-insensitive unless the query has an uppercase letter), `sensitive` or `ignore`.
        `word` matches whole words. `include`/`exclude` are globs ('*.py', 'tests/**'; a glob
        with a slash is anchored at the workspace). Respects .gitignore; hidden files only with
        `hidden=True`; binary files are skipped. Matched lines read `12: text`, `context` lines
        `12- text`. At most `limit` matching lines (1–1000) from `offset` are shown; the last
        line counts all matches and names the offset of the next page.
        """
        return await search(
            ctx,
            query,
            paths,
            literal=literal,
            case=case,
            word=word,
            include=include,
            exclude=exclude,
            context=context,
            hidden=hidden,
            limit=limit,
            offset=offset,
        )

    async def patch(
        path: str, version: int | None, edits: list[dict[str, Any]] | str
    ) -> PatchResult:
        """Edit one file by the line numbers of a version you read with cat or grep.

        `edits` is a list of `{"start": 3, "end": 5, "text": "new lines\\n"}`: replace lines
        start..end (inclusive) of that version with `text`; `"end": start - 1` inserts before
        line `start` (`start = last line + 1` appends); `"text": ""` deletes. Give all edits
        for the file in one call; they must not overlap. If the file changed since that read,
        the edits move to the new line numbers; if an edited line itself changed, the read was
        before Vis restarted or long ago, or the result would not parse (Python, JSON, TOML,
        YAML), the whole batch is refused and nothing is written. To create a file pass
        `version=0` and the whole text as `edits` (a string). Returns the unified diff (past
        2,000 lines or 50 KB its head, and the file holding all of it) and the new version for
        the next patch.
        """
        if ctx.hooks is None:
            return await patch_file(ctx, path, version, edits)
        return await ctx.hooks.patch(
            {"path": path, "version": version, "edits": edits},
            lambda guard: patch_file(ctx, path, version, edits, guard=guard),
        )

    def ls(path: str = ".", depth: int = 1) -> str:
        """List a folder `depth` levels deep: folders end with `/`, files show their size.

        Folders ignored by .gitignore (and `.git`) are shown but not opened.
        """
        return list_folder(ctx, path, depth)

    async def shell(
        command: str, cwd: str | None = None, timeout: float | None = None
    ) -> ShellHandle:
        """Start a bash command in the workspace (or `cwd`) and return its handle at once.

        Use `await sh.wait(30)` for the exit status and output tail (it raises TimeoutError if
        the command is still running), `await sh.logs()` for output so far, `await
        sh.type("y\\n")` to write to its stdin and `await sh.stop()` to end it and its
        children. `timeout` (seconds) stops it automatically. Output keeps the last 8 MiB per
        stream; what reaches you is cut to the last 2,000 lines / 50 KB with the full text
        saved to a file. Every command still running is stopped when the session ends.
        """
        if not isinstance(command, str) or not command.strip():
            raise ValueError("shell: command must be a non-empty string such as 'pytest -q'")
        if "\0" in command:  # was Python's own "embedded null byte"
            raise ValueError("shell: the command holds a NUL character, which no command can")
        timeout = time_limit(timeout, "shell: timeout")
        folder = ctx.resolve(cwd or ".", tool="shell")
        if not folder.is_dir():
            raise NotADirectoryError(f"shell: cwd {ctx.display(folder)} is not a folder")

        async def start() -> ShellHandle:
            return await ctx.shells.start(
                command,
                cwd=folder,
                output_dir=ctx.output_dir,
                timeout=timeout,
                jail_workspace=ctx.workspace if ctx.jail else None,
            )

        if ctx.hooks is None:
            return await start()
        return await ctx.hooks.shell({"command": command, "cwd": cwd, "timeout": timeout}, start)

    def shells() -> list[ShellHandle]:
        """Every command `shell()` started in this session, running and finished, oldest first.

        Each item is the command's handle (`wait`, `logs`, `type`, `stop`), so a handle lost
        with a sandbox restart is found again here; its repr shows the id, pid, state and
        command. A command still running when its block ends reports back by itself: when it
        ends, your next request carries its exit code and the tail of its output.
        """
        return list(ctx.shells.handles.values())

    async def run_tests(
        target: str | list[str] | None = None, *, keyword: str | None = None, timeout: float = 600
    ) -> TestReport:
        """Run the project's tests (pytest first, else npm, cargo or go) and report them.

        `target` narrows the run (files, folders or pytest node ids); `keyword` is pytest's
        `-k`. Returns passed/failed/skipped/error counts, each failure with its file and line,
        the exit code and the output's tail; a run longer than `timeout` seconds is stopped.
        """
        return await run_test_suite(ctx, target, keyword=keyword, timeout=timeout)

    specs = (
        (cat, SymbolTag.OBSERVATION, "Read file", False),
        (grep, SymbolTag.OBSERVATION, "Search files", False),
        (patch, SymbolTag.MUTATION, "Edit file", True),
        (ls, SymbolTag.OBSERVATION, "List files", False),
        (shell, SymbolTag.MUTATION, "Run command", True),
        (shells, SymbolTag.OBSERVATION, "List commands", False),
        (run_tests, SymbolTag.VERIFICATION, "Run tests", True),
    )
    renders = Renders(ctx.workspace, {fn.__name__: fn for fn, *_ in specs})
    return [
        HostTool(
            name=fn.__name__,
            fn=fn,
            tag=tag,
            activity=Activity(
                label, render=renders.render(fn.__name__, label), show_start=show_start
            ),
        )
        for fn, tag, label, show_start in specs
    ]
