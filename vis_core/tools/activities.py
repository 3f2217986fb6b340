"""How each built-in call looks as an Activity: headline, summary and evidence blocks."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vis_core.model.activity import (
    ActivityDiff,
    ActivityPresentation,
    ActivityTable,
    ActivityTerminal,
    ActivityText,
    RenderPhase,
    Verdict,
)
from vis_core.system.shell_view import (
    bound_arguments,
    command_stages,
    error_text,
    shell_presentation,
    terminal_lines,
)
from vis_core.tools.display import one_line, plural, shorten_path

if TYPE_CHECKING:
    from vis_core.tools.testing import TestReport


def _info(result: object) -> dict[str, Any]:
    return getattr(result, "info", None) or {}


class Renders:
    """Render callbacks for one workspace (paths in headlines are shortened against it)."""

    def __init__(self, workspace: Path, signatures: dict[str, Callable[..., Any]]) -> None:
        self.workspace = workspace
        self.signatures = signatures

    def _args(self, tool: str, args: Any, kwargs: Any) -> dict[str, Any]:
        return bound_arguments(self.signatures[tool], args, kwargs)

    def _short(self, path: object) -> str:
        text = str(path or ".").lstrip("@")
        target = Path(text) if Path(text).is_absolute() else self.workspace / text
        return shorten_path(target, self.workspace)

    def _abs(self, path: str) -> str:
        target = Path(path)
        return str(target if target.is_absolute() else self.workspace / target)

    def cat(
        self,
        *,
        phase: str,
        args: Any = (),
        kwargs: Any = None,
        result: Any = None,
        error: Any = None,
    ) -> ActivityPresentation:
        given = self._args("cat", args, kwargs)
        short = self._short(given.get("path"))
        if phase == RenderPhase.FAILURE:
            return ActivityPresentation("Read file", f"{short}: {error_text(error)}")
        if phase == RenderPhase.START:
            return ActivityPresentation("Read file", short)
        info = _info(result)
        if not info:
            return ActivityPresentation("Read file", short)
        total = info.get("total", 0)
        if total == 0:
            summary = f"{short} @{info['version']} · empty"
        elif info.get("start") == 1 and info.get("end") == total:
            summary = f"{short} @{info['version']} · {plural(total, 'line')}"
        else:
            summary = (
                f"{short} @{info['version']} · lines {info['start']}–{info['end']} of {total:,}"
            )
        return ActivityPresentation("Read file", summary)

    def grep(
        self,
        *,
        phase: str,
        args: Any = (),
        kwargs: Any = None,
        result: Any = None,
        error: Any = None,
    ) -> ActivityPresentation:
        given = self._args("grep", args, kwargs)
        query = one_line(repr(given.get("query", "")), 120)
        paths = given.get("paths", ".")
        where = (
            ""
            if paths in (".", None, ["."])
            else " in "
            + one_line(
                ", ".join(self._short(p) for p in ([paths] if isinstance(paths, str) else paths)),
                120,
            )
        )
        if phase == RenderPhase.FAILURE:
            return ActivityPresentation("Search files", f"{query}{where}: {error_text(error)}")
        if phase == RenderPhase.START:
            return ActivityPresentation("Search files", f"{query}{where}")
        info = _info(result)
        total, files = info.get("total", 0), info.get("files", 0)
        if not total:
            return ActivityPresentation("Search files", f"{query}{where} · no matches")
        summary = f"{query}{where} · {plural(total, 'match', 'matches')} in {plural(files, 'file')}"
        hits = info.get("hits", ())
        if len(hits) < total:
            summary += f" ({len(hits)} shown)"
        table = ActivityTable(
            ("File", "Line", "Text"),
            tuple((label, str(line), one_line(text, 160)) for label, line, text in hits),
            paths=tuple(self._abs(label) for label, _, _ in hits),
        )
        return ActivityPresentation("Search files", summary, (table,))

    def ls(
        self,
        *,
        phase: str,
        args: Any = (),
        kwargs: Any = None,
        result: Any = None,
        error: Any = None,
    ) -> ActivityPresentation:
        given = self._args("ls", args, kwargs)
        short = self._short(given.get("path", "."))
        if phase == RenderPhase.FAILURE:
            return ActivityPresentation("List files", f"{short}: {error_text(error)}")
        info = _info(result)
        if phase == RenderPhase.START or not info:
            return ActivityPresentation("List files", short)
        counts = (
            f"{plural(info.get('folders', 0), 'folder')}, {plural(info.get('files', 0), 'file')}"
        )
        return ActivityPresentation("List files", f"{short} · {counts}")

    def patch(
        self,
        *,
        phase: str,
        args: Any = (),
        kwargs: Any = None,
        result: Any = None,
        error: Any = None,
    ) -> ActivityPresentation:
        given = self._args("patch", args, kwargs)
        short = self._short(given.get("path"))
        version = given.get("version")
        target = f"{short} @{version}" if version else short
        if phase == RenderPhase.FAILURE:
            return ActivityPresentation("Edit file", f"{target}: {error_text(error)}")
        if phase == RenderPhase.START or result is None:
            return ActivityPresentation("Edit file", target)
        verb = "created" if result.created else "edited"
        moved = f", moved from @{result.rebased_from}" if result.rebased_from else ""
        summary = f"{short} @{result.version} · {verb} +{result.added} −{result.removed}{moved}"
        content = (
            (ActivityDiff(result.diff, path=self._abs(result.path)),)
            if result.diff
            else (ActivityText("No change: the edits left the file as it was."),)
        )
        return ActivityPresentation("Edit file", summary, content)

    def shell(
        self,
        *,
        phase: str,
        args: Any = (),
        kwargs: Any = None,
        result: Any = None,
        error: Any = None,
    ) -> ActivityPresentation:
        given = self._args("shell", args, kwargs)
        command = str(given.get("command", ""))
        stages = command_stages(command)
        summary = one_line(command, 160)
        if phase == RenderPhase.FAILURE:
            return ActivityPresentation(
                "Run command", f"{summary}: {error_text(error)}", (ActivityTerminal(stages),)
            )
        if phase == RenderPhase.START or result is None:
            return ActivityPresentation("Run command", summary, (ActivityTerminal(stages),))
        return shell_presentation(result)

    def shells(
        self,
        *,
        phase: str,
        args: Any = (),
        kwargs: Any = None,
        result: Any = None,
        error: Any = None,
    ) -> ActivityPresentation:
        if phase == RenderPhase.FAILURE:
            return ActivityPresentation("List commands", error_text(error))
        if phase == RenderPhase.START or not isinstance(result, list):
            return ActivityPresentation("List commands", "")
        running = sum(1 for handle in result if getattr(handle, "running", False))
        return ActivityPresentation("List commands", f"{len(result)} command(s), {running} running")

    def run_tests(
        self,
        *,
        phase: str,
        args: Any = (),
        kwargs: Any = None,
        result: Any = None,
        error: Any = None,
    ) -> ActivityPresentation:
        given = self._args("run_tests", args, kwargs)
        target = given.get("target")
        scope = (
            "all tests"
            if not target
            else one_line(", ".join([target] if isinstance(target, str) else target), 120)
        )
        if phase == RenderPhase.FAILURE:
            return ActivityPresentation("Run tests", f"{scope}: {error_text(error)}")
        if phase == RenderPhase.START or result is None:
            return ActivityPresentation("Run tests", scope)
        return tests_presentation(result, scope, self._abs)


def tests_presentation(
    report: TestReport, scope: str, to_abs: Callable[[str], str]
) -> ActivityPresentation:
    verdict = report.verdict
    if report.timed_out:
        summary = f"{scope} · timed out · {report.counts}"
    elif verdict is None:
        summary = f"{scope} · no tests ran"
    else:  # the verdict is the row's badge (and print mode's word): not said twice
        summary = f"{scope} · {report.counts}"
    content: list[Any] = []
    if report.failures:
        content.append(
            ActivityTable(
                ("Test", "Location", "Message"),
                tuple(
                    (f.test, f"{f.path}:{f.line}" if f.line else f.path, one_line(f.message, 200))
                    for f in report.failures
                ),
                paths=tuple(to_abs(f.path) if f.path else "" for f in report.failures),
            )
        )
    if verdict is not Verdict.PASSED and report.output:
        pairs = [("stdout", line) for line in report.output.splitlines()]
        lines, omitted = terminal_lines(pairs)
        content.append(
            ActivityTerminal(command_stages(report.command), lines, report.exit_code, omitted)
        )
    return ActivityPresentation("Run tests", summary, tuple(content), verdict=verdict)
