"""One agent session: the turn loop (turn → iterations → blocks), events, cancellation, usage."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from vis_core.agent.background_files import BackgroundFiles
from vis_core.agent.conversation import (
    CHILD_PURPOSE,
    CONVERSATION_EVENTS,
    CONVERSATION_KINDS,
    RAW_ARGUMENTS,
    ConversationBuilder,
    ThinkingCollector,
    block_result_text,
)
from vis_core.agent.deps import FileWatch, SessionDeps, SessionModel, TurnRefused
from vis_core.agent.event_bus import Kinds, Subscriber
from vis_core.agent.invoker import CallSite
from vis_core.agent.printed import PrintedOutput
from vis_core.agent.prompt import PYTHON_EXECUTION_DESCRIPTION, PYTHON_EXECUTION_PARAMETERS
from vis_core.events import (
    AssistantDelta,
    AssistantMessage,
    AssistantThinking,
    BlockFinished,
    BlockPrinted,
    Event,
    IterationStarted,
    Notification,
    TurnEnded,
    TurnStarted,
    UsageReported,
)
from vis_core.extension_host.attachments import load_shown_image
from vis_core.extension_host.call_state import SessionCallState
from vis_core.model.block import PYTHON_EXECUTION, FileChange
from vis_core.model.channel import Channel
from vis_core.model.command import is_command
from vis_core.model.conversation import (
    ImagePart,
    ResponseDone,
    StopReason,
    TextDelta,
    ThinkingDelta,
    ToolCall,
    ToolCallReady,
    ToolCallStarted,
    ToolDefinition,
    UsageUpdate,
)
from vis_core.model.images import ImagesNotAccepted, PersonImage, is_image_name
from vis_core.model.notify import NotifyKind
from vis_core.model.turn import BLOCK_CANCELLED, Incomplete, TurnStatus
from vis_core.model.undo import FolderTooBig
from vis_core.model.usage import Usage, UsagePurpose
from vis_core.providers.base import (
    ContextOverflowError,
    ModelRequest,
    ProviderConfigError,
    ProviderError,
)
from vis_core.providers.limits import known_input_limit, soft_budget
from vis_core.system.redaction import secret_start

log = logging.getLogger(__name__)

CANCELLED_BY_USER = "cancelled by the user"
CHILDREN_GRACE = 30.0  # seconds a cancelled turn waits for its child sessions to close
DELTA_INTERVAL = 0.03  # streamed text is committed and published in batches this far apart


CUT_ERROR = (
    "the answer was cut at the model's output limit (max_tokens); ask it to continue, or for "
    "a shorter answer"
)


def cut_notice(calls: Sequence[ToolCall]) -> str:
    """What the person reads when an answer stopped at the model's output limit."""
    text = "The answer was cut: the model reached its output limit (max_tokens) mid-answer"
    if any(call.problem for call in calls):
        return text + "; the tool call it was writing was not run"
    return text + "; ask it to continue, or for a shorter answer"


def title_from_request(text: str, limit: int = 60) -> str:
    """A session title: the first line of its first request, cut at a word boundary."""
    line = next((part.strip() for part in text.splitlines() if part.strip()), "")
    if len(line) <= limit:
        return line
    cut = line[:limit].rsplit(" ", 1)[0] or line[:limit]
    return cut + "…"


# What a person can do when the conversation no longer fits the model, by where they are (in
# ``vis run``, which has no /new nor /model) and what there is (settled earlier turns, which can
# be folded; a first request has none).
_OVERFLOW_ADVICE: dict[tuple[bool, bool], str] = {
    (True, False): "Send less (a part of the file or diff), or run it on a model with a larger "
    "input limit (vis run --model PROVIDER/MODEL)",
    (True, True): 'Fold settled work (vis run --continue "/compact"), start a new session (vis run '
    "without --continue), or pick a model with a larger input limit (--model PROVIDER/MODEL)",
    (False, False): "Send less, or pick a model with a larger input limit (/model)",
    (False, True): "Fold settled work (/compact, or fold_session in a block), start a new session "
    "(/new), or pick a model with a larger input limit (/model)",
}


def overflow_advice(label: str, channel: Channel, settled: bool) -> str:
    """What the person reads when the conversation no longer fits ``label`` (see
    :data:`_OVERFLOW_ADVICE`)."""
    advice = _OVERFLOW_ADVICE[channel is Channel.CLI, settled]
    return f"the conversation is longer than {label} accepts. {advice}"


class StillTooLong(ContextOverflowError):
    """The request is too long even after Vis folded the settled work."""


@dataclass
class TurnOutcome:
    status: TurnStatus = TurnStatus.RUNNING
    content: str = ""
    error: str | None = None
    usage: Usage = field(default_factory=Usage)
    cost: float = 0.0
    cut: bool = False  # the last response stopped at the output limit (max_tokens)


# The stored events a resumed session is rebuilt from (see ``AgentSession._absorb``): its
# conversation's, among them the TurnStarted and UsageReported its turn count and usage add up.
HISTORY_EVENTS = CONVERSATION_EVENTS


class AgentSession:
    """Runs turns for one stored session and publishes each event after it is committed."""

    def __init__(
        self, deps: SessionDeps, *, session_id: str, title: str, history: Sequence[Event] = ()
    ) -> None:
        """The session ``session_id`` over ``deps``, with ``history`` (its stored events)
        replayed."""
        self.id = session_id
        self._hooks = deps.hooks  # prompt, direct tools, before each turn and request, close
        self._cancelled_stdout = ""  # what a cancelled block printed (see _run_block)
        self._cancel_reason: str | None = None  # why the running turn was cancelled
        self.title = title
        self.model = deps.model
        self._next_model: SessionModel | None = None  # switched to when the request ends
        self._waiting: list[Callable[[], None]] = []  # changes for the next request (below)
        self._requesting = False
        self.checkpoints = deps.checkpoints  # /undo: the workspace before each turn changed it
        self.drafts = deps.drafts  # the draft it works in
        self.tool_context = deps.tool_context  # its built-in tools' ToolContext
        self.on_thinking: Callable[[str], None] | None = None  # reasoning as it streams (vis acp)
        self._file_watch: FileWatch | None = None  # what each block of a turn changed
        self._ran_at_listing: list[str] = []  # the commands running at the last block's listing
        self.background_files = (  # what its commands change after a turn's last block
            None
            if self.checkpoints is None or self.tool_context is None
            else BackgroundFiles(session_id, self.checkpoints, self.tool_context, self.emit)
        )
        self._told_too_big = False  # that the workspace is too big to follow (said once)
        self.sandbox = deps.sandbox
        self._printed = PrintedOutput(self.sandbox, self.emit)  # what the running block printed
        self.invoker = deps.invoker
        self.limits = deps.limits
        self._store = deps.store
        self.events = deps.events
        self.position = deps.position
        # the transcript as the model sees it (folds applied in ``request_messages``)
        self.conversation = ConversationBuilder(self._load_image)
        self._task: asyncio.Task[TurnEnded] | None = None
        self.usage = Usage()
        self.cost = 0.0
        self.context_tokens = 0  # the latest measured request input
        self.context = deps.context
        self.instructions = deps.instructions  # AGENTS.md & co: in the prompt, nested ones noted
        self.plan = deps.plan  # plan mode: read-only until the person approves
        self.turn_count = 0
        self._outcome: TurnOutcome | None = None  # the running turn's, for its children's cost
        # the tool calls running child sessions (run_session, consult): the turn ends after them
        self.children: set[asyncio.Task[Any]] = set()
        self._commands: set[asyncio.Future[None]] = set()  # each slash command running in it
        for event in history:
            self._absorb(event)
        # state is current before others look; an Activity changes none of it
        self.events.subscribe(self._absorb, first=True, kinds=CONVERSATION_KINDS)

    @property
    def call_state(self) -> SessionCallState:
        """What its calls share: who waits on its turn, the images shown with a result."""
        return self.invoker.call_state

    async def system_prompt(self) -> str:
        """The system prompt the next request carries."""
        return await self._hooks.system_prompt()

    @property
    def next_model(self) -> SessionModel:
        """The model the next request goes to (one switched to mid-request, or the current)."""
        return self._next_model or self.model

    async def switch_model(self, model: SessionModel) -> None:
        """Talk to ``model`` from the next request on: at once between requests, else when
        the request under way ends (a request never changes model halfway). The model it
        replaces is closed unless it is still in use."""
        model.prepare()  # its SDK loads while the person writes the next request
        if self._requesting:
            replaced, self._next_model = self._next_model, model
        else:
            replaced, self.model = self.model, model
        if replaced is None or replaced.provider is None:
            return
        if any(m is not None and m.provider is replaced.provider for m in (self.model, model)):
            return
        aclose = getattr(replaced.provider, "aclose", None)
        if aclose is not None:
            await aclose()

    def between_requests(self, change: Callable[[], None]) -> None:
        """Run ``change`` (a saved setting reaching this session) now when no turn runs, else
        before its next request or at its end: a request and its blocks keep what they began
        with."""
        if self.running:
            self._waiting.append(change)
        else:
            change()

    def _apply_waiting(self) -> None:
        waiting, self._waiting = self._waiting, []
        for change in waiting:
            change()

    @property
    def model_label(self) -> str:
        return self.model.label if self.model.provider is not None else ""

    @property
    def context_limit(self) -> int:
        """The model's hard input limit; 0 when unknown."""
        if self.model.provider is None:
            return 0
        return known_input_limit(self.model.provider, self.model.model) or 0

    @property
    def context_budget(self) -> int:
        """The soft budget (``auto_compress_above``) of the session's model; 0 without one."""
        if self.model.provider is None:
            return 0
        return soft_budget(self.model.model, self.context_limit or None)

    def utilization(self) -> dict[str, Any]:
        """``session["utilization"]``: measured input, soft budget, hard limit (and a hint)."""
        if self.context is not None:
            return self.context.utilization(self)
        return {
            "latest_measured_input_tokens": self.context_tokens,
            "auto_compress_above": self.context_budget,
            "model_input_limit": self.context_limit or None,
        }

    def _load_image(self, attachment_id: str) -> ImagePart | None:
        """An image a block showed, read back from the attachment store."""
        if not hasattr(self._store, "get_attachment"):
            return None
        return load_shown_image(self._store, self.id, attachment_id)

    # -- events ----------------------------------------------------------------------------

    def subscribe(
        self, callback: Subscriber, *, early: bool = False, kinds: Kinds | None = None
    ) -> Callable[[], None]:
        """Follow the session's events once committed (after the session took each into
        account); ``early``: as soon as emitted; ``kinds``: only events of these types (see
        :meth:`EventBus.subscribe`)."""
        return self.events.subscribe(callback, early=early, kinds=kinds)

    async def emit(self, event: Event) -> None:
        """Commit the event, then publish it: a crash never loses what was shown."""
        await self.events.emit(event)

    def _absorb(self, event: Event) -> None:
        self.conversation.add(event)
        if isinstance(event, TurnStarted):
            self.turn_count = max(self.turn_count, event.position)
        elif isinstance(event, UsageReported):
            self.usage = self.usage + event.usage
            self.cost += event.cost
            if UsagePurpose(event.purpose).measures_context:
                self.context_tokens = event.context_tokens or self.context_tokens
            elif event.purpose == CHILD_PURPOSE and self._outcome is not None:
                self._outcome.usage = self._outcome.usage + event.usage
                self._outcome.cost += event.cost

    # -- turns -----------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    @property
    def background_commands(self) -> int:
        """How many commands an ended block left running still run."""
        return self.tool_context.in_background() if self.tool_context is not None else 0

    @property
    def settling(self) -> bool:
        """Whether a turn, a slash command or a command an ended block left running runs."""
        return self.running or bool(self._commands) or bool(self.background_commands)

    @contextlib.contextmanager
    def command(self) -> Iterator[None]:
        """A slash command runs in this session meanwhile (:meth:`settled` waits for it)."""
        done = asyncio.get_running_loop().create_future()
        self._commands.add(done)
        try:
            yield
        finally:
            self._commands.discard(done)
            done.set_result(None)

    async def settled(self) -> None:
        """Return once no turn, no slash command and no command an ended block left running
        still runs (waiting cuts none short)."""
        while True:
            if self._task is not None and not self._task.done():
                await asyncio.wait([self._task])
            elif self._commands:
                await asyncio.wait(list(self._commands))
            elif self.background_commands:
                assert self.tool_context is not None
                await self.tool_context.background_ended()
            else:
                return

    def printed(self, lines: int) -> str:
        """The last ``lines`` lines the running block printed and was saved ("" when none
        runs): shown only once committed, as every event is."""
        return self._printed.tail(lines)

    def cancel(self, reason: str = CANCELLED_BY_USER) -> None:
        """Cancel the running turn; a running block is interrupted within 2 s. ``reason`` is
        the turn's recorded error (what stopped it: ``vis run --max-cost``, a signal). A turn
        already cancelled is not cancelled again: a second cancel (Esc then Ctrl+Q, which
        closes the session) would cut its ending short and leave it ``running`` in the
        store, and the first reason stays."""
        task = self._task
        if task is not None and not task.done() and not task.cancelling():
            self._cancel_reason = reason
            task.cancel()

    async def submit(
        self,
        text: str,
        *,
        mentions: Sequence[str] = (),
        command: bool = False,
        images: Sequence[PersonImage] = (),
    ) -> TurnEnded:
        """Run one turn for ``text``. ``mentions``: workspace files whose ``cat`` view goes
        with the request (``@path``; an image's name: the image itself, read beneath the
        workspace); ``images``: images the person pasted; ``command``: ``text`` is
        ``!command``, run in the workspace, its output kept for the model's next turn (no
        model request). An image that cannot be sent, or any image for a model without
        image input, raises :class:`ImageRefused` before the turn starts."""
        if self.running:
            raise RuntimeError("a turn is already running in this session")
        pictures: list[PersonImage] = []
        if not command:
            named = [path for path in dict.fromkeys(mentions) if is_image_name(path)]
            self.check_images(len(images) + len(named))
            pictures = [*images, *await self._mentioned_images(named)]
            mentions = [path for path in mentions if not is_image_name(path)]
        self._cancel_reason = None
        task = self._task = asyncio.get_running_loop().create_task(
            self._turn(text, mentions, command, pictures)
        )
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            self.cancel()
        # Shielded again: a caller cancelled twice (Textual cancels a screen's worker when the
        # screen unmounts and again when the app shuts down) stops waiting, but the second
        # cancel never reaches the turn, which ends on its own.
        return await asyncio.shield(task)

    async def _mentioned_images(self, mentions: Sequence[str]) -> list[PersonImage]:
        """The images ``mentions`` name, read beneath the workspace and checked."""
        from vis_core.agent.person_images import read_workspace_image

        workspace = self.invoker.workspace
        return [await asyncio.to_thread(read_workspace_image, workspace, path) for path in mentions]

    def check_images(self, count: int) -> None:
        """:class:`ImagesNotAccepted` when ``count`` images go to a model without image
        input (the built-in table, or ``images = true`` in its ``[models."p/m"]`` table)."""
        provider = self.model.provider
        if not count or provider is None or provider.model_info(self.model.model).images:
            return
        label = self.model.label
        raise ImagesNotAccepted(
            f"{label} takes no image input, so the image{'s' if count > 1 else ''} "
            f"attached cannot be sent. Switch to a model that does (/model), or declare it "
            f'with images = true under [models."{label}"] in config.toml if it does.'
        )

    async def _turn(
        self,
        text: str,
        mentions: Sequence[str],
        command: bool,
        images: Sequence[PersonImage] = (),
    ) -> TurnEnded:
        from vis_core.agent import person_input

        turn_id = uuid.uuid4().hex
        self.turn_count += 1
        if not self.title and not is_command(text) and not command:
            self.title = title_from_request(text)
            self._store.set_title(self.id, self.title)
        outcome = self._outcome = TurnOutcome()
        try:  # a cancel during the start's commit ends the turn too (the start is saved)
            await self.emit(
                TurnStarted(self.id, turn_id=turn_id, position=self.turn_count, request=text)
            )
            if command:
                await person_input.run_command(self, turn_id, text)
                outcome.status = TurnStatus.COMPLETED
            else:
                await self._hooks.before_turn(self, turn_id)
                if images:  # first: a resumed transcript shows them first too
                    from vis_core.agent.person_images import attach_images

                    await attach_images(self, self._store, turn_id, images)
                await self.plan.tell(self, turn_id)
                await person_input.attach_files(self, turn_id, mentions)
                await self._iterate(turn_id, outcome)
        except asyncio.CancelledError:
            outcome.status = TurnStatus.CANCELLED
            outcome.error = self._cancel_reason or CANCELLED_BY_USER
        except (ProviderConfigError, TurnRefused) as exc:
            outcome.status, outcome.error = TurnStatus.FAILED, str(exc)
        except ContextOverflowError as exc:
            outcome.status = TurnStatus.FAILED
            # a first request, or one still too long once Vis folded: nothing left to fold
            settled = self.turn_count > 1 and not isinstance(exc, StillTooLong)
            advice = overflow_advice(self.model.label, self.invoker.channel, settled)
            outcome.error = f"model request failed: {exc}; {advice}"
        except ProviderError as exc:
            outcome.status, outcome.error = TurnStatus.FAILED, f"model request failed: {exc}"
        except Exception as exc:
            log.exception("turn %s failed", turn_id)
            outcome.status, outcome.error = TurnStatus.FAILED, f"{type(exc).__name__}: {exc}"
        cancelled_again = False  # the turn's end is stored even under repeated cancels
        try:
            await asyncio.shield(self._settle_checkpoint(turn_id))
            if self.children and outcome.status is TurnStatus.CANCELLED:
                # the child sessions it waited on are closing: they end before the turn
                await asyncio.shield(asyncio.wait(set(self.children), timeout=CHILDREN_GRACE))
        except asyncio.CancelledError:  # the check goes on in its thread; the end is written
            cancelled_again = True
        self._outcome = None
        ended = TurnEnded(
            self.id,
            turn_id=turn_id,
            status=outcome.status,
            content=outcome.content,
            usage=outcome.usage,
            cost=outcome.cost,
            error=outcome.error,
        )
        await self.emit(ended)  # a cancel meanwhile does not stop its commit (the bus)
        self._apply_waiting()
        if cancelled_again:
            raise asyncio.CancelledError
        return ended

    async def _iterate(self, turn_id: str, outcome: TurnOutcome) -> None:
        if self.model.provider is None:
            raise ProviderConfigError(self.model.problem or "no model is configured")
        iteration = 0
        while True:
            calls, text = await self._request(turn_id, iteration, outcome)
            if not calls:
                outcome.status, outcome.content = TurnStatus.COMPLETED, text
                if outcome.cut:  # a cut answer is not a plain success
                    outcome.status, outcome.error = TurnStatus.INCOMPLETE, CUT_ERROR
                return
            for call in calls:
                if iteration >= self.limits.max_iterations:
                    outcome.status = TurnStatus.MAX_ITERATIONS
                    outcome.error = (
                        f"stopped after {self.limits.max_iterations} iterations "
                        f"({self.limits.max_iterations_source})"
                    )
                    why = f"the turn reached {self.limits.max_iterations_source}"
                    await self._not_run(turn_id, iteration + 1, call, why)
                    return
                iteration += 1
                if call.problem:  # stored with its arguments raw; the model reads what was wrong
                    await self._not_run(turn_id, iteration, call, call.problem)
                else:
                    await self._run_call(turn_id, iteration, call)

    async def _request(
        self, turn_id: str, iteration: int, outcome: TurnOutcome
    ) -> tuple[list[ToolCall], str]:
        """One model request; a model switched to meanwhile is used from its end on."""
        for event in await self._hooks.before_request(turn_id):  # may change its settings
            await self.emit(event)
        await self._list_since_block(turn_id)
        self._apply_waiting()
        self._requesting = True
        try:
            return await self._request_folding(turn_id, iteration, outcome)
        finally:
            self._requesting = False
            if self._next_model is not None:
                model, self._next_model = self._next_model, None
                await self.switch_model(model)

    async def _request_folding(
        self, turn_id: str, iteration: int, outcome: TurnOutcome
    ) -> tuple[list[ToolCall], str]:
        """One model request; a too-long one is retried once after the context port folds."""
        if self.context is not None:
            for event in self.context.notes(self, turn_id):
                await self.emit(event)
        try:
            return await self._request_once(turn_id, iteration, outcome)
        except ContextOverflowError as exc:
            await self._record_rejected(turn_id, exc)
            folded = None
            if self.context is not None:
                folded = await self.context.recover_overflow(self, turn_id, exc)
            if folded is None:
                raise
        try:
            return await self._request_once(turn_id, iteration, outcome)
        except ContextOverflowError as exc:
            await self._record_rejected(turn_id, exc)
            raise StillTooLong(
                f"the request is still too long after Vis folded {folded}: {exc}",
                status=exc.status,
                input_tokens=exc.input_tokens,
            ) from exc

    async def _record_rejected(self, turn_id: str, error: ContextOverflowError) -> None:
        """A refused request's measured size counts as the latest measured input."""
        if error.input_tokens:
            await self.emit(
                UsageReported(
                    self.id,
                    turn_id=turn_id,
                    context_tokens=error.input_tokens,
                    context_limit=self.context_limit,
                    context_budget=self.context_budget,
                    model=self.model_label,
                    purpose=UsagePurpose.REJECTED,
                )
            )

    async def next_request(self) -> ModelRequest:
        """The next request, with its system prompt built now."""
        return self.build_request(await self.system_prompt())

    def build_request(self, system: str) -> ModelRequest:
        """The next request: system prompt (``system``, see :meth:`system_prompt`), tools, and the
        transcript with folds applied (the person's images only for a model that takes them;
        one switched to since then reads a note in their place)."""
        provider = self.model.provider
        images = provider is None or provider.model_info(self.model.model).images
        return ModelRequest(
            model=self.model.model,
            system=system,
            messages=tuple(self.conversation.request_messages(person_images=images)),
            tools=(
                ToolDefinition(
                    PYTHON_EXECUTION, PYTHON_EXECUTION_DESCRIPTION, PYTHON_EXECUTION_PARAMETERS
                ),
                *(d.definition for d in self._hooks.direct_tools()),
            ),
        )

    async def _request_once(
        self, turn_id: str, iteration: int, outcome: TurnOutcome
    ) -> tuple[list[ToolCall], str]:
        from vis_core.providers.retry import stream_with_retries, wait_text

        provider = self.model.provider
        assert provider is not None
        # extensions' prompt and activation callbacks are awaited in the session's extension
        # worker (started by the first request); the front end keeps drawing meanwhile
        request = await self.next_request()
        chunks: list[str] = []
        thinking = ThinkingCollector()
        calls: list[ToolCall] = []
        usage = Usage()
        unsent: list[str] = []
        last_flush = time.monotonic()

        async def flush(*, whole: bool = True) -> None:
            """Send the unsent text; ``whole=False`` keeps back an end that could be the start
            of a secret, so that no secret is split across two deltas redacted apart."""
            nonlocal last_flush
            last_flush = time.monotonic()
            text = "".join(unsent)
            held = 0 if whole else secret_start(text)
            unsent[:] = [text[len(text) - held :]] if held else []
            if text[: len(text) - held]:
                await self.emit(
                    AssistantDelta(self.id, turn_id=turn_id, text=text[: len(text) - held])
                )

        async def emit_thinking() -> None:
            """Thinking comes before the answer, so it is committed when the answer starts."""
            for part in thinking.parts():
                await self.emit(
                    AssistantThinking(
                        self.id,
                        turn_id=turn_id,
                        iteration=iteration,
                        text=part.text,
                        signature=part.signature,
                        redacted=part.redacted,
                    )
                )

        reported: set[str] = set()

        async def on_retry(attempt: int, error: ProviderError, delay: float) -> None:
            await flush()
            chunks.clear()
            thinking.clear()
            what = str(error)
            asked = error.retry_after is not None
            wait = wait_text(delay) + (", as the server asked" if asked else "")
            text = (
                f"Model request failed ({what}); retrying in {wait}"
                if what not in reported
                else f"Retrying in {wait}"
            )  # the same error is told once, not once per try
            reported.add(what)
            await self.emit(
                Notification(
                    self.id,
                    text=f"{text} (attempt {attempt + 1} of {self.limits.retry_attempts})",
                    kind=NotifyKind.WARN,
                    transient=True,
                )
            )

        stop = ""
        try:
            async for item in stream_with_retries(
                provider,
                request,
                attempts=self.limits.retry_attempts,
                base_delay=self.limits.retry_base_delay,
                on_retry=on_retry,
            ):
                if isinstance(item, TextDelta):
                    await emit_thinking()
                    chunks.append(item.text)
                    unsent.append(item.text)
                    if time.monotonic() - last_flush >= DELTA_INTERVAL:
                        await flush(whole=False)
                elif isinstance(item, ThinkingDelta):
                    thinking.add(item)
                    if self.on_thinking is not None and item.text:
                        self.on_thinking(item.text)
                elif isinstance(item, ToolCallStarted):
                    if item.name == PYTHON_EXECUTION:  # its child starts while it streams
                        self.sandbox.prepare()
                elif isinstance(item, ToolCallReady):
                    await emit_thinking()
                    calls.append(item.call)
                elif isinstance(item, UsageUpdate):
                    usage = usage + item.usage
                elif isinstance(item, ResponseDone):
                    stop = item.stop_reason
        except (ProviderError, asyncio.CancelledError) as exc:
            # What streamed before the failure stays the answer (marked incomplete) and the
            # failed request's usage is counted.
            why = Incomplete.FAILED if isinstance(exc, ProviderError) else Incomplete.CANCELLED
            await asyncio.shield(
                self._keep_partial(turn_id, iteration, chunks, unsent, outcome, why)
            )
            spent = usage if usage.total else exc.usage if isinstance(exc, ProviderError) else None
            if isinstance(exc, ProviderError) and spent is not None:
                await self._report_usage(turn_id, spent, outcome)
            raise
        await flush()
        await emit_thinking()
        text = "".join(chunks)
        cut = outcome.cut = stop == StopReason.MAX_TOKENS
        await self._answer(turn_id, iteration, text, Incomplete.CUT if cut else Incomplete.NO)
        await self._report_usage(turn_id, usage, outcome)
        if cut and calls:  # a cut plain answer ends the turn, whose status says so
            await self.emit(Notification(self.id, text=cut_notice(calls), kind=NotifyKind.WARN))
        return calls, text

    async def _keep_partial(
        self,
        turn_id: str,
        iteration: int,
        chunks: list[str],
        unsent: list[str],
        outcome: TurnOutcome,
        why: Incomplete,
    ) -> None:
        """Commit the text a failed or cancelled request streamed as an incomplete answer."""
        if unsent:
            await self.emit(AssistantDelta(self.id, turn_id=turn_id, text="".join(unsent)))
            unsent.clear()
        text = "".join(chunks)
        await self._answer(turn_id, iteration, text, why)
        if text:
            outcome.content = text

    async def _answer(self, turn_id: str, iteration: int, text: str, why: Incomplete) -> None:
        """The whole text of one response (none when it had no text)."""
        if text:
            await self.emit(
                AssistantMessage(
                    self.id, turn_id=turn_id, iteration=iteration, text=text, incomplete=why
                )
            )

    async def _report_usage(self, turn_id: str, usage: Usage, outcome: TurnOutcome) -> None:
        provider = self.model.provider
        assert provider is not None
        info = provider.model_info(self.model.model)
        cost = info.cost(usage)
        outcome.usage = outcome.usage + usage
        outcome.cost += cost
        await self.emit(
            UsageReported(
                self.id,
                turn_id=turn_id,
                usage=usage,
                cost=cost,
                context_tokens=usage.input + usage.cache_read + usage.cache_write,
                context_limit=self.context_limit,
                context_budget=self.context_budget,
                model=self.model_label,
            )
        )

    async def _start_iteration(self, turn_id: str, index: int, call: ToolCall) -> str:
        """Emit ``IterationStarted`` for one model tool call; returns its iteration id."""
        iteration_id = f"call_{uuid.uuid4().hex[:24]}"
        is_code = call.name == PYTHON_EXECUTION
        await self.emit(
            IterationStarted(
                self.id,
                turn_id=turn_id,
                iteration_id=iteration_id,
                index=index,
                tool=call.name,
                code=str(call.arguments.get("code", "")) if is_code else "",
                arguments=(
                    {RAW_ARGUMENTS: call.raw_arguments}
                    if call.problem
                    else {}
                    if is_code
                    else dict(call.arguments)
                ),
            )
        )
        return iteration_id

    async def _settle_checkpoint(self, turn_id: str) -> None:
        if self.checkpoints is None:
            return
        watch = self._file_watch
        own = watch if watch is not None and watch.turn_id == turn_id else None
        keep = False  # a command it left running may change files yet: its checkpoint stays
        if self.background_files is not None and own is not None:
            keep = self.background_files.follow(own, self.turn_count, self._ran_at_listing)
        elif self.background_files is not None:
            self.background_files.keep_following()
        # its last block's listing spares listing the files again, if no command ran then
        seen = own.seen if own is not None and not self._ran_at_listing else None
        try:
            await asyncio.to_thread(self.checkpoints.drop_if_unchanged, turn_id, seen, keep=keep)
        except OSError as exc:
            log.warning("checkpoint of turn %s not checked: %s", turn_id, exc)

    async def _list_since_block(self, turn_id: str) -> None:
        """Before a request that follows a block which left commands running: what they
        changed since its listing (else the next block's row would list it as its own)."""
        watch, ran = self._file_watch, self._ran_at_listing
        if self.background_files is None or self.tool_context is None or not ran:
            return
        if watch is None or watch.turn_id != turn_id or watch.seen is None:
            return  # no block of this turn listed yet (a checkpoint's listing comes first)
        self._ran_at_listing = self.tool_context.running_commands()
        await self.background_files.list_in_turn(watch, turn_id, self.turn_count, ran)

    async def list_background_files(self) -> None:
        """Between turns: what the session's commands changed since the last listing."""
        if self.background_files is not None:
            await self.background_files.list()

    async def checkpoint(self, turn_id: str) -> None:
        """Record the workspace before the turn's first block, tool call or command (what
        the session's commands changed since an earlier turn's last block is told first)."""
        scan = None  # the background listing's, when it made one: no write falls between
        if self.background_files is not None and self.background_files.following:
            scan = await self.background_files.list(turn_id)
        if self.checkpoints is not None:
            try:
                await asyncio.to_thread(self.checkpoints.take, turn_id, self.turn_count, scan)
            except FolderTooBig as exc:  # said once; its blocks' rows say it each time
                if not self._told_too_big:
                    self._told_too_big = True
                    await self.emit(Notification(self.id, text=str(exc), kind=NotifyKind.WARN))
            except OSError as exc:  # the turn goes on; /undo will not reach past it
                log.warning("no checkpoint before turn %s: %s", turn_id, exc)

    def moved(self) -> None:
        """The session's working copy moved (a draft): the running turn's file watch starts
        again there, so a block is not told to have made the difference between the copies."""
        if self._file_watch is not None:
            self._file_watch.rebase()

    async def _watch_files(self, turn_id: str) -> FileWatch | None:
        """The turn's file watch, started before a block (None: no checkpoints here)."""
        if self.checkpoints is None:
            return None
        watch = self._file_watch
        if watch is None or watch.turn_id != turn_id:
            watch = self._file_watch = self.checkpoints.watch(turn_id)
        try:
            await asyncio.to_thread(watch.start)
        except OSError as exc:
            log.warning("files of turn %s not followed: %s", turn_id, exc)
            return None
        return watch

    async def _changed_files(self, watch: FileWatch | None) -> tuple[FileChange, ...]:
        """What the block changed (nothing when it could not be read: the log says why)."""
        if watch is None:
            return ()
        # a command running now may change files after this listing: the turn's end lists again
        ran = [] if self.tool_context is None else self.tool_context.running_commands()
        self._ran_at_listing = ran
        try:
            return await asyncio.to_thread(watch.finish)
        except OSError as exc:
            log.warning("files a block changed not read: %s", exc)
            return ()

    async def _run_call(self, turn_id: str, index: int, call: ToolCall) -> None:
        await self.checkpoint(turn_id)
        watch = await self._watch_files(turn_id)
        iteration_id = await self._start_iteration(turn_id, index, call)
        is_code = call.name == PYTHON_EXECUTION
        code = str(call.arguments.get("code", "")) if is_code else ""
        self.position.site = CallSite(turn_id, iteration_id, index)
        started = time.monotonic()
        stdout, error, restarted = "", None, None
        self.call_state.take_shown()  # a show belongs to the block that made it

        def finished(
            stdout: str, error: str | None, duration: float, files: tuple[FileChange, ...]
        ) -> BlockFinished:
            if restarted:
                stdout = block_result_text(stdout, None, restarted)
            if watch is not None and watch.note:  # its files could not be listed (or now are)
                stdout = "\n\n".join(filter(None, (stdout.rstrip("\n"), f"[Vis: {watch.note}]")))
            return BlockFinished(
                self.id,
                turn_id=turn_id,
                iteration_id=iteration_id,
                stdout=stdout,
                error=error,
                restarted=restarted is not None,
                duration=duration,
                images=self.call_state.take_shown(),
                files=files,
            )

        try:
            if is_code:
                ids = BlockPrinted(self.id, turn_id=turn_id, iteration_id=iteration_id)
                async with self._printed.following(ids):
                    result = await self._run_block(code)
                stdout, error, restarted = result.stdout, result.error, result.restarted
            else:
                stdout, error = await self._run_direct(call)
        except asyncio.CancelledError:
            duration = time.monotonic() - started
            files = await asyncio.shield(self._changed_files(watch))
            # what the block printed up to the cancel, its ``finally:`` output included
            stdout, self._cancelled_stdout = self._cancelled_stdout or stdout, ""
            await asyncio.shield(self.emit(finished(stdout, BLOCK_CANCELLED, duration, files)))
            raise
        duration = time.monotonic() - started
        files = await self._changed_files(watch)
        if self.instructions is not None:  # nested AGENTS.md near the paths it worked on
            stdout += self.instructions.take_notes()
        await self.emit(finished(stdout, error, duration, files))

    async def _run_block(self, code: str) -> Any:
        """Run ``code``; cancelled, the block is interrupted and what it printed until then
        (its ``finally:`` output too) is kept in :attr:`_cancelled_stdout` for its row and the
        model's next request."""
        task = asyncio.ensure_future(self.sandbox.run(code))
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            await asyncio.shield(self.sandbox.interrupt())
            try:
                result = await asyncio.wait_for(asyncio.shield(task), timeout=3)
            except BaseException:  # the block's own outcome no longer matters
                task.cancel()
            else:
                self._cancelled_stdout = str(getattr(result, "stdout", "") or "")
            raise

    async def _run_direct(self, call: ToolCall) -> tuple[str, str | None]:
        direct = next(
            (d for d in self._hooks.direct_tools() if d.definition.name == call.name), None
        )
        if direct is None:
            return "", f"ToolError: no direct tool named {call.name!r}"
        try:
            value = await self.invoker.call(direct.host_name, (), dict(call.arguments))
            if direct.present is not None:
                return direct.present(value), None
        except Exception as exc:
            return "", f"{type(exc).__name__}: {exc}"
        return (value if isinstance(value, str) else json.dumps(value, default=str)), None

    async def _not_run(self, turn_id: str, index: int, call: ToolCall, why: str) -> None:
        """``call`` stored as iteration ``index``, ended without running: ``why``."""
        iteration_id = await self._start_iteration(turn_id, index, call)
        finished = BlockFinished(
            self.id, turn_id=turn_id, iteration_id=iteration_id, error=f"not run: {why}"
        )
        await self.emit(finished)

    async def close(self) -> None:
        self.cancel()
        if self._task is not None:
            with contextlib.suppress(BaseException):  # closing: the turn already reported its end
                await self._task
        await self.invoker.settle()  # the ends of quick calls still being recorded
        if self.background_files is not None and self.background_files.following:
            assert self.tool_context is not None
            await self.tool_context.stop_commands()  # what they changed until now is told
            await self.background_files.list(end=True)
        await self.events.close()  # an Activity started outside a turn (vis.sessions changes)
        await self.sandbox.close()
        aclose = getattr(self.model.provider, "aclose", None)
        if aclose is not None:
            await aclose()
        await self._hooks.close()
