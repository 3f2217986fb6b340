"""How each built-in call looks as an Activity: headline, summary and evidence blocks."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vis_core.model.activity import (
    ActivityDiff,
    ActivityPresentation,
    ActivityTable,
    ActivityText,
    RenderPhase,
)
from vis_core.system.shell_view import (
    bound_arguments,
    command_terminal,
    error_text,
    shell_presentation,
    terminal_lines,
)
from vis_core.text_limits import one_line
from vis_core.tools.display import plural, shorten_path

if TYPE_CHECKING:
    from vis_core.tools.testing import TestReport


def _info(result: object) -> dict[str, Any]:
    return getattr(result, "info", None) or {}


class Renders:
    """Render callbacks for one workspace (paths in headlines are shortened against it).

    A built-in's look is its subject (what the call is about: shown while it starts, and
    with the error when it fails) and what its result shows when it ends (None: the subject).
    """

    def __init__(self, workspace: Path, signatures: dict[str, Callable[..., Any]]) -> None:
        self.workspace = workspace
        self.signatures = signatures

    def render(self, tool: str, label: str) -> Callable[..., ActivityPresentation]:
        """The render callback of ``tool``, whose Activity is headed ``label``."""
        subject_of, done = _LOOKS[tool]

        def render(
            *,
            phase: str,
            args: Any = (),
            kwargs: Any = None,
            result: Any = None,
            error: Any = None,
        ) -> ActivityPresentation:
            given = bound_arguments(self.signatures[tool], args, kwargs)
            subject = subject_of(self, given)
            # a command shows its stages while it runs (and when it fails to)
            content = (command_terminal(given["command"]),) if tool == "shell" else ()
            if phase == RenderPhase.FAILURE:
                failed = (
                    one_line(f"{subject}: {error_text(error)}") if subject else error_text(error)
                )
                return ActivityPresentation(label, failed, content)
            ended = (
                None if phase == RenderPhase.START or result is None else done(self, given, result)
            )
            return ended or ActivityPresentation(label, subject, content)

        return render

    def _short(self, path: object) -> str:
        text = str(path or ".").lstrip("@")
        target = Path(text) if Path(text).is_absolute() else self.workspace / text
        return shorten_path(target, self.workspace)

    def _abs(self, path: str) -> str:
        target = Path(path)
        return str(target if target.is_absolute() else self.workspace / target)

    def _cat_subject(self, given: dict[str, Any]) -> str:
        return one_line(self._short(given.get("path")), 160)

    def _cat(self, given: dict[str, Any], result: Any) -> ActivityPresentation | None:
        info = _info(result)
        if not info:
            return None
        short, total = self._cat_subject(given), info.get("total", 0)
        if total == 0:
            summary = f"{short} @{info['version']} · empty"
        elif info.get("start") == 1 and info.get("end") == total:
            summary = f"{short} @{info['version']} · {plural(total, 'line')}"
        else:
            summary = (
                f"{short} @{info['version']} · lines {info['start']}–{info['end']} of {total:,}"
            )
        return ActivityPresentation("Read file", summary)

    def _grep_subject(self, given: dict[str, Any]) -> str:
        query = one_line(repr(given.get("query", "")), 100)
        paths = given.get("paths", ".")
        if paths in (".", None, ["."]):
            return query
        listed = ", ".join(self._short(p) for p in ([paths] if isinstance(paths, str) else paths))
        return f"{query} in {one_line(listed, 100)}"

    def _grep(self, given: dict[str, Any], result: Any) -> ActivityPresentation:
        subject, info = self._grep_subject(given), _info(result)
        total, files = info.get("total", 0), info.get("files", 0)
        if not total:
            return ActivityPresentation("Search files", f"{subject} · no matches")
        summary = f"{subject} · {plural(total, 'match', 'matches')} in {plural(files, 'file')}"
        hits = info.get("hits", ())
        if len(hits) < total:
            summary += f" ({len(hits)} shown)"
        table = ActivityTable(
            ("File", "Line", "Text"),
            tuple((label, str(line), one_line(text, 160)) for label, line, text in hits),
            paths=tuple(self._abs(label) for label, _, _ in hits),
        )
        return ActivityPresentation("Search files", summary, (table,))

    def _ls(self, given: dict[str, Any], result: Any) -> ActivityPresentation | None:
        info = _info(result)
        if not info:
            return None
        counts = (
            f"{plural(info.get('folders', 0), 'folder')}, {plural(info.get('files', 0), 'file')}"
        )
        return ActivityPresentation("List files", f"{self._cat_subject(given)} · {counts}")

    def _patch_subject(self, given: dict[str, Any]) -> str:
        short, version = self._cat_subject(given), given.get("version")
        return one_line(f"{short} @{version}", 160) if version else short

    def _patch(self, given: dict[str, Any], result: Any) -> ActivityPresentation:
        verb = "created" if result.created else "edited"
        moved = f", moved from @{result.rebased_from}" if result.rebased_from else ""
        summary = (
            f"{self._cat_subject(given)} @{result.version} · {verb} +{result.added} "
            f"−{result.removed}{moved}"
        )
        if not result.diff:
            content: tuple[Any, ...] = (
                ActivityText("No change: the edits left the file as it was."),
            )
        else:
            content = (ActivityDiff(result.diff, path=self._abs(result.path)),)
            content += (ActivityText(result.diff_cut),) if result.diff_cut else ()
        return ActivityPresentation("Edit file", summary, content)

    def _shell_subject(self, given: dict[str, Any]) -> str:
        return one_line(str(given.get("command", "")), 160)

    def _shell(self, given: dict[str, Any], result: Any) -> ActivityPresentation:
        return shell_presentation(result)

    def _shells_subject(self, given: dict[str, Any]) -> str:
        return ""

    def _shells(self, given: dict[str, Any], result: Any) -> ActivityPresentation | None:
        if not isinstance(result, list):
            return None
        running = sum(1 for handle in result if getattr(handle, "running", False))
        return ActivityPresentation(
            "List commands", f"{plural(len(result), 'command')}, {running} running"
        )

    def _run_tests_subject(self, given: dict[str, Any]) -> str:
        target, keyword = given.get("target"), given.get("keyword")
        scope = (
            one_line(", ".join([target] if isinstance(target, str) else target), 120)
            if target
            else "all tests"
        )
        return f"{scope} matching -k {one_line(repr(keyword), 80)}" if keyword else scope

    def _run_tests(self, given: dict[str, Any], result: Any) -> ActivityPresentation:
        return tests_presentation(result, self._run_tests_subject(given), self._abs)


_LOOKS: dict[
    str,
    tuple[
        Callable[[Renders, dict[str, Any]], str],
        Callable[[Renders, dict[str, Any], Any], ActivityPresentation | None],
    ],
] = {
    "cat": (Renders._cat_subject, Renders._cat),
    "grep": (Renders._grep_subject, Renders._grep),
    "ls": (Renders._cat_subject, Renders._ls),
    "patch": (Renders._patch_subject, Renders._patch),
    "shell": (Renders._shell_subject, Renders._shell),
    "shells": (Renders._shells_subject, Renders._shells),
    "run_tests": (Renders._run_tests_subject, Renders._run_tests),
}


def tests_presentation(
    report: TestReport, scope: str, to_abs: Callable[[str], str]
) -> ActivityPresentation:
    verdict = report.verdict
    if report.timed_out:
        summary = f"{scope} · timed out · {report.counts}"
    elif verdict is None:
        summary = f"{scope} · no tests ran"
        if report.deselected:
            summary += f" ({report.deselected} deselected)"
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
    # the command it ran (a passing run's too: what it chose is checked there), and what it said
    pairs = [("stdout", line) for line in report.output.splitlines()]
    lines, omitted = terminal_lines(pairs)
    content.append(command_terminal(report.command, lines, report.exit_code, omitted))
    return ActivityPresentation("Run tests", summary, tuple(content), verdict=verdict)
