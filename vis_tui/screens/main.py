"""The main screen: transcript, queued messages, completion popup, prompt and status bar."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import events, work
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.notifications import SeverityLevel
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Input, Static, TextArea

from vis_core.frontend import is_command, plural
from vis_core.model.command import CommandAction
from vis_core.model.images import ImageRefused
from vis_core.model.notify import NotifyKind
from vis_core.model.turn import TurnStatus
from vis_tui.block_context import DEFAULT_PACING, AnswerPacing, BlockContext
from vis_tui.keys import CHORD_ACTIONS
from vis_tui.mentions import (
    is_text_file,
    mentioned_files,
    path_completions,
    typing_mention,
    unfound_mentions,
)
from vis_tui.messages import CommandActionRequested, CoreEvent, TurnDone
from vis_tui.widgets.attachment_chips import AttachmentChips
from vis_tui.widgets.completion import (
    MODEL_PREFIX,
    CommandChoice,
    Completion,
    CompletionMenu,
    command_completions,
    model_completions,
)
from vis_tui.widgets.progress_line import ProgressLine
from vis_tui.widgets.prompt import PromptInput
from vis_tui.widgets.status import StatusBar
from vis_tui.widgets.transcript import Transcript, escape_markdown

if TYPE_CHECKING:
    from collections.abc import Callable

    from textual.worker import Worker

    from vis_core.events import Event, TurnEnded
    from vis_core.frontend import Frontend, PromptToSend, Session, WelcomeFacts
    from vis_core.model.images import PersonImage
    from vis_tui.widgets.activity import ActivityRow
    from vis_tui.widgets.fold_row import FoldRow
    from vis_tui.widgets.welcome import WelcomeHeader

QUIT_WINDOW_SECONDS = 3.0
MCP_SETTLE_SECONDS = 30.0  # how long the start waits for MCP servers before saying which failed
_TOAST_SEVERITY: dict[NotifyKind, SeverityLevel] = {
    NotifyKind.INFO: "information",
    NotifyKind.SUCCESS: "information",
    NotifyKind.WARN: "warning",
    NotifyKind.ERROR: "error",
}


class Queued(str):
    """A message waiting behind the running turn, with the images pasted for it."""

    images: tuple[PersonImage, ...] = ()


class ChordCatcher(Widget, can_focus=False):
    """Takes the one key after Ctrl+X, then gives focus back (focusable only meanwhile)."""

    DEFAULT_CSS = "ChordCatcher { width: 0; height: 0; }"

    def __init__(self) -> None:
        super().__init__(id="chord")
        self.previous: Widget | None = None

    async def on_key(self, event: events.Key) -> None:
        event.stop()
        event.prevent_default()
        self.can_focus = False
        if self.previous is not None and self.previous.is_attached:
            self.previous.focus()
        else:
            self.screen.query_one(PromptInput).focus()
        action = CHORD_ACTIONS.get(event.key)
        screen = self.screen
        if action is not None and isinstance(screen, MainScreen):
            await screen.run_action(action)

    def on_blur(self) -> None:
        self.previous = None
        self.can_focus = False


class MainScreen(Screen[None]):
    """Where a session happens."""

    # DEFAULT_CSS rather than a CSS_PATH: this is the app's first screen, and a screen's CSS
    # file makes Textual parse every stylesheet of the app again (twice) before the first frame.
    DEFAULT_CSS = """
    MainScreen {
        layout: vertical;
        background: $background;
    }
    #transcript {
        height: 1fr;
        padding: 0 1;
        scrollbar-size-vertical: 1;
    }
    #queue { height: auto; max-height: 5; padding: 0 1; }
    """
    BINDINGS = [
        Binding("escape", "escape", "Cancel the turn", show=False),
        Binding("ctrl+c", "interrupt", "Clear / cancel / quit", show=False, priority=True),
        Binding("ctrl+x", "chord", "Ctrl+X prefix", show=False, priority=True),
        Binding("pageup", "page_up", "Scroll up", show=False, priority=True),
        Binding("pagedown", "page_down", "Scroll down", show=False, priority=True),
        Binding("ctrl+home", "top", "Start of transcript", show=False, priority=True),
        Binding("ctrl+end", "bottom", "End of transcript", show=False, priority=True),
        Binding("f3", "toggle_panel", "Side panel", show=False),
        Binding("ctrl+g", "edit_prompt", "Edit the prompt in $EDITOR", show=False, priority=True),
    ]

    def focus_next(self, selector: Any = "*") -> Widget | None:
        """Tab from the prompt goes to the newest row that opens (the one nearest the
        prompt), not the oldest far up; from a row, on as Textual's focus chain goes. After
        paging up (the newest turns unmounted), the newest page comes back first, as with
        Ctrl+End, and the focus goes to it once it shows."""
        if self.focused is self.prompt and selector == "*":
            showing = self.transcript.show_newest()
            if showing is not None:
                self.transcript.anchor()
                self.run_worker(self._focus_newest_once_shown(showing), group="tab")
                return None
            return self._focus_newest()
        return super().focus_next(selector)

    def _focus_newest(self) -> Widget | None:
        """Focus the newest row that opens, if any (None: none is shown)."""
        from vis_tui.widgets.stored_turn import StoredTurnView

        stops = self.transcript.stops()
        if not stops:
            return super().focus_next("*")
        newest = stops[-1]
        if isinstance(newest, StoredTurnView):
            newest.focused_going_back = True  # opens at its last row
        self.set_focus(newest)
        return newest

    async def _focus_newest_once_shown(self, showing: Worker[None]) -> None:
        """Tab's focus, once the newest page it brought back shows (unless the person
        moved the focus meanwhile)."""
        from textual.worker import WorkerCancelled, WorkerFailed

        try:
            await showing.wait()
        except (WorkerCancelled, WorkerFailed):
            return  # the app is closing: nothing to focus
        if self.focused is self.prompt:
            self._focus_newest()

    def focus_previous(self, selector: Any = "*") -> Widget | None:
        """Shift+Tab onto a stored turn opens it at its last row (the one nearest where the
        focus came from), as Tab opens it at its first."""
        from vis_tui.widgets.stored_turn import StoredTurnView

        widget = super().focus_previous(selector)
        if isinstance(widget, StoredTurnView):  # its Focus event is handled after this
            widget.focused_going_back = True
        return widget

    def __init__(
        self,
        workspace: Any,
        answer_pacing: AnswerPacing = DEFAULT_PACING,
        streaming: Callable[[], None] | None = None,
    ) -> None:
        """``streaming``: called as answer text arrives (the app's collections wait for it)."""
        super().__init__()
        self.workspace = workspace
        self._streaming = streaming
        self.context = BlockContext(
            workspace=workspace,
            attachments=self.attachment_file,
            show_steps=self.show_steps,
            printed=self.printed,
            answer_pacing=answer_pacing,
        )
        self.core: Frontend | None = None
        self.session: Session | None = None
        self.queue: list[str] = []
        self.queue_paused = False  # a cancelled turn holds the queue until Enter (or Esc drops it)
        self.turn_running = False
        self._last_ended: TurnEnded | None = None  # the latest turn's end (plan approval)
        self._ended: set[str] = set()  # the turns the loader of the session shown shows
        self.selected_activity: ActivityRow | None = None
        self._unsubscribe: Any = None
        self._quit_armed_at: float | None = None
        self.choices: list[CommandChoice] = []
        self.files: list[str] | None = None  # workspace files for @ completion, once listed
        self._waiting_delta: CoreEvent | None = None  # the last delta posted, if not handled
        self._previewed: str | None = None
        self._early_welcome: WelcomeHeader | None = None  # painted before the session opened

    # -- layout --------------------------------------------------------------------------
    def compose(self) -> Any:
        self.transcript = Transcript(self.context, id="transcript")
        self.status_bar = StatusBar(id="status")
        self.prompt = PromptInput(id="prompt")
        self.completion = CompletionMenu(id="completion")
        self.prompt.completion = self.completion
        self.prompt.pull_queued = self.pull_queued
        yield self.transcript
        yield Vertical(id="queue")
        self.progress = ProgressLine(id="progress")
        yield self.progress
        yield self.completion
        self.chips = AttachmentChips(id="attachments")
        yield self.chips
        yield self.prompt
        yield self.status_bar
        yield ChordCatcher()

    def on_mount(self) -> None:
        self.completion.display = False
        self.chips.display = False
        self.status_bar.set_workspace(self.workspace)
        self.status_bar.starting = "starting…"
        self.prompt.focus()

    def start_step(self, step: str) -> None:
        """Show what the start waits for (``loading extensions…``), in order with the steps
        before it; "" once the session is shown."""
        self.status_bar.post_message(StatusBar.Starting(step))

    # -- session -------------------------------------------------------------------------
    def show_steps(self) -> bool:
        """The ``summarize_steps`` setting of the shown session."""
        if self.core is None or self.session is None:
            return True
        return bool(self.core.setting("summarize_steps", True, self.session.id))

    def printed(self, lines: int) -> str:
        """The last ``lines`` lines the shown session's running block printed so far."""
        return self.session.printed(lines) if self.session is not None else ""

    def attachment_file(self, name: str) -> Path | None:
        """Where the bytes of attachment ``name`` (filename or id) of the shown session are."""
        if self.core is None or self.session is None:
            return None
        return self.core.attachment_file(self.session.id, name)

    async def attach(self, core: Frontend, session: Session) -> None:
        """Show ``session``: its stored turns, prompt history and live events. A turn it
        runs (shown again after ``/new``) shows what it showed so far, then goes on: its
        events as the store has them, then those published after that read, none twice."""
        if self._unsubscribe is not None:
            self._unsubscribe()
        self.core, self.session = core, session
        follow = core.follow(session, self._post_event)  # from here, with the state below
        self._unsubscribe = follow.close
        # a turn of the session shown before goes on there; this one's may run
        self.turn_running = self.status_bar.running = session.running
        self.status_bar.title = session.title
        self.status_bar.model = (
            session.model.label if hasattr(session, "model") else core.model_label
        )
        self.status_bar.set_totals(
            session.usage.total,
            session.cost,
            session.context_tokens,
            getattr(session, "context_budget", 0),
        )
        running = await asyncio.to_thread(follow.read)
        early, self._early_welcome = self._early_welcome, None
        if self._previewed != session.id:
            from vis_tui.history import store_page_loader

            self.transcript.clear(keep=early)
            # the loader reads the notes of every turn: in a thread, as its pages are; the
            # turns that had not ended at the read are shown from their events
            self._ended = set(follow.ended)  # and those that end from here (:meth:`keep_ended`)
            loader = await asyncio.to_thread(
                store_page_loader, core.history, session.id, shown=self._ended, seen=follow.seen
            )
            await self.transcript.load_initial(loader)
        self._previewed = None
        self.start_step("")  # shown: the status says ready
        self.list_commands()
        self.prompt.set_history(await asyncio.to_thread(core.prompts, session.id))
        if not self.transcript.turns and not running:
            self._welcome(core, session, early)
        elif early is not None:
            early.remove()
        if core.model_problem:
            self.transcript.add_message(core.model_problem, classes="no-model", plain=True)
        for note in core.startup_notes():
            self.transcript.add_message(note, classes="note", plain=True)  # names from the checkout
        warning = core.extension_warning("Reload in Settings (F2) or start Vis again")
        if warning is not None:
            self.transcript.add_message(warning, classes="warning", plain=True)
        self._say_mcp_problems(core)
        self.show_draft()
        self.show_plan()
        self.count_background()
        self.feed_events(_joined_deltas(running))
        follow.start()
        if self.queue and not self.turn_running:
            self._send_next()

    def list_commands(self) -> None:
        """Offer the commands loaded now: at the start and after every reload (an extension
        that failed or was switched off takes its commands along, a new one brings its own)."""
        if self.core is not None:
            commands = self.core.commands()
            self.choices = [CommandChoice(i.name.lstrip("/"), i.usage, i.doc) for i in commands]

    @work(group="mcp-notes", exclusive=True, exit_on_error=False)
    async def _say_mcp_problems(self, core: Frontend) -> None:
        """The MCP servers that failed at the start (and config problems), said once they
        settle, without waiting for a turn: each once, as the turns say them."""
        for note in await core.mcp_startup_notes(MCP_SETTLE_SECONDS):
            self.transcript.add_message(note, classes="warning", plain=True, unprompted=True)

    def forget_model_problem(self) -> None:
        """A model works now (``/login``): the no-model note goes, the status shows it."""
        for note in self.transcript.query(".no-model"):
            note.remove()
        if self.session is not None:
            self.status_bar.model = self.session.model.label

    def show_welcome(self, facts: WelcomeFacts) -> None:
        """Paint a new session's welcome header from what the files say, before the core and
        the session are open (they take most of the startup); :meth:`attach` keeps it and
        brings it up to date."""
        from vis_core.frontend import __version__
        from vis_tui.widgets.welcome import WelcomeHeader, welcome_content

        content = welcome_content(
            __version__,
            facts.model,
            Path(self.workspace),
            trusted=facts.trusted,
            lapsed=facts.lapsed,
            jail=facts.jail,
        )
        self._early_welcome = WelcomeHeader(content)
        self.transcript.mount(self._early_welcome)

    @property
    def welcome_shown(self) -> bool:
        """Whether the early welcome header is on screen (until :meth:`attach` takes it)."""
        return self._early_welcome is not None

    def drop_welcome(self) -> None:
        """Remove the early welcome header (the session could not open)."""
        if self._early_welcome is not None:
            self._early_welcome.remove()
            self._early_welcome = None

    def _welcome(
        self, core: Frontend, session: Session, header: WelcomeHeader | None = None
    ) -> None:
        """Show the welcome header of ``session``; ``header``: the one painted early, which
        takes what the core knows (unchanged on screen when the files said the same)."""
        from vis_core.frontend import __version__
        from vis_tui.widgets.welcome import WelcomeHeader, welcome_content

        model = core.model_label if not core.model_problem else ""
        content = welcome_content(
            __version__,
            model,
            Path(self.workspace),
            trusted=core.trusted,
            lapsed=core.trust_lapsed,
            jail=core.jail_mode(session.id),
            instructions=_instruction_labels(session),
        )
        if header is not None:
            if header.content != content:
                header.update(content)
            return
        first = self.transcript.children[0] if self.transcript.children else None
        self.transcript.mount(WelcomeHeader(content), before=first)  # above resumed notes

    async def preview(self, core: Frontend, session_id: str) -> None:
        """Show a stored session's newest turns while the session itself opens (long ones
        take seconds to restore); :meth:`attach` then keeps them, unless one of them was
        still running: Vis was killed during it, and opening the session ends it with what
        it showed, drawn then."""
        from vis_tui.history import TurnPage, store_page_loader

        self.drop_welcome()
        self.transcript.clear()
        # the loader reads the notes of every turn: in a thread, as its pages are
        loader = await asyncio.to_thread(store_page_loader, core.history, session_id)
        cut_off = False

        def load(before_position: int | None) -> TurnPage:
            nonlocal cut_off
            page = loader(before_position)
            cut_off = cut_off or any(t.status == TurnStatus.RUNNING for t in page.turns)
            return page

        await self.transcript.load_initial(load)
        self._previewed = None if cut_off else session_id

    def feed_events(self, events: list[Event]) -> None:
        """Show ``events`` as if the session had published them (a running turn read back
        from the store, demos, snapshots)."""
        from vis_tui.event_map import dispatch

        for event in events:
            dispatch(self, event)

    def _post_event(self, event: Event) -> None:
        """The session's subscriber: the event crosses to the screen as a message, so the
        core never waits on (or changes) widgets. Deltas of one turn that arrive while the
        previous one still waits in the queue join it (a fast stream is one message per
        frame, not one per 16 characters)."""
        from vis_core.events import AssistantDelta  # with the session, after the first frame

        waiting = self._waiting_delta
        if isinstance(event, AssistantDelta):
            if self._streaming is not None:
                self._streaming()
            if (
                waiting is not None
                and not waiting.taken
                and getattr(waiting.event, "turn_id", None) == event.turn_id
            ):
                waiting.more.append(event.text)
                return
            message = self._waiting_delta = CoreEvent(event)
        else:
            self._waiting_delta = None
            message = CoreEvent(event)
        self.post_message(message)

    @property
    def closing(self) -> bool:
        """The app is quitting: from ``App.exit`` on (it sets the return code at once, and
        the screen's own messages may still be handled before the app's exit message), and
        once Textual detached the screen (mounting into it raises ``MountError``)."""
        return not self.is_attached or self.app.return_code is not None

    def on_core_event(self, message: CoreEvent) -> None:
        message.stop()
        event = message.take()
        if self.closing:  # posted before the quit, handled after it: the store has it
            return
        self.handle_event(event)

    def on_unmount(self) -> None:
        if self._unsubscribe is not None:  # the session outlives the screen until core.close
            self._unsubscribe()
            self._unsubscribe = None

    def handle_event(self, event: Event) -> None:
        from vis_tui.event_map import dispatch  # the core's events: loaded after the first frame

        if self.session is not None and event.session_id != self.session.id:
            return
        dispatch(self, event)
        if self.session is not None:
            self.status_bar.title = self.session.title  # the first request names the session

    async def on_fold_row_load(self, message: FoldRow.Load) -> None:
        """A fold row opens: what it folded, read back from the stored history (in a
        thread: a fold of a long stretch reads many stored events)."""
        message.stop()
        if self.core is None or self.session is None:
            message.row.show_story("The stored history of this session is not open here.")
            return
        spans = message.row.fold.spans
        story = await asyncio.to_thread(self.core.folded_story, self.session.id, spans)
        message.row.show_story(story)

    def toast(self, text: str, kind: NotifyKind) -> None:
        self.app.notify(text, severity=_TOAST_SEVERITY[NotifyKind(kind)], markup=False)

    def turn_finished(self, event: TurnEnded) -> None:
        """Status, and the ended turn read back; the turn worker sends queued messages once
        ``submit`` returns."""
        self._last_ended = event
        self.keep_ended(event.turn_id)

    @work(group="keep-ended", exclusive=False, exit_on_error=False)
    async def keep_ended(self, turn_id: str) -> None:
        """Read ended turn ``turn_id`` back from the store (it saves an event before publishing
        it), so the transcript can unmount it past its limit and rebuild it on the way up."""
        from vis_tui.history import ended_turn

        position, ended = self.transcript.ended_position(turn_id), self._ended
        if self.core is None or self.session is None or position is None:
            return
        turn = await asyncio.to_thread(
            ended_turn, self.core.history, self.session.id, turn_id, position
        )
        if turn is not None and ended is self._ended:
            ended.add(turn_id)  # the newest page, read again, shows it
            self.transcript.keep_ended(turn)

    def count_background(self) -> None:
        """The status bar counts the commands an ended block left running."""
        self.status_bar.background = getattr(self.session, "background_commands", 0)

    def show_plan(self) -> None:
        """The status bar says when the session is in plan mode (also after a resume)."""
        plan = getattr(self.session, "plan", None)
        self.status_bar.planning = bool(plan is not None and plan.active)

    def _ask_plan_approval(self) -> None:
        """A turn in plan mode ended with an answer: approve the plan (it runs) or plan on."""
        from vis_core.frontend import approval_form
        from vis_tui.screens.form import FormScreen

        def answered(values: dict[str, Any] | None) -> None:
            if values is None:
                self.transcript.add_message(
                    "Still planning: write what to change; `/plan approve` runs the plan, "
                    "`/plan off` leaves plan mode.",
                    classes="note",
                )
                return
            notes = " ".join(str(values.get("notes") or "").split())
            self.run_command(f"/plan approve {notes}".strip())

        self.app.push_screen(FormScreen(approval_form(), "plan mode"), answered)

    def files_root(self) -> Path:
        """Where ``@file`` and its completions look: the session's draft while in one."""
        drafts = getattr(self.session, "drafts", None)
        return Path(self.workspace) if drafts is None else drafts.roots().workspace

    def show_draft(self) -> None:
        """The status bar names the session's draft (a resumed session is back in it)."""
        drafts = getattr(self.session, "drafts", None)
        draft = drafts.draft if drafts is not None else None
        self.status_bar.draft = draft.label if draft is not None else ""
        if draft is not None:
            self.count_draft_files()

    @work(group="draft-files", exclusive=True, exit_on_error=False)
    async def count_draft_files(self) -> None:
        """How many files the draft changed (git reads them in a thread)."""
        drafts = getattr(self.session, "drafts", None)
        if drafts is None or drafts.draft is None:
            return
        self.status_bar.draft_files = len(await drafts.changed_files())

    # -- sending -------------------------------------------------------------------------
    def on_prompt_input_submitted(self, message: PromptInput.Submitted) -> None:
        message.stop()
        self._quit_armed_at = None
        text = message.text
        if not text.strip():  # Enter on an empty prompt resumes a paused queue
            if self.queue_paused:
                self._resume_queue()
            return
        if is_command(text):  # "/tmp/x.py: why does this fail" is a request
            self.run_command(text.strip())
            return
        if text.startswith("!") and not text[1:].strip():
            self.transcript.add_message("Write a command after `!`, e.g. `!git status`.")
            return
        if self.core is not None and self.session is not None:
            self.core.add_prompt(self.session.id, text)
        self.prompt.remember(text)
        self.send_text(text, message.images)

    def send_text(self, text: str, images: tuple[PersonImage, ...] = ()) -> None:
        """Send ``text`` (with ``images``) as the next turn, or queue it behind the running
        one."""
        if images:
            text = Queued(text)
            text.images = images
        if self.turn_running or self.session is None or self.queue_paused:
            self.queue.append(text)
            self._show_queue()
            if self.queue_paused and not self.turn_running:
                self._resume_queue()  # a new message sends the held ones first, in order
            return
        self.start_turn(text)

    def _cancel_turn(self) -> None:
        """Cancel the running turn; queued messages wait for the person (Enter or Esc)."""
        assert self.session is not None
        self.queue_paused = bool(self.queue)
        self._show_queue()
        self.session.cancel()

    def _resume_queue(self) -> None:
        self.queue_paused = False
        self._show_queue()
        self._send_next()

    def _drop_queue(self) -> None:
        count = len(self.queue)
        self.queue.clear()
        self.queue_paused = False
        self._show_queue()
        self.app.notify(f"Dropped {plural(count, 'queued message')}.")

    def start_turn(self, text: str) -> None:
        self.turn_running = True
        self.status_bar.running = True
        self.run_worker(self._turn(text), group="turn", exit_on_error=False)

    def _tell_unfound(self, text: str) -> None:
        """A toast for each ``@path`` that names no workspace file (a typo): it goes as text."""
        if "@" not in text:
            return
        unfound = unfound_mentions(text, self.files_root())
        if unfound:
            names = ", ".join(unfound)
            self.app.notify(
                f"{names} {'names' if len(unfound) == 1 else 'name'} no file in the workspace; "
                "the request has it as plain text.",
                title="No such file",
                severity="warning",
                markup=False,  # the person's own text: `[slug]` of a path is not a style
            )

    async def _turn(self, text: str) -> None:
        session = self.session
        assert session is not None
        try:
            if text.startswith("!"):  # the person's own command; its output joins the talk
                await session.submit(text, command=True)
            else:
                mentions = mentioned_files(text, self.files_root())
                self._tell_unfound(text)
                images = getattr(text, "images", ())
                await session.submit(str(text), mentions=mentions, images=images)
        except ImageRefused as exc:  # before the turn: nothing was sent; the draft comes back
            self.transcript.add_message(f"Not sent: {exc}", classes="error", plain=True)
            if not self.prompt.text:
                self.prompt.text = str(text)
                self.prompt.add_images(list(getattr(text, "images", ())))
        except Exception as exc:  # the core already reports turn failures as TurnEnded
            self.transcript.add_message(f"**Vis could not run the turn:** {exc}", classes="error")
        finally:  # after the turn's events, which were posted first
            self.post_message(TurnDone(session.id))

    def on_turn_done(self, message: TurnDone) -> None:
        message.stop()
        if self.closing:  # quitting: the queued messages are not sent
            return
        if self.session is None or message.session_id != self.session.id:
            return  # a turn of a session shown before: it ended there
        self.turn_running = False
        self.status_bar.running = False
        ended, self._last_ended = self._last_ended, None
        planned = (
            ended is not None and ended.status == TurnStatus.COMPLETED and self.status_bar.planning
        )
        if planned and not self.queue and self.session is not None and self.session.plan.active:
            self._ask_plan_approval()
            return
        self._send_next()

    def _send_next(self) -> None:
        if self.queue and self.session is not None and not self.turn_running:
            if self.queue_paused:
                return
            text = self.queue.pop(0)
            self._show_queue()
            self.start_turn(text)

    def pull_queued(self) -> str | None:
        if not self.queue:
            return None
        text = self.queue.pop()
        self._show_queue()
        self.prompt.add_images(list(getattr(text, "images", ())))  # back as chips
        return str(text)

    def _show_queue(self) -> None:
        box = self.query_one("#queue", Vertical)
        box.remove_children()
        lines = [
            Static(
                Content.assemble(("queued  ", "$text-warning"), (text.split("\n")[0], "")),
                classes="queued",
            )
            for text in self.queue
        ]
        if self.queue_paused and self.queue:
            note = "paused after the cancel: Enter sends them, Esc drops them"
            lines.insert(0, Static(Content.styled(note, "$text-warning"), classes="queued"))
        box.mount_all(lines)
        self.status_bar.queued = len(self.queue)

    @work(group="command", exclusive=False, exit_on_error=False)
    async def run_command(self, text: str) -> None:
        """Run a slash command; saveable ones go into the prompt history."""
        if self.core is None or self.session is None:
            where = self.prompt.give_back(text)
            self.transcript.add_message(
                f"Vis is still starting; try the command again in a moment ({where})."
            )
            return
        name = text[1:].split(maxsplit=1)[0] if len(text) > 1 else ""
        info = self.core.find_command(name)
        if info is None:
            where = self.prompt.give_back(text)
            skipped = self.core.command_skipped(name)  # names from the checkout: as text
            self.transcript.add_message(
                f"**Unknown command `/{name}`.** "
                f"{f'{escape_markdown(skipped)}. ' if skipped else ''}"
                "Type `/` to see the commands with their usage, "
                f"or press F1 for the keys; {where}. To send text that starts with `/`, put a "
                "word before it.",
                classes="error",
            )
            return
        if info.saveable:
            self.core.add_prompt(self.session.id, text)
            self.prompt.remember(text)
        try:
            result = await self.core.run_command(self.session, text)
        except Exception as exc:  # a command's own failure is its result; this is Vis's
            self.transcript.add_message(
                f"**/{name} failed:** {type(exc).__name__}: {exc}", classes="error"
            )
            return
        self.show_plan()
        if self.session.model.provider is not None:  # /model NAME switched it
            self.status_bar.model = self.session.model.label
        if result.action is None or not result.ok:
            self.transcript.add_message(result.markdown, classes="" if result.ok else "error")
        elif result.action == CommandAction.SEND_PROMPT:
            await self._send_command_prompt(result.data)
            return
        if result.action is not None:
            self.post_message(CommandActionRequested(result.action, result))

    async def _send_command_prompt(self, request: PromptToSend) -> None:
        """A command's request (``/init``, a command file) goes to the model as a turn, on
        the command's model when it names one."""
        if request.model and self.core is not None and self.session is not None:
            switched = await self.core.use_model(self.session, request.model)
            if not switched.ok:
                self.transcript.add_message(switched.markdown, classes="error")
                return
            self.status_bar.model = self.session.model.label
        self.send_text(request.text)

    # -- completion ----------------------------------------------------------------------
    def on_text_area_changed(self, event: PromptInput.Changed) -> None:
        if event.text_area is not self.prompt:
            return
        self.completion.show_choices(self.completions(self.prompt.text), self.prompt.text)
        self.show_chips()

    def on_prompt_input_images_changed(self, message: PromptInput.ImagesChanged) -> None:
        message.stop()
        self.show_chips()

    def show_chips(self) -> None:
        """The images the next request takes: pasted ones and the prompt's ``@`` images."""
        from vis_core.model.images import is_image_name

        text = self.prompt.text
        named = mentioned_files(text, self.files_root()) if "@" in text else []
        self.chips.show(self.prompt.images, [path for path in named if is_image_name(path)])

    def completions(self, text: str) -> list[Completion]:
        """What the popup offers for the prompt's ``text``."""
        row, column = self.prompt.cursor_location
        line = self.prompt.document.get_line(row) if row < self.prompt.document.line_count else ""
        mention = typing_mention(line, column)
        if mention is not None:
            if self.files is None or not mention[1]:  # a new @: list the files again
                self._list_files()
            return path_completions(self.files or [], line, column)
        if text.startswith(MODEL_PREFIX) and self.core is not None:
            current = self.session.model.label if self.session is not None else None
            ids = [e.id for e in self.core.model_entries(current=current or None)]
            return model_completions(ids, text)
        return command_completions(self.choices, text)

    @work(group="files", exclusive=True, thread=True, exit_on_error=False)
    def _list_files(self) -> None:
        """The workspace's text files for ``@`` (as a search sees them: .gitignore applies;
        binaries left out, their text cannot be sent); none in a folder too big to list."""
        from vis_core.frontend import listed_files

        root = str(self.files_root().resolve())
        listed = listed_files(root, hidden=False) or []
        paths = [path for path in listed if is_text_file(path)]
        files = sorted(os.path.relpath(path, root) for path in paths)
        self.app.call_from_thread(self._files_listed, files)

    def _files_listed(self, files: list[str]) -> None:
        self.files = files
        if self.prompt.text:
            self.completion.show_choices(self.completions(self.prompt.text), self.prompt.text)

    # -- keys ----------------------------------------------------------------------------
    def action_escape(self) -> None:
        if self.completion.display:
            self.completion.hide()
        elif self.session is not None and self.turn_running:
            self._cancel_turn()
        elif self.queue_paused and self.queue:
            self._drop_queue()

    def action_interrupt(self) -> None:
        """Ctrl+C: clear the draft, else cancel the turn, else quit on a second press."""
        if self.prompt.text:
            self.prompt.put_aside()
            self.completion.hide()
            self._quit_armed_at = None
            self.app.notify("Cleared the prompt; ↑ brings it back.", timeout=QUIT_WINDOW_SECONDS)
        elif self.session is not None and self.turn_running:
            self._cancel_turn()
            self._quit_armed_at = None
        else:
            self.quit_on_second_press()

    def quit_on_second_press(self) -> None:
        """Ctrl+C with nothing to clear or cancel, here or on a screen above: the second
        press within ``QUIT_WINDOW_SECONDS`` quits."""
        if (
            self._quit_armed_at is not None
            and time.monotonic() - self._quit_armed_at < QUIT_WINDOW_SECONDS
        ):
            self.app.exit(0)
        else:
            self._quit_armed_at = time.monotonic()
            self.app.notify("Press Ctrl+C again to quit.", timeout=QUIT_WINDOW_SECONDS)

    def on_prompt_input_quit_requested(self, message: PromptInput.QuitRequested) -> None:
        message.stop()
        self.app.exit(0)

    def action_edit_prompt(self) -> None:
        """Ctrl+G: the prompt opens in ``$VISUAL``/``$EDITOR`` (the app suspended meanwhile);
        what the editor saved becomes the prompt."""
        from textual.app import SuspendNotSupported

        from vis_tui.editor import edit_text, run_editor

        def run(command: list[str]) -> str | None:
            try:
                with self.app.suspend():
                    return run_editor(command)
            except SuspendNotSupported:
                return run_editor(command)

        edited, problem = edit_text(self.prompt.text, run)
        self.app.refresh()
        if problem is not None:
            self.app.notify(problem, severity="warning", markup=False)
            return
        assert edited is not None
        self.prompt.text = edited
        self.prompt.move_cursor(self.prompt.document.end)
        self.prompt.focus()

    def action_chord(self) -> None:
        catcher = self.query_one(ChordCatcher)
        catcher.previous = self.focused
        catcher.can_focus = True
        self.set_focus(catcher)  # now: the key after Ctrl+X must not reach the prompt

    def action_page_up(self) -> None:
        self.transcript.scroll_page_up(animate=False)
        if self.transcript.scroll_y <= 3 and self.transcript.has_older:
            self.transcript.run_worker(self.transcript.load_older(), group="page", exclusive=True)

    def action_page_down(self) -> None:
        transcript = self.transcript
        transcript.scroll_page_down(animate=False)
        if transcript.has_newer and transcript.scroll_y >= transcript.max_scroll_y - 3:
            transcript.run_worker(transcript.load_newer(), group="page", exclusive=True)

    def action_top(self) -> None:
        """The start of the session: every older page, then its first turn."""
        transcript = self.transcript
        transcript.scroll_home(animate=False)
        if transcript.has_older:
            transcript.run_worker(transcript.load_oldest(), group="page", exclusive=True)

    def action_bottom(self) -> None:
        self.transcript.action_pin()

    def on_transcript_leave(self, message: Transcript.Leave) -> None:
        message.stop()
        self.prompt.focus()

    def on_screen_resume(self) -> None:
        """Back from Settings, help or a picker: the prompt takes the keyboard again, and the
        status shows the model a save there switched to (an idle session switches at once)."""
        if self.focused is None or not self.focused.is_attached:
            self.prompt.focus()
        if self.session is not None and not self.turn_running:
            self.status_bar.model = self.session.model.label

    async def on_key(self, event: events.Key) -> None:
        """A printable key typed outside the prompt (on a row, after a click) goes to the
        prompt, as does Ctrl+D (it quits on an empty prompt), unless the focused widget binds
        it (rows bind only Space, which cannot start a message; the transcript binds none).
        The prompt takes the focus at once, and keys typed quickly after it, already on their
        way to the row, reach the prompt too (Enter among them sends)."""
        focused = self.focused
        if isinstance(focused, ChordCatcher) or (
            focused is not self.prompt and isinstance(focused, Input | TextArea)
        ):
            return
        printable = event.is_printable and bool(event.character)
        if focused is self.prompt:
            # The prompt stops every printable key and Enter it receives: one that arrives
            # here was sent to the row that had the focus before the prompt took it.
            if not (printable or event.key == "enter"):
                return
        elif event.key != "ctrl+d" and (not printable or event.key in self.active_bindings):
            return  # a key of the focused widget (Space on a row, "-" on a live view's slider)
        event.stop()
        event.prevent_default()
        self.set_focus(self.prompt)
        await self.prompt.take_key(event)

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        from vis_tui.widgets.activity import ActivityRow

        if isinstance(event.widget, ActivityRow):
            self.selected_activity = event.widget

    def action_toggle_panel(self) -> None:
        """F3 / Ctrl+X p: close the side panel of live views, or open it again."""
        from vis_tui.widgets.live import LivePanel

        panels = list(self.query(LivePanel))
        if not panels:
            self.app.notify(
                "No side panel yet: it opens when an extension shows a live view there.",
                markup=False,
            )
            return
        panels[0].display = not panels[0].display

    def action_copy_answer(self) -> None:
        self._copy(self.transcript.last_answer, "the last answer")

    def action_copy_activity(self) -> None:
        row = self.selected_activity
        if row is None or not row.is_attached:
            self.app.notify("Select an Activity first (Tab to it or click it).", severity="warning")
            return
        self._copy(row.as_text(), "the Activity")

    @work(group="copy-transcript", exclusive=True, exit_on_error=False)
    async def action_copy_transcript(self) -> None:
        """The whole session, read from the store (the turns paged away too), with the code
        its blocks ran and what they printed: the text ``/export md`` writes."""
        if self.core is None or self.session is None:
            self._copy(self.transcript.as_text(), "the transcript")
            return
        self._copy(await self.core.session_markdown(self.session.id), "the whole session")

    def _copy(self, text: str, what: str) -> None:
        if not text:
            self.app.notify(f"Nothing to copy: {what} is empty.", severity="warning")
            return
        self.app.copy_to_clipboard(text)
        self.app.notify(f"Copied {what} to the clipboard.")


def _joined_deltas(events: list[Event]) -> list[Event]:
    """``events`` with each run of one turn's answer deltas as one delta (shown at once)."""
    from vis_core.events import AssistantDelta

    joined: list[Event] = []
    run: list[AssistantDelta] = []  # deltas of one turn in a row, not joined yet

    def join() -> None:
        if run:
            text = "".join(delta.text for delta in run)
            joined.append(AssistantDelta(run[0].session_id, turn_id=run[0].turn_id, text=text))
            run.clear()

    for event in events:
        if not isinstance(event, AssistantDelta) or (run and run[0].turn_id != event.turn_id):
            join()
        if isinstance(event, AssistantDelta):
            run.append(event)
        else:
            joined.append(event)
    join()
    return joined


def _instruction_labels(session: Session) -> list[tuple[str, int]]:
    """The instruction files of ``session``'s system prompt, as the welcome header names them."""
    instructions = getattr(session, "instructions", None)
    if instructions is None:
        return []
    home = Path.home()
    labels = []
    for item in instructions.files:
        label = item.label(instructions.workspace)
        if item.path.is_relative_to(home) and label == str(item.path):
            label = "~/" + str(item.path.relative_to(home))
        labels.append((label, item.tokens))
    return labels
