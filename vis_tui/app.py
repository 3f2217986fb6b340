"""The Vis terminal app: wires the screens to the core (its ``Frontend``) and the session."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import importlib
import select
import signal
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import events
from textual.app import App, SuspendNotSupported
from textual.screen import Screen

from vis_core.frontend import check_in_background, open_browser, welcome_facts
from vis_core.model.exit_status import EXIT_OK
from vis_tui.block_context import DEFAULT_PACING, AnswerPacing
from vis_tui.collector import CHECK_EVERY, IdleCollector, resume_after_start
from vis_tui.editor import NO_EDITOR, chip_file, editor_command, run_editor, workspace_file
from vis_tui.links import opens
from vis_tui.messages import CommandActionRequested
from vis_tui.screens.main import MainScreen
from vis_tui.widgets.paths import OpenPath
from vis_tui.widgets.transcript import escape_markdown

if TYPE_CHECKING:
    import subprocess

    from vis_core.frontend import (
        CommandResult,
        Frontend,
        HostOptions,
        SaveResult,
        Session,
        WelcomeFacts,
    )
    from vis_core.model.command import CommandAction
    from vis_tui.screens.help import HelpScreen
    from vis_tui.screens.sessions import SessionsScreen

CoreOpener = Callable[[], Awaitable["Frontend"]]

__all__ = ["HelpScreen", "SessionsScreen", "VisApp", "run_tui"]

HANGUP_CHECK_EVERY = 1.0  # seconds between two looks at whether the terminal is still there
# Loaded when first needed, not before the first frame (startup figure in bench/tui_startup.py).
_LATER = {"HelpScreen": "vis_tui.screens.help", "SessionsScreen": "vis_tui.screens.sessions"}


def __getattr__(name: str) -> Any:
    if name in _LATER:
        return getattr(importlib.import_module(_LATER[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# Loaded once the session is shown: markdown-it, Rich's Markdown and Pygments.
_DRAWN_LATER = ("vis_tui.widgets.answer_markdown", "vis_tui.widgets.system_message", "rich.syntax")
# And a resumed session's stored turns, before they are shown.
_STORED_DRAWN_WITH = (*_DRAWN_LATER, "vis_tui.widgets.stored_turn")


def _prepare_drawing(names: tuple[str, ...]) -> None:
    """Import ``names``, and have Pygments build its Python lexer's patterns (~0.1 s at its
    first use, which a block's row otherwise makes on the loop)."""
    for name in names:
        importlib.import_module(name)
    from textual.highlight import highlight

    highlight("pass", language="python")


def _help_screen() -> Screen[Any]:
    from vis_tui.screens.help import HelpScreen

    return HelpScreen()


class VisApp(App[int]):
    """One Vis window: a main screen over one session at a time."""

    TITLE = "Vis"
    SCREENS = {"help": _help_screen}
    ENABLE_COMMAND_PALETTE = False
    BINDINGS = [("f1", "help", "Keys"), ("f2", "settings", "Settings")]

    def __init__(
        self,
        options: HostOptions,
        *,
        continue_: bool = False,
        resume: str | None = None,
        frozen: bool = False,
        open_core: CoreOpener | None = None,
        welcome: subprocess.Popen[bytes] | None = None,
        answer_pacing: AnswerPacing = DEFAULT_PACING,
    ) -> None:
        """``welcome``: the child reading a new session's welcome facts (``welcome_probe``);
        ``answer_pacing``: how streamed answers are re-rendered."""
        super().__init__()
        self.options = options
        self.continue_ = continue_
        self.resume = resume
        self.frozen = frozen
        self._open_core = open_core
        self.core: Frontend | None = None  # the core, once open (after the first frame)
        self.session: Session | None = None
        self.collector = IdleCollector()
        self.main = MainScreen(options.workspace, answer_pacing, self.collector.touch)
        self.ready = asyncio.Event()  # the session is open and shown
        self.painted = asyncio.Event()  # the transcript shows the session's newest turns
        self._facts: asyncio.Future[WelcomeFacts] | None = None  # for the welcome header
        self._welcome_probe = welcome
        self._command_actions: (
            dict[CommandAction, Callable[[CommandResult], Awaitable[None]]] | None
        ) = None

    @property
    def command_actions(self) -> dict[CommandAction, Callable[[CommandResult], Awaitable[None]]]:
        """What the app does for a command's action (``/new``, ``/sessions``, ``/quit``…)."""
        if self._command_actions is None:
            from vis_core.model.command import CommandAction
            from vis_tui import model_setup

            self._command_actions = {
                CommandAction.NEW_SESSION: lambda r: self.action_new_session(),
                CommandAction.OPEN_SESSIONS: lambda r: self._sync(self.action_sessions),
                CommandAction.OPEN_HELP: lambda r: self._show_help(r),
                CommandAction.QUIT: lambda r: self._sync(lambda: self.exit(0)),
                CommandAction.RELOAD: lambda r: self._sync(  # "N loaded, M failed" and why
                    lambda: self.notify(r.body or r.title, title=r.title, markup=False)
                ),
                CommandAction.OPEN_SETTINGS: lambda r: self._sync(self.action_settings),
                CommandAction.OPEN_MCP: lambda r: self._sync(lambda: self.action_mcp(r.data)),
                CommandAction.OPEN_SESSION: self._open_forked,
                CommandAction.OPEN_MODELS: lambda r: self._flow(model_setup.choose_model),
                CommandAction.OPEN_LOGIN: lambda r: self._flow(model_setup.log_in),
                CommandAction.OPEN_DRAFT: lambda r: self._show_draft(r),
            }
        return self._command_actions

    # -- start ---------------------------------------------------------------------------
    def get_default_screen(self) -> Screen[Any]:
        """The main screen is the base of the stack: no blank screen is composed, styled and
        painted before it, and its CSS loads with the app's (a pushed screen's CSS makes
        Textual parse every stylesheet again)."""
        return self.main

    def on_mount(self) -> None:
        # SIGTERM/SIGHUP (a closed terminal, a service manager) quit as Ctrl+Q does: the
        # running turn ends as cancelled in the store and the sandbox and its processes stop.
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGHUP):
            loop.add_signal_handler(sig, lambda sig=sig: self.exit(return_code=128 + sig))
        # A terminal that went away without a SIGHUP reaching Vis (it did not control it):
        # Textual's input thread read its end again and again, at full CPU, for ever.
        if not self.is_headless:
            self.set_interval(HANGUP_CHECK_EVERY, self._quit_if_terminal_gone)

    def _quit_if_terminal_gone(self) -> None:
        if terminal_gone(sys.__stdin__.fileno() if sys.__stdin__ is not None else 0):
            self.exit(return_code=128 + signal.SIGHUP)  # as the hang-up signal does

    def on_ready(self) -> None:
        # The core loads after the first frame, so the prompt takes keys meanwhile (Enter
        # queues the message until the session is ready). Not from on_mount: while the app
        # starts, Textual runs after-refresh callbacks before the frame is written, and the
        # import thread would then hold the GIL the first frame needs.
        # What a new session's welcome header says comes now: from `vis`'s child that read
        # it meanwhile (vis_core/welcome_probe.py), else read in a thread. The jail check (a
        # jailed `true`, once per process) starts now too: before the first frame, its thread
        # held up the frame (bench/tui_startup.py).
        check_in_background()
        if self.resume is None and not self.continue_:  # a new session: no picker first
            self._facts = asyncio.get_running_loop().run_in_executor(
                None, welcome_facts, self.options, self._welcome_probe
            )
            self._facts.add_done_callback(self._show_welcome)  # in the frame that comes next
        self.call_after_refresh(lambda: self.run_worker(self._start(), group="start"))

    async def _start(self) -> None:
        from vis_core.frontend import Frontend, load_core, warm

        await self._paint_welcome()  # a new session opens: its header first
        warm()  # the build globals extensions need (git, in a source checkout) meanwhile
        try:
            if self._open_core is not None:
                core = await self._open_core()
            else:
                # Importing the core is most of the startup; a thread keeps keys flowing.
                await asyncio.to_thread(load_core)
                core = await Frontend.open(
                    self.options,
                    loading_extensions=lambda: self.main.start_step("loading extensions…"),
                )
        except Exception as exc:  # shown to the person; the app stays usable for reading
            self.main.start_step("could not start")
            self.main.drop_welcome()
            self.main.transcript.add_message(
                f"**Vis could not start:** {escape_markdown(str(exc))}", classes="error"
            )
            return
        finally:
            resume_after_start()
        # the forms' screen and widgets (Textual's Select, TextArea…): ~0.15 s of imports
        await asyncio.to_thread(importlib.import_module, "vis_tui.screens.form")
        self.core = core
        from vis_tui.screens.form import attach_forms

        attach_forms(self, core)  # vis.ask forms; vis.live views come as events (widgets.live)
        core.on_setting_saved(self._setting_saved)
        core.on_reloaded(self.main.list_commands)
        if core.model_problem:
            self.main.status_bar.model = core.model_label
        self.main.start_step("opening the session…")
        try:
            await self._open_first_session(core)
        except Exception as exc:
            self.main.start_step("could not start")
            self.main.drop_welcome()
            self.main.transcript.add_message(
                f"**Vis could not open the session:** {escape_markdown(str(exc))}", classes="error"
            )
            return
        self.ready.set()
        # The restored session is long-lived, and full collections wait for a pause in input:
        # PageUp through a long session paid 30-100 ms pauses for them.
        self.collector.start()
        self.set_interval(CHECK_EVERY, self.collector.tick)
        # What answers draw with, and the model's SDK, loaded in a thread rather than with the
        # first answer on the app's thread: kept off the first frame (see the modules), it
        # starts once the session's first frame (its welcome header) is painted.
        self.call_after_refresh(self._load_drawn_later)

    async def _paint_welcome(self) -> None:
        """Paint the new session's welcome header from the files (model, trust, jail mode),
        then open the core: the app reads as ready while the rest starts behind the prompt
        (a request typed meanwhile waits in the queue and is sent once the session is open)."""
        if self._facts is None:
            return
        await asyncio.wait([self._facts])  # _show_welcome mounted the header (or not)
        if not self.main.welcome_shown:
            return
        painted = asyncio.Event()
        self.call_after_refresh(painted.set)  # the core's import would hold up this frame
        await painted.wait()

    def _show_welcome(self, facts: asyncio.Future[WelcomeFacts]) -> None:
        if facts.cancelled() or facts.exception() is not None or not self.main.is_attached:
            return  # the core meets the same problem as it opens, and says so
        self.main.show_welcome(facts.result())

    def _load_drawn_later(self) -> None:
        self.run_worker(asyncio.to_thread(_prepare_drawing, _DRAWN_LATER), group="start")
        if self.session is not None:  # the provider's SDK: else the first request waits for it
            self.session.model.prepare()

    async def _open_first_session(self, core: Frontend) -> None:
        session: Session | None = None
        problem = ""  # shown once the session that opens instead is on screen
        note = ""
        if self.resume == "":  # --resume without an ID: the person picks one (Esc: a new one)
            self.resume = await self.push_screen(self._sessions_picker(core), wait_for_dismiss=True)
        if self.resume or self.continue_:
            # what stored turns are drawn with (markdown-it, Pygments: a second and more of
            # CPU), imported on the loop by the first stored answer's layout otherwise
            await asyncio.to_thread(_prepare_drawing, _STORED_DRAWN_WITH)
        if self.resume:
            try:
                stored = core.stored_session_id(self.resume)
                if stored is not None:
                    await self.main.preview(core, stored)
                    self.painted.set()
                session = await core.open_session(self.resume)
            except LookupError as exc:  # unknown, or open in another Vis
                problem = f"**Cannot resume:** {escape_markdown(str(exc))}"
        elif self.continue_:
            latest = core.latest_session_id()
            if latest is not None:
                await self.main.preview(core, latest)
                self.painted.set()
                try:
                    session = await core.open_session(latest)
                except LookupError as exc:  # open in another Vis: start a new one here
                    problem = f"**Cannot continue:** {escape_markdown(str(exc))}"
            else:  # said once the new session is on screen (attaching it clears the transcript)
                note = "No earlier session in this workspace; started a new one."
        if session is None:
            session = await core.new_session()
        await self.show_session(session)
        if problem:
            self.main.transcript.add_message(problem, classes="error")
        elif note:
            self.main.transcript.add_message(note)

    async def show_session(self, session: Session) -> None:
        """Show ``session``; the one shown before closes once it is idle (``leave_session``),
        so another Vis may open it."""
        previous, self.session = self.session, session
        assert self.core is not None
        await self.main.attach(self.core, session)
        self.apply_theme()
        self.painted.set()
        if previous is not None and previous is not session:
            await self.core.leave_session(previous)

    async def _setting_saved(self, result: SaveResult) -> None:
        if result.setting_id == "theme":
            self.apply_theme()

    def apply_theme(self) -> None:
        """Use the ``theme`` setting (a global choice; applied at start and when saved)."""
        if self.core is None:
            return
        session_id = self.session.id if self.session is not None else None
        theme = self.core.setting("theme", self.theme, session_id)
        if theme in self.available_themes and theme != self.theme:
            self.theme = theme

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        """A frozen app (snapshots) shows each focused text cursor steadily: a picture taken
        on a loaded machine half a second after the last key caught a blinking one hidden."""
        from textual.widgets import Input, TextArea

        if self.frozen and isinstance(event.widget, Input | TextArea):
            event.widget.cursor_blink = False

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, events.Key | events.MouseEvent | events.Paste):
            self.collector.touch()
        await super().on_event(event)

    @property
    def resume_line(self) -> str | None:
        """The line the terminal keeps after quitting: how to come back to this session
        (none for a session closed unused: it was not kept)."""
        if self.session is None:
            return None
        if self.core is not None and self.core.closed_unused(self.session.id):
            return None
        return f"Resume this session: vis --resume {self.session.id}"

    async def on_unmount(self) -> None:
        self.collector.close()
        if self.core is not None:
            await self.core.close()

    # -- actions -------------------------------------------------------------------------
    async def on_command_action_requested(self, message: CommandActionRequested) -> None:
        handler = self.command_actions.get(message.action)
        if handler is not None:
            await handler(message.result)

    @staticmethod
    async def _sync(function: Callable[[], Any]) -> None:
        function()

    async def _flow(self, flow: Callable[[VisApp], Awaitable[None]]) -> None:
        """Run a screen flow (``/model``, ``/login``) in a worker: it waits for its pickers."""
        self.run_worker(flow(self), group="setup", exclusive=True)

    async def _show_help(self, result: CommandResult) -> None:
        self.main.transcript.add_message(result.markdown)
        self.action_help()

    async def _show_draft(self, result: CommandResult) -> None:
        """``/draft``: the diff stays in the transcript; the draft screen offers its actions,
        each run as ``/draft ACTION`` (its outcome lands in the transcript). A refused
        approval (the draft changed since it was shown) shows it again, with its message.
        The status bar counts the files again: a file may have come outside a turn."""
        from vis_tui.screens.draft import DraftScreen

        self.main.count_draft_files()

        if result.ok:  # a refusal is in the transcript already, as an error
            self.main.transcript.add_message(result.markdown)
        view = result.data

        def chosen(action: str | None) -> None:
            if action == "approve" and view.message:
                self.main.run_command(f"/draft approve {view.message}")
            elif action:
                self.main.run_command(f"/draft {action}")

        self.push_screen(DraftScreen(result.data), chosen)

    def action_settings(self) -> None:
        """Open Settings (``/settings`` or F2) for the current session; runs no extension code."""
        from vis_tui.screens.settings import SettingsScreen

        if self.core is None or isinstance(self.screen, SettingsScreen):
            return
        self.push_screen(
            SettingsScreen(
                self.core.settings,
                session_id=self.session.id if self.session else None,
                reload=self.core.reload,
            )
        )

    def action_mcp(self, sign_in: str | None = None) -> None:
        """Open ``/mcp``: the MCP servers of this workspace (``sign_in``: start signing in to
        that server, as ``/mcp login NAME`` asks)."""
        from vis_tui.screens.mcp import McpScreen

        if self.core is not None and not isinstance(self.screen, McpScreen):
            self.push_screen(McpScreen(self.core.mcp, sign_in=sign_in))

    def action_help_quit(self) -> None:
        """Ctrl+C on a screen above the main one (Settings; a modal one through
        ``keys.QUIT_KEY``) that no text field took to copy: its selected text is copied,
        else a second press quits, as on the main screen and in F1 (Textual's own action only
        told to press Ctrl+Q). A hidden draft and a running turn are left alone."""
        selected = self.screen.get_selected_text()
        if selected:
            self.copy_to_clipboard(selected)
        else:
            self.main.quit_on_second_press()

    def action_help(self) -> None:
        from vis_tui.screens.help import HelpScreen

        if not isinstance(self.screen, HelpScreen):
            self.push_screen("help")

    def action_sessions(self) -> None:
        if self.core is None:
            return

        async def chosen(session_id: str | None) -> None:
            if session_id and self.core and (self.session is None or session_id != self.session.id):
                try:
                    await self.show_session(await self.core.open_session(session_id))
                except LookupError as exc:  # e.g. open in another Vis
                    self.notify(str(exc), severity="error", markup=False)

        current = self.session.id if self.session is not None else None
        self.push_screen(self._sessions_picker(self.core, current), chosen)

    @staticmethod
    def _sessions_picker(core: Frontend, current: str | None = None) -> SessionsScreen:
        from vis_tui.screens.sessions import SessionsScreen

        return SessionsScreen(core, current=current)

    async def open_session(self, session_id: str) -> None:
        """Show the stored session ``session_id`` (``/fork`` opens the fork this way)."""
        if self.core is not None:
            await self.show_session(await self.core.open_session(session_id))

    async def _open_forked(self, result: CommandResult) -> None:
        """Show the session a command made (``/fork``), and say so where the person looks:
        in its transcript and as a toast (the titles differ only by a "(fork)" at the end)."""
        await self.open_session(str(result.data))
        if self.session is None or self.session.id != result.data:
            return
        from vis_tui.widgets.transcript import escape_markdown

        said = f"**{escape_markdown(result.title)}.** {escape_markdown(result.body or '')}"
        self.main.transcript.add_message(said.strip())
        self.notify(result.body or result.title, title=result.title, markup=False)

    async def action_new_session(self) -> None:
        if self.core is not None:
            await self.show_session(await self.core.new_session())

    def open_url(self, url: str, *, new_tab: bool = True) -> None:
        """Only a web or mail address reaches the browser: Textual's own links (a Markdown
        block's, a link style's) call this directly; any other scheme is said, not opened.
        The browser is started by a program found outside the workspace, never by Python's
        ``webbrowser`` (it runs ``xdg-settings`` and ``xdg-open`` by name off ``PATH``)."""
        if not opens(url):
            self.notify(f"Not opened: {url} (only web and mail links open)", markup=False)
            return
        if self.is_web:  # in a browser tab (vis --web): the page opens it
            super().open_url(url, new_tab=new_tab)
        elif not open_browser(url, (Path.cwd(), Path(self.options.workspace))):
            self.notify(f"No browser could open {url} here.", severity="warning", markup=False)

    def action_open_link(self, url: str) -> None:
        """A web or mail address opens in the browser; any other address with a scheme is
        not opened (said so); a path opens in the editor when it lies in the workspace."""
        if opens(url):
            self.open_url(url)
        elif "://" in url or ":" in url.split("/", 1)[0]:
            self.notify(f"Not opened: {url} (only web and mail links open)", markup=False)
        elif (target := workspace_file(url, Path(self.options.workspace))) is None:
            self.notify(
                f"Not opened: {url} (a link opens only a file in the workspace)", markup=False
            )
        else:
            self.action_open_path(str(target))

    def on_open_path(self, message: OpenPath) -> None:
        self.action_open_path(message.path)

    def action_open_path(self, path: str) -> None:
        """Open ``path`` in ``$VISUAL``/``$EDITOR`` when it lies in the workspace or Vis's
        data folder; the app suspends while the editor runs."""
        roots = [Path(self.options.workspace), *([self.core.data_dir] if self.core else [])]
        target = chip_file(path, roots)
        if target is None:
            self.notify(
                f"Not opened: {path} (Vis opens only a file in the workspace or its own "
                "saved outputs)",
                markup=False,
            )
            return
        command = editor_command(target)
        if command is None:
            self.notify(NO_EDITOR.format(path=path), severity="warning", markup=False)
            return
        try:
            with self.suspend():
                problem = run_editor(command)
        except SuspendNotSupported:
            problem = run_editor(command)
        if problem:
            self.notify(problem, severity="error", markup=False)
        self.refresh()


def terminal_gone(fd: int) -> bool:
    """The terminal on ``fd`` hung up (its window or connection closed), without reading it."""
    poller = select.poll()
    poller.register(fd, 0)  # no events asked: hang-ups and errors are always told
    return any(events & (select.POLLHUP | select.POLLERR) for _, events in poller.poll(0))


def run_tui(
    options: HostOptions,
    continue_: bool = False,
    resume: str | None = None,
    welcome: subprocess.Popen[bytes] | None = None,
) -> int:
    """Run the terminal app until the person quits; returns the process exit status.
    ``welcome``: the child reading a new session's welcome facts (``welcome_probe``)."""
    app = VisApp(options, continue_=continue_, resume=resume, welcome=welcome)
    result = app.run()
    # The session is saved and closed: what the app made is left to the process's exit, which
    # freed it anyway. Unfrozen (the collector's close), Python's last full collection walked
    # all of it first (~0.17 s at a quit).
    gc.freeze()
    if app.resume_line:
        with contextlib.suppress(OSError):  # the terminal may be gone (a hang-up)
            print(app.resume_line, flush=True)
    return result if isinstance(result, int) else (app.return_code or EXIT_OK)
