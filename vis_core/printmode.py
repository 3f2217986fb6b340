"""``vis run``: one turn without the app, streamed to the terminal (or as JSON lines)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import errno
import functools
import gc
import os
import signal
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from vis_core.events import (
    ActivityEnded,
    ActivityStarted,
    AssistantDelta,
    BackgroundCommandEnded,
    BackgroundFilesChanged,
    BlockFinished,
    CommandNoted,
    ContextNote,
    DraftChanged,
    Event,
    FoldCreated,
    ImageAttached,
    IterationStarted,
    Notification,
    TurnEnded,
    UsageReported,
    event_payload,
)
from vis_core.model.activity import (
    CHILD_SESSION_TOOLS,
    ActivityRecord,
    ActivityState,
    error_in_header,
    shown_state,
    step_counts,
    step_tags,
)
from vis_core.model.block import (
    PYTHON_EXECUTION,
    FileChangeKind,
    error_line,
    first_code_line,
    format_duration,
    output_tail,
    plain_error,
)
from vis_core.model.channel import Channel
from vis_core.model.exit_status import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE
from vis_core.model.lines import on_one_line
from vis_core.model.notes import background_files_line
from vis_core.model.turn import BLOCK_CANCELLED, TurnStatus
from vis_core.model.undo import NOT_KEPT
from vis_core.system.exiting import exit_now
from vis_core.terminal import raw_stream, shell_command, terminal_json, terminal_text
from vis_core.text_limits import one_line
from vis_core.tools.display import plural

if TYPE_CHECKING:
    from rich.console import Console

CLOSE_SECONDS = 10
# seconds the MCP servers still connecting when the turn ends get to settle: a misconfigured
# one (no such command, exits, refused) fails within about a second, and is said before exit
SETTLE_SECONDS = 5.0
STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)
EXIT_MAX_TURNS = 3  # `vis run --max-turns N` stopped the run
EXIT_MAX_COST = 4  # `vis run --max-cost USD` stopped the run
EXIT_OUTPUT_FAILED = 74  # its output could not be written (a full disk, EIO): EX_IOERR
EXIT_CODES = {
    TurnStatus.COMPLETED: EXIT_OK,
    TurnStatus.FAILED: EXIT_FAILED,
    TurnStatus.MAX_ITERATIONS: EXIT_FAILED,
    TurnStatus.INCOMPLETE: EXIT_FAILED,  # the answer was cut at the output limit
    TurnStatus.CANCELLED: EXIT_INTERRUPTED,
}
_STATE_MARKS = {
    ActivityState.SUCCEEDED: ("✓", "green"),
    ActivityState.FAILED: ("✗", "red"),
    ActivityState.CANCELLED: ("⊘", "yellow"),
    ActivityState.RUNNING: ("…", "cyan"),
}


def plain(text: str, *, tabs: bool = False) -> str:
    """Untrusted text for one field of a Rich-markup line: no markup, no control sequences,
    and no line break, tab (unless ``tabs``) or zero-width space, shown as escapes instead
    (``\\n``): a file name cannot start a line of its own. The consoles print emoji codes
    such as ``:x:`` as written."""
    return plain_text(on_one_line(text, tabs=tabs))


def plain_text(text: str) -> str:
    """Untrusted text of a message that may hold several lines (a notice, a turn's error)
    for a Rich-markup line: no markup, no control sequences."""
    from rich.markup import escape

    return escape(terminal_text(text))


def first_line(text: str) -> str:
    """The first line of ``text`` that is not blank: an Activity's line says an error by it,
    as the app's row does (the error is whole in ``--json``)."""
    return next((line for line in text.splitlines() if line.strip()), "")


def activity_line(record: ActivityRecord) -> str:
    """One Rich-markup line: state mark, headline, summary or outcome, verdict, aside."""
    mark, colour = _STATE_MARKS[shown_state(record)]
    p = record.presentation
    headline = plain(p.headline if p else record.tool)
    parts = [f"[{colour}]{mark}[/] [bold]{headline}[/]"]
    detail = (p.summary or p.outcome or "") if p else ""
    if detail:
        parts.append(plain(detail))
    if p is not None and p.verdict:
        parts.append(f"[{'green' if p.verdict == 'passed' else 'red'}]{p.verdict}[/]")
    if record.error and record.state is ActivityState.FAILED and not error_in_header(record):
        parts.append(f"[red]{plain(plain_error(first_line(record.error)))}[/]")
    if p is not None and p.aside:
        parts.append(f"[dim]{plain(p.aside)}[/]")
    return " · ".join(parts)


_CHANGE_MARKS = {
    FileChangeKind.CREATED: ("+", "green"),
    FileChangeKind.CHANGED: ("~", "yellow"),
    FileChangeKind.REMOVED: ("✗", "red"),
}


def block_line(code: str, event: BlockFinished) -> str:
    """One Rich-markup line for a finished block: state mark, the code's first line, its
    duration, the files it changed (a removed one in red; one ``/undo`` cannot restore says
    so) and its error."""
    failed = event.error is not None
    mark = "[red]✗[/]" if failed else "[green]✓[/]"
    parts = [f"{mark} [bold]python[/] {plain(first_code_line(code))}"]
    parts.append(f"[dim]{format_duration(event.duration)}[/]")
    for change in event.files:
        sign, colour = _CHANGE_MARKS[change.kind]
        lost = " [dim](/undo cannot restore it)[/]" if NOT_KEPT in change.note else ""
        parts.append(f"[{colour}]{sign} {plain(change.path)}[/]{lost}")
    if event.error:
        parts.append(f"[red]{plain(error_line(event.error))}[/]")
    return " · ".join(parts)


def printed_lines(stdout: str) -> list[str]:
    """Rich-markup lines under a block's line: the last lines it printed, after a note of
    the earlier ones (``--json`` carries all of it)."""
    tail = output_tail(stdout)
    notes = [tail.note] if tail.note else []
    if tail.earlier:
        notes.append(f"… {plural(tail.earlier, 'earlier line')}")
    return [f"  [dim]│ {plain(note)}[/]" for note in notes] + [
        f"  [dim]│[/] {plain(line, tabs=True)}" for line in tail.lines
    ]


def _console(stream: TextIO) -> Console:
    """Rich's Console on ``stream``, except that a closed pipe raises BrokenPipeError (Rich's
    own answer is SystemExit(1), which would end ``vis run`` with the turn unsaved): the
    renderer stops. It never turns emoji codes into emoji (``Widget:x:1`` is text, not
    ``Widget❌1``) and does not wrap (80 columns in a pipe), so a path or command is never cut
    in two lines; it writes Rich's colours, and what it prints is escaped with plain()."""
    from rich.console import Console

    class PipeConsole(Console):
        def on_broken_pipe(self) -> None:
            self.quiet = True
            raise BrokenPipeError(errno.EPIPE, "the output's reader closed it")

    return PipeConsole(file=raw_stream(stream), emoji=False, highlight=False, soft_wrap=True)


class PrintRenderer:
    """Writes events as they come: answer text raw, Activities one line each."""

    def __init__(
        self,
        *,
        as_json: bool,
        summarize_steps: bool = True,
        redact: Callable[[Event], Event] | None = None,
        reader_left: Callable[[str], None] | None = None,
    ) -> None:
        """``redact``: the event with saved secrets replaced, as it may be printed;
        ``reader_left``: called once, with why, when the output can no longer be written
        (the program reading it closed it, a full disk)."""
        self.as_json = as_json
        self.on_reader_left = reader_left
        self.reader_left = False  # the output's reader closed it (`vis run … | head -1`)
        self.output_error: OSError | None = None  # a write failed (a full disk, EIO)
        self.stopped_by_run = False  # the run stopped the turn and says why at its end
        self.redact = redact
        self.summarize_steps = summarize_steps
        self._ended: list[ActivityRecord] = []
        self._depths: dict[str, int] = {}  # Activity id: how far under an extension tool's
        self._code: dict[str, str] = {}  # a running block's code, by iteration id
        self._direct: dict[str, str] = {}  # a direct tool call no Activity showed: its tool
        self._mid_line = False
        # a child session's call (run_session, consult): its Activities, folded under it
        self._folded: dict[str, list[ActivityRecord]] = {}
        self._fold_of: dict[str, str] = {}  # Activity id: the child session call it is under

    # Rich loads with the first line it prints: a plain answer is written without it.
    @functools.cached_property
    def console(self) -> Console:
        return _console(sys.stdout)

    @functools.cached_property
    def errors(self) -> Console:
        return _console(sys.stderr)

    def __call__(self, event: Event) -> None:
        if self.reader_left or self.output_error is not None:
            return
        try:
            self._show(event)
        except BrokenPipeError:
            self.reader_left = True
            self._left("the program reading the output closed it")
        except OSError as exc:  # nothing more can be shown: the turn stops, the run says why
            self.output_error = exc
            self._left(f"the output could not be written: {output_problem(exc)}")

    def _left(self, why: str) -> None:
        if self.on_reader_left is not None:
            self.on_reader_left(why)

    def _show(self, event: Event) -> None:
        if self.redact is not None:
            event = self.redact(event)
        if self.as_json:
            if isinstance(event, CommandNoted):  # said by the run's CommandResult line
                return
            sys.stdout.write(terminal_json(event.to_json()) + "\n")
            sys.stdout.flush()
            return
        if isinstance(event, AssistantDelta):
            sys.stdout.write(terminal_text(event.text))
            sys.stdout.flush()
            self._mid_line = not event.text.endswith("\n")
        elif isinstance(event, ActivityStarted) and event.activity is not None:
            self._depth(event.activity)
            self._fold(event.activity)
        elif isinstance(event, ActivityEnded) and event.activity is not None:
            record = event.activity
            fold = self._fold(record)
            if fold is not None:  # shown as a count under its child session's call
                self._folded[fold].append(record)
                return
            self._ended.append(record)
            self._direct.pop(record.iteration_id or "", None)  # the Activity shows the call
            self._break_line()
            indent = "  " * self._depth(record)  # a call an extension tool made
            self.console.print(indent + activity_line(record))
            folded = self._folded.pop(record.id, None)
            if folded:
                steps = step_counts(step_tags(folded)) or plural(len(folded), "call")
                self.console.print(f"{indent}  [dim]⋯ in the child session: {steps}[/]")
        elif isinstance(event, IterationStarted) and event.tool == PYTHON_EXECUTION:
            self._code[event.iteration_id] = event.code
        elif isinstance(event, IterationStarted):
            self._direct[event.iteration_id] = event.tool
        elif isinstance(event, BlockFinished) and event.iteration_id in self._code:
            self._break_line()
            self.console.print(block_line(self._code.pop(event.iteration_id), event))
            for line in printed_lines(event.stdout):
                self.console.print(line)
        elif isinstance(event, BlockFinished) and event.iteration_id in self._direct:
            tool = self._direct.pop(event.iteration_id)
            if event.error and event.error.strip() != BLOCK_CANCELLED:  # failed before it ran
                self._break_line()
                error = plain(plain_error(error_line(event.error)))
                self.console.print(f"[red]✗[/] [bold]{plain(tool)}[/] · [red]{error}[/]")
        elif isinstance(event, ImageAttached):
            from vis_core.model.images import describe

            shown = describe(event.name, event.media_type, event.size, event.width, event.height)
            self.errors.print(f"[dim]attached {plain(shown)}[/]")
        elif isinstance(event, FoldCreated):
            self._break_line()
            gist = one_line(event.gist, 100)  # cut before escaping: no half escape
            self.console.print(
                f"[dim]⋯ folded {plain(event.key)}"
                + (f" · {plain(gist)}" if gist else " · no gist")
                + "[/]"
            )
        elif isinstance(event, ContextNote):
            self._break_line()
            self.console.print(f"[dim]⋯ {plain(event.summary())}[/]", markup=True)
        elif isinstance(event, BackgroundCommandEnded):
            self._break_line()
            self.console.print(
                f"[dim]⋯ background command {event.handle_id} ended: {plain(event.state)} · "
                f"{plain(one_line(event.command, 100))}[/]",
                markup=True,
            )
        elif isinstance(event, BackgroundFilesChanged):
            self._break_line()
            self.console.print(f"[dim]{plain(background_files_line(event))}[/]", markup=True)
            for change in event.files:
                sign, colour = _CHANGE_MARKS[change.kind]
                self.console.print(f"  [{colour}]{sign} {plain(change.path)}[/]", markup=True)
        elif isinstance(event, Notification):
            self._break_line_for_stderr()
            text = plain_text(event.text)
            self.errors.print(f"[yellow]{event.kind}:[/] {text}", markup=True)
        elif isinstance(event, DraftChanged):  # entering or leaving a draft
            self._break_line_for_stderr()
            self.errors.print(f"[yellow]✎[/] {plain_text(event.text)}", markup=True)
        elif isinstance(event, TurnEnded):
            self._break_line()
            steps = step_counts(step_tags(self._ended))
            self._ended = []
            self._depths.clear()
            self._folded.clear()
            self._fold_of.clear()
            self._code.clear()
            self._direct.clear()
            if self.summarize_steps and steps:
                self.console.print(f"[dim]{steps}[/]")
            if event.error and not (self.stopped_by_run and event.status is TurnStatus.CANCELLED):
                error = plain_text(event.error)
                self.errors.print(f"[red]{event.status.value}:[/] {error}")

    def _fold(self, record: ActivityRecord) -> str | None:
        """The child session call ``record`` is folded under, if any (the first time a
        call is seen, it is noted; a child session's call opens a fold of its own)."""
        fold = self._fold_of.get(record.id)
        if fold is None and record.parent_id is not None:
            parent = record.parent_id
            fold = parent if parent in self._folded else self._fold_of.get(parent)
            if fold is not None:
                self._fold_of[record.id] = fold
        if fold is None and record.tool in CHILD_SESSION_TOOLS:
            self._folded.setdefault(record.id, [])
        return fold

    def _depth(self, record: ActivityRecord) -> int:
        parent = record.parent_id
        return self._depths.setdefault(
            record.id, 0 if parent is None else self._depths.get(parent, 0) + 1
        )

    def _break_line(self) -> None:
        if self._mid_line:
            sys.stdout.write("\n")
            self._mid_line = False

    def _break_line_for_stderr(self) -> None:
        """Before a line on stderr: the answer's line is ended only when both go to the same
        terminal (on screen, the warning would continue it); stdout in a file or a pipe holds
        the answer exactly as streamed."""
        if self._mid_line and _same_terminal():
            self._break_line()


def output_problem(exc: OSError) -> str:
    """Why a write failed, in words (``No space left on device``)."""
    return exc.strerror or str(exc) or type(exc).__name__


def _same_terminal() -> bool:
    """Whether stdout and stderr are the same terminal."""
    try:
        out, err = sys.stdout.fileno(), sys.stderr.fileno()
        return os.isatty(out) and os.isatty(err) and os.path.sameopenfile(out, err)
    except (OSError, ValueError):
        return False


def run_print_mode(args: argparse.Namespace, workspace: Path) -> int:
    from vis_core.host import HostOptions

    options = HostOptions.from_args(args, workspace, Channel.CLI)
    in_draft = bool(getattr(args, "run_draft", False))
    continue_ = bool(getattr(args, "run_continue", False))
    resume = getattr(args, "run_resume", None)
    if continue_ and resume is not None:
        print("vis run: give either --continue or --resume ID, not both", file=sys.stderr)
        return EXIT_USAGE
    request = args.request
    if request == "-":  # `git diff | vis run -`: the request is what comes in
        if sys.stdin.isatty():  # typed, not piped: say what it waits for
            print("vis run -: type the request, then Ctrl+D on a line of its own", file=sys.stderr)
        request = sys.stdin.buffer.read().decode("utf-8", errors="replace")
        if not request.strip():
            print("vis run -: standard input was empty; pipe the request in", file=sys.stderr)
            return EXIT_USAGE
    elif not request.strip():  # `vis run "$UNSET"`: nothing to ask, and a model paid to say so
        print('vis run: the request is empty; say what to do: vis run "REQUEST"', file=sys.stderr)
        return EXIT_USAGE
    loop = asyncio.new_event_loop()
    try:
        limits = RunLimits(getattr(args, "max_cost", None), getattr(args, "max_turns", None))
        code = loop.run_until_complete(
            _run(
                options,
                request,
                as_json=args.json,
                continue_=continue_,
                resume=resume,
                limits=limits,
                in_draft=in_draft,
                plan=bool(getattr(args, "run_plan", False)),
            )
        )
    except KeyboardInterrupt:
        code = EXIT_INTERRUPTED
    finally:
        loop.close()  # does not wait for worker threads
    return exit_now(code)


@dataclass
class RunLimits:
    """``--max-cost USD`` and ``--max-turns N`` of one unattended run, and which one stopped it.

    The turn limit is the loop's own iteration limit (the call past it is recorded as not
    run); the cost limit cancels the turn, as Ctrl+C does, once the run's requests cost that
    much. Either way everything shown is saved and the session can be continued."""

    max_cost: float | None = None
    max_turns: int | None = None
    cost: float = 0.0
    stopped_by_cost: bool = False

    def apply(self, session: Any, stop: Callable[[str], None] | None = None) -> None:
        """Set the turn limit of ``session`` and watch its cost: ``stop(reason)`` (else
        ``session.cancel``) cancels the turn."""
        cancel = stop or session.cancel

        def watch(event: Event) -> None:
            if isinstance(event, UsageReported) and not self.stopped_by_cost:
                self.cost += event.cost
                if self.max_cost is not None and self.cost >= self.max_cost:
                    self.stopped_by_cost = True
                    cancel(self._cost_reason())

        if self.max_turns is not None:
            session.limits.max_iterations = self.max_turns
            session.limits.max_iterations_source = f"--max-turns {self.max_turns}"
        if self.max_cost is not None:
            session.subscribe(watch)

    def _cost_reason(self) -> str:
        return (
            f"stopped by --max-cost {self.max_cost:g}: this run's model requests cost "
            f"${self.cost:.4f}"
        )

    def outcome(self, status: TurnStatus, again: str) -> tuple[int, str] | None:
        """The exit status and message when a limit stopped the run, else None; ``again``:
        the command that goes on (:func:`continue_command`)."""
        if self.stopped_by_cost:
            return EXIT_MAX_COST, f"vis run: {self._cost_reason()}; `{again}` goes on"
        if self.max_turns is not None and status is TurnStatus.MAX_ITERATIONS:
            return EXIT_MAX_TURNS, (
                f"vis run: stopped by --max-turns {self.max_turns}: the model wanted more "
                f"turns; `{again}` goes on"
            )
        return None


def continue_command(workspace: Path, request: str | None = None) -> str:
    """``vis run --continue [REQUEST]`` as a person pastes it into a shell: quoted, and with
    ``-C WORKSPACE`` when the run's workspace is not the working directory, so it goes on in
    the session this run left, wherever the person types it."""
    here = workspace == Path.cwd().resolve()
    where = () if here else ("-C", str(workspace))
    return shell_command(
        "vis", "run", "--continue", *where, *(() if request is None else (request,))
    )


async def _open(host: Any, continue_: bool, resume: str | None) -> Any:
    """The session the request runs in: a new one, the latest (``--continue``) or ``ID``."""
    if continue_:
        latest = host.registry.latest_session_id()
        if latest is None:
            raise LookupError(
                f"there is no session in this workspace to continue ({host.space.root}); "
                "run without --continue to start one"
            )
        return await host.open_session(latest)
    if resume is not None:
        from vis_core.store import StoreError

        try:
            row = host.store.get_session(resume)
        except StoreError as exc:
            raise LookupError(str(exc)) from None
        if row is None:
            raise LookupError(f"no session {resume!r}; `vis sessions` lists them")
        return await host.open_session(row.id)
    return await host.new_session()


async def _run(
    options: Any,
    request: str,
    *,
    as_json: bool,
    continue_: bool = False,
    resume: str | None = None,
    limits: RunLimits,
    in_draft: bool = False,
    plan: bool = False,
) -> int:
    from vis_core.host import Host
    from vis_core.store import StoreError

    try:
        host = await Host.open(options)
    except StoreError as exc:
        print(f"vis: {exc}", file=sys.stderr)
        return EXIT_USAGE
    from vis_core.ask_terminal import install_terminal_asker

    # vis.ask: prompts on a terminal, else undeliverable at once
    install_terminal_asker(host.interaction)
    settle: float | None = None  # a session opened: MCP servers started (seconds to settle)
    try:
        refusal = host.settings.refusal()
        if host.models.config.problem and refusal is None:  # else the refusal says it
            print(f"vis: {terminal_text(host.models.config.problem)}", file=sys.stderr)
        from vis_core.commands.headless import command_refusal, is_command

        command = is_command(request)  # one that asks no model runs without one
        choice = host.models.choice
        if options.script is not None and (choice is None or choice.provider != "scripted"):
            print(
                "vis run: --script FILE is read by the scripted provider only, and this run's "
                f"model is {terminal_text(host.models.label)}; add --provider scripted",
                file=sys.stderr,
            )
            return EXIT_USAGE
        if host.models.problem and not command and refusal is None:
            print(host.models.problem, file=sys.stderr)
            return EXIT_USAGE
        failed = host.catalog.load_warning("run `vis run` again")  # the extensions not loaded
        for note in [*host.startup_notes(), *([failed] if failed else [])]:
            if note != refusal:  # said once, last, as why the run stops
                print(f"vis: {terminal_text(note)}", file=sys.stderr)
        if refusal is not None:  # fail closed: nothing runs on a value Vis cannot read
            print(f"vis run: {terminal_text(refusal)}", file=sys.stderr)
            return EXIT_USAGE
        refused = command_refusal(host.commands, request) if command else None
        if refused is not None:
            print(f"vis run: {terminal_text(refused)}", file=sys.stderr)
            return EXIT_USAGE
        if command:  # servers start when a turn does: most commands send no request
            host.mcp.hold()
        try:
            session = await _open(host, continue_, resume)
        except LookupError as exc:
            print(f"vis run: {terminal_text(str(exc))}", file=sys.stderr)
            return EXIT_USAGE
        settle = 0.0
        fresh = not continue_ and resume is None
        if command and fresh:  # what the command only shows leaves no session behind
            host.registry.for_a_command.add(session.id)
        print(f"vis: {terminal_text(host.space.jail_mode(session.id)[1])}", file=sys.stderr)
        # started: what exists now lives as long as the run, out of the collector's way
        # (`vis` starts with the collector off), which is on again for the turn
        gc.freeze()
        gc.enable()
        if session.model.provider is None and not command:
            print(session.model.problem, file=sys.stderr)
            return EXIT_USAGE
        summarize = bool(host.settings.get("summarize_steps", True, session.id))
        redactor = host.settings.redactor
        # output that cannot be written (`| head -1`, a full disk) ends the turn as
        # cancelled, as Ctrl+C does, saying why
        renderer = PrintRenderer(
            as_json=as_json,
            summarize_steps=summarize,
            redact=lambda event: redactor.event(event, *event_payload(event))[0],
            reader_left=session.cancel,
        )
        session.subscribe(renderer)

        def stop_turn(reason: str) -> None:
            """The run stops the turn (a limit, a signal), recorded with ``reason``; it says
            why itself at its end, once."""
            renderer.stopped_by_run = True
            session.cancel(reason)

        limits.apply(session, stop_turn)
        loop = asyncio.get_running_loop()
        stopped_by: list[signal.Signals] = []

        def stop(sig: signal.Signals) -> None:
            """SIGTERM/SIGHUP (a closed terminal, a service manager) end the turn as
            cancelled, as Ctrl+C does, and the run exits 128 + the signal's number."""
            stopped_by.append(sig)
            stop_turn(f"stopped by {sig.name}")

        loop.add_signal_handler(signal.SIGINT, session.cancel)
        for sig in STOP_SIGNALS:
            loop.add_signal_handler(sig, stop, sig)
        if in_draft:
            refused = await _enter_draft(session)
            if refused is not None:
                print(f"vis run: {terminal_text(refused)}", file=sys.stderr)
                return EXIT_USAGE
        from vis_core.agent.person_images import image_mentions
        from vis_core.model.images import ImageRefused

        if plan:
            session.plan.set(True)
        try:
            if command:  # a slash command runs; /init and command files then send a request
                ran = await _run_command(host, session, request, as_json=as_json)
                if isinstance(ran, int):
                    if session.plan.active:
                        _tell_planning(session)
                    elif ran == 1 and fresh and host.registry.latest_session_id() != session.id:
                        # `vis run "/undo"`, meant for the latest session
                        print(
                            f"vis run: {terminal_text(request.split()[0])} ran in a new session; "
                            f"`{continue_command(options.workspace, request)}` runs it in this "
                            "workspace's latest one",
                            file=sys.stderr,
                        )
                    return ran
                if session.model.provider is None:
                    print(session.model.problem, file=sys.stderr)
                    return EXIT_USAGE
                request = ran
            try:
                ended = await session.submit(request, mentions=image_mentions(request))
            except ImageRefused as exc:  # before the turn: nothing was sent
                print(f"vis run: {terminal_text(str(exc))}", file=sys.stderr)
                return EXIT_USAGE
        finally:
            for sig in (signal.SIGINT, *STOP_SIGNALS):
                loop.remove_signal_handler(sig)
        if not stopped_by and ended.status is not TurnStatus.CANCELLED:
            settle = SETTLE_SECONDS
        if in_draft:
            await _tell_review(session)
        if session.plan.active:
            _tell_planning(session)
        if renderer.reader_left:  # what is still buffered goes nowhere (see exit_now)
            return 128 + signal.SIGPIPE
        if stopped_by:
            with contextlib.suppress(OSError):  # SIGHUP: the terminal may be gone
                print(f"vis: stopped by {stopped_by[0].name}", file=sys.stderr)
            return 128 + stopped_by[0].value
        limited = limits.outcome(ended.status, continue_command(options.workspace))
        if limited is not None:
            print(limited[1], file=sys.stderr)
            return limited[0]
        if renderer.output_error is not None:
            with contextlib.suppress(OSError):  # stderr may be on the same full disk
                print(
                    "vis run: the output could not be written "
                    f"({output_problem(renderer.output_error)}): the turn stopped and is saved "
                    f"as cancelled; `{continue_command(options.workspace)}` goes on",
                    file=sys.stderr,
                )
            return EXIT_OUTPUT_FAILED
        return EXIT_CODES[ended.status]
    finally:
        if settle is not None:
            await _tell_mcp_problems(host, settle)
        try:  # a tool stuck in a worker thread must not keep vis run from ending
            await asyncio.wait_for(host.close(exiting=True), CLOSE_SECONDS)
        except TimeoutError:
            print(f"vis: closing took longer than {CLOSE_SECONDS} s; stopped", file=sys.stderr)


async def _tell_mcp_problems(host: Any, settle: float) -> None:
    """Each MCP server that failed and was not said during the turn, said once before the
    run ends (after up to ``settle`` seconds for those still connecting)."""
    with contextlib.suppress(TimeoutError):
        notes = await asyncio.wait_for(host.mcp.last_notes(settle), settle + CLOSE_SECONDS)
        with contextlib.suppress(OSError):  # SIGHUP: the terminal may be gone
            for note in notes:  # as the turn's warnings are printed
                print(f"warn: {terminal_text(note)}", file=sys.stderr)


async def _run_command(host: Any, session: Any, text: str, *, as_json: bool) -> int | str:
    """Run the slash command ``text`` in ``session``: the request it sends to the model (on
    the command's model), or the exit status after printing what it says (1: it failed)."""
    import json

    from vis_core.commands import CommandAction, PromptToSend

    result = await host.commands.run(session, text)
    prompt = result.data if result.ok and result.action is CommandAction.SEND_PROMPT else None
    if isinstance(prompt, PromptToSend):
        if prompt.model:
            from vis_core.model_choices import use_model

            switched = await use_model(host.command_deps, session, prompt.model)
            if not switched.ok:
                print(f"vis run: {terminal_text(switched.text)}", file=sys.stderr)
                return EXIT_FAILED
        return prompt.text
    try:
        if as_json:
            line = {"type": "CommandResult", "command": text, "ok": result.ok}
            line.update(title=result.title, body=result.body or "")
            compact = json.dumps(line, ensure_ascii=False, separators=(",", ":"))  # as events
            sys.stdout.write(terminal_text(terminal_json(compact)) + "\n")
        elif result.ok:
            sys.stdout.write(terminal_text(result.text) + "\n")
        else:
            print(f"vis run: {terminal_text(result.text)}", file=sys.stderr)
        sys.stdout.flush()
    except BrokenPipeError:  # what is still buffered goes nowhere (see exit_now)
        return 128 + signal.SIGPIPE
    except OSError as exc:
        with contextlib.suppress(OSError):
            print(
                f"vis run: the output could not be written ({output_problem(exc)})",
                file=sys.stderr,
            )
        return EXIT_OUTPUT_FAILED
    return EXIT_OK if result.ok else EXIT_FAILED


async def _enter_draft(session: Any) -> str | None:
    """``vis run --draft``: the turn runs in a new draft; why not, when it cannot."""
    from vis_core.drafts import DraftError
    from vis_core.extension.hooks import OperationBlocked

    drafts = session.drafts
    if drafts is None:
        return "this session cannot work in a draft"
    if drafts.draft is None:
        try:
            await drafts.create()
        except (DraftError, OperationBlocked) as exc:
            return f"no draft was made: {exc}"
    draft = drafts.draft
    assert draft is not None
    print(f"vis: working in draft {draft.label} at {terminal_text(draft.root)}", file=sys.stderr)
    return None


def _tell_planning(session: Any) -> None:
    """After a run in plan mode: how to approve the plan or plan on."""
    again = f"vis run --resume {session.id[:8]}"
    print(
        "vis: the session is in plan mode: the model changed nothing.\n"
        f'  approve:       {again} "/plan approve [NOTES]" (runs the plan)\n'
        f'  keep planning: {again} "REQUEST"\n'
        f'  leave:         {again} "/plan off"',
        file=sys.stderr,
    )


async def _tell_review(session: Any) -> None:
    """After a ``--draft`` run: how to review, approve or discard what it left."""
    drafts = session.drafts
    draft = drafts.draft if drafts is not None else None
    if drafts is None or draft is None:
        print("vis: the draft was approved or discarded during the run", file=sys.stderr)
        return
    files = await drafts.changed_files()  # staged in the draft's own index, for the review
    lines = [
        f"vis: draft {draft.label} holds {plural(len(files), 'changed file')}; "
        "the workspace is as it was.",
        *(f"  {name}" for name in files[:20]),
    ]
    if draft.branch:
        review = shell_command("git", "-C", str(draft.root), "diff", "--cached")
    else:
        review = shell_command("diff", "-ru", str(draft.workspace), str(draft.root))
    lines.append(f"  review:  {review}")
    lines.append(f"  approve: {shell_command('vis', 'drafts', 'approve', draft.label)}")
    lines.append(f"  discard: {shell_command('vis', 'drafts', 'discard', draft.label)}")
    print(terminal_text("\n".join(lines)), file=sys.stderr)
