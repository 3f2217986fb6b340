"""How each built-in call looks as an Activity: headline, summary and evidence blocks."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vis_core.model.activity import (
    ActivityDiff,
    ActivityPresentation,
    ActivityTable,
    ActivityTerminal,
    ActivityTerminalLine,
    ActivityText,
    RenderPhase,
    Verdict,
)
from vis_core.tools.display import one_line, plural, shorten_path

if TYPE_CHECKING:
    from vis_core.tools.testing import TestReport

TERMINAL_LINES = 200
OPERATORS = ("&&", "||", "|&", "|", ";")


def command_stages(command: str) -> tuple[str, ...]:
    """Split a shell command at top-level ``&&``, ``||``, ``|`` and ``;`` (quotes respected).

    Later stages start with their operator, e.g. ``("make", "&& make test", "| tee log")``.
    """
    stages: list[str] = []
    current: list[str] = []
    quote: str | None = None
    i = 0
    while i < len(command):
        ch = command[i]
        if quote:
            current.append(ch)
            if ch == "\\" and quote == '"' and i + 1 < len(command):
                current.append(command[i + 1])
                i += 1
            elif ch == quote:
                quote = None
            i += 1
            continue
        if ch in "'\"":
            quote = ch
            current.append(ch)
            i += 1
            continue
        if ch == "\\" and i + 1 < len(command):
            current.append(command[i : i + 2])
            i += 2
            continue
        op = next((o for o in OPERATORS if command.startswith(o, i)), None)
        if op:
            stages.append("".join(current).strip())
            current = [op, " "]
            i += len(op)
            continue
        current.append(ch)
        i += 1
    stages.append("".join(current).strip())
    cleaned = [one_line(stage, 400) for stage in stages if stage and stage not in OPERATORS]
    return tuple(cleaned) or (one_line(command, 400) or "(empty)",)


def _bound(fn: Callable[..., Any], args: Any, kwargs: Any) -> dict[str, Any]:
    try:
        bound = inspect.signature(fn).bind_partial(*(args or ()), **(kwargs or {}))
    except TypeError:
        return dict(kwargs or {})
    bound.apply_defaults()
    return dict(bound.arguments)


def _error_text(error: object) -> str:
    text = str(error) if error is not None else "failed"
    return one_line(text.split(": ", 1)[1] if text.split(": ", 1)[0].isidentifier() else text)


def _info(result: object) -> dict[str, Any]:
    return getattr(result, "info", None) or {}


class Renders:
    """Render callbacks for one workspace (paths in headlines are shortened against it)."""

    def __init__(self, workspace: Path, signatures: dict[str, Callable[..., Any]]) -> None:
        self.workspace = workspace
        self.signatures = signatures

    def _args(self, tool: str, args: Any, kwargs: Any) -> dict[str, Any]:
        return _bound(self.signatures[tool], args, kwargs)

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
            return ActivityPresentation("Read file", f"{short}: {_error_text(error)}")
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
            return ActivityPresentation("Search files", f"{query}{where}: {_error_text(error)}")
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
            return ActivityPresentation("List files", f"{short}: {_error_text(error)}")
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
            return ActivityPresentation("Edit file", f"{target}: {_error_text(error)}")
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
                "Run command", f"{summary}: {_error_text(error)}", (ActivityTerminal(stages),)
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
            return ActivityPresentation("List commands", _error_text(error))
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
            return ActivityPresentation("Run tests", f"{scope}: {_error_text(error)}")
        if phase == RenderPhase.START or result is None:
            return ActivityPresentation("Run tests", scope)
        return tests_presentation(result, scope, self._abs)


def terminal_lines(pairs: list[tuple[str, str]]) -> tuple[tuple[ActivityTerminalLine, ...], int]:
    kept = pairs[-TERMINAL_LINES:]
    lines = tuple(ActivityTerminalLine(text, stream) for stream, text in kept)  # type: ignore[arg-type]
    return lines, len(pairs) - len(kept)


def _shell_state(handle: Any) -> str:
    if handle.running:
        return f"running (pid {handle.pid})"
    if handle.timed_out:
        return f"stopped after its timeout, exit {handle.exit_code}"
    if handle.stopped:
        return f"stopped, exit {handle.exit_code}"
    return f"exit {handle.exit_code}"


def shell_presentation(handle: Any, action: str = "") -> ActivityPresentation:
    """The current state of a shell handle (used for the call and for its method calls);
    ``action`` says what a method call did, e.g. ``typed 'y\\n'``."""
    stages = command_stages(handle.command)
    lines, omitted = terminal_lines(handle.output_lines())
    terminal = ActivityTerminal(stages, lines, handle.exit_code, omitted)
    parts = [one_line(handle.command, 160), *([action] if action else []), _shell_state(handle)]
    runtime = getattr(handle, "runtime", None)
    aside = f"{runtime:.1f} s" if runtime is not None and not handle.running else None
    return ActivityPresentation(
        "Run command", " · ".join(parts), (terminal,), handle_id=handle.id, aside=aside
    )


def _shell_action(method: str, phase: str, given: dict[str, Any]) -> str:
    if method == "type":
        return f"typed {one_line(repr(given.get('text', '')), 60)}"
    if method == "logs":
        return "read output"
    if method == "stop":
        return "stopping" if phase == RenderPhase.START else ""  # the state says "stopped, exit …"
    seconds = given.get("seconds", 30)
    limit = (
        "no limit"
        if seconds is None
        else f"{seconds:g} s"
        if isinstance(seconds, int | float)
        else repr(seconds)
    )
    # Once it returned, the call says how long the command really ran (the aside), not its limit.
    return f"waiting ({limit})" if phase == RenderPhase.START else "waited"


def shell_call_presentation(
    handle: Any,
    method: str,
    *,
    phase: str,
    args: Any = (),
    kwargs: Any = None,
    error: Any = None,
) -> ActivityPresentation:
    """One ``logs``/``wait``/``type``/``stop`` call on a shell handle: what the call did and
    the process's state now, under the same ``handle_id`` as the ``shell()`` call."""
    given = _bound(getattr(handle, method), args, kwargs)
    action = _shell_action(method, phase, given)
    if phase == RenderPhase.FAILURE:
        return ActivityPresentation(
            "Run command",
            f"{one_line(handle.command, 160)} · {action or method}: {_error_text(error)}",
            shell_presentation(handle).content,
            handle_id=handle.id,
        )
    return shell_presentation(handle, action)


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
