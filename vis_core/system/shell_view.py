"""How a shell handle looks as an Activity: its command's stages, the tail of its output, its
state, and what each ``logs``/``wait``/``type``/``stop`` call did."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from vis_core.model.activity import (
    ActivityPresentation,
    ActivityTerminal,
    ActivityTerminalLine,
    RenderPhase,
)
from vis_core.model.block import format_duration
from vis_core.text_limits import one_line

TERMINAL_LINES = 200
SHOWN_LINES = 60  # of a command of several lines
OPERATORS = ("&&", "||", "|&", "|", ";")
# Outside quotes, these make a command's structure more than a list of stages (subshells,
# command substitution, groups, comments, ``case`` arms, here-documents): shown as written.
_NOT_A_LIST = ("(", ")", "`", "{", "}", ";;", ";&", "<<")


def command_stages(command: str) -> tuple[str, ...]:
    """How a shell command is shown: split at top-level ``&&``, ``||``, ``|`` and ``;`` when
    that is certainly right, else as written, one stage per line.

    Later stages start with their operator, e.g. ``("make", "&& make test", "| tee log")``.
    A command of several lines, or one with a subshell, a group, a command substitution, a
    comment, a ``case`` arm or a here-document, is shown line by line as written.
    """
    stages = _list_stages(command)
    if stages is None:
        lines = command.replace("\r\n", "\n").replace("\r", "\n").strip("\n").split("\n")
        if len(lines) > SHOWN_LINES:  # a long here-document: its start (a copy holds it all)
            more = len(lines) - SHOWN_LINES + 1
            lines = [*lines[: SHOWN_LINES - 1], f"… {more:,} more lines of the command"]
        return tuple(_shown_line(line) for line in lines)
    cleaned = [one_line(stage, 400) for stage in stages if stage and stage not in OPERATORS]
    return tuple(cleaned) or (one_line(command, 400) or "(empty)",)


def _shown_line(line: str) -> str:
    """One line of a command as written (its spacing kept), cut to an Activity's line."""
    kept = line.rstrip().expandtabs(4)
    if len(kept) > 400 or len(kept.encode("utf-8")) > 400:
        kept = kept.encode("utf-8")[:396].decode("utf-8", "ignore")[:399] + "…"
    return kept


def _list_stages(command: str) -> list[str] | None:
    """The stages of a one-line list of simple commands, or None when it is more than that."""
    if "\n" in command or "\r" in command:
        return None
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
            elif quote == '"' and (ch == "`" or command.startswith("$(", i)):
                return None  # a substitution inside quotes may hold quotes of its own
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
        if ch == "#" and (i == 0 or command[i - 1] in " \t;&|"):
            return None  # a comment: its operators are text
        if any(command.startswith(mark, i) for mark in _NOT_A_LIST):
            return None
        op = next((o for o in OPERATORS if command.startswith(o, i)), None)
        if op:
            stages.append("".join(current).strip())
            current = [op, " "]
            i += len(op)
            continue
        current.append(ch)
        i += 1
    stages.append("".join(current).strip())
    return stages


def command_terminal(
    command: str,
    lines: tuple[ActivityTerminalLine, ...] = (),
    exit_code: int | None = None,
    omitted: int = 0,
) -> ActivityTerminal:
    """A command's terminal block: its stages to show, and the command exactly as it ran (what
    is copied)."""
    return ActivityTerminal(command_stages(command), lines, exit_code, omitted, command)


def bound_arguments(fn: Callable[..., Any], args: Any, kwargs: Any) -> dict[str, Any]:
    """The call's arguments by parameter name, defaults filled in; a call that does not fit
    the signature (an unknown keyword, too many arguments) keeps every argument as given:
    positional ones under the names of the parameters they would fill."""
    signature = inspect.signature(fn)
    try:
        bound = signature.bind_partial(*(args or ()), **(kwargs or {}))
    except TypeError:
        positional = [
            p.name
            for p in signature.parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
        given = dict(zip(positional, args or (), strict=False))
        return {**given, **(kwargs or {})}
    bound.apply_defaults()
    return dict(bound.arguments)


def error_text(error: object) -> str:
    text = str(error) if error is not None else "failed"
    tool, said, message = text.partition(": ")
    return one_line(message if said and tool.isidentifier() else text)


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
    lines, omitted = terminal_lines(handle.output_lines())
    terminal = command_terminal(handle.command, lines, handle.exit_code, omitted)
    parts = [one_line(handle.command, 160), *([action] if action else []), _shell_state(handle)]
    runtime = getattr(handle, "runtime", None)
    aside = format_duration(runtime) if runtime is not None and not handle.running else None
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
    given = bound_arguments(getattr(handle, method), args, kwargs)
    action = _shell_action(method, phase, given)
    if phase == RenderPhase.FAILURE:
        return ActivityPresentation(
            "Run command",
            one_line(f"{one_line(handle.command, 160)} · {action or method}: {error_text(error)}"),
            shell_presentation(handle).content,
            handle_id=handle.id,
        )
    return shell_presentation(handle, action)
