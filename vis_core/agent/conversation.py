"""Rebuild the model's conversation (provider-neutral messages) from a session's events."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from vis_core.agent.folded import (
    ANSWER,
    REQUEST,
    FoldOwners,
    Tag,
    apply_folds,
    fold_owners,
    fold_positions,
    message_owner,
    with_fold,
)
from vis_core.events import (
    AssistantMessage,
    AssistantThinking,
    BackgroundCommandEnded,
    BackgroundFilesChanged,
    BlockFinished,
    ContextNote,
    Event,
    FoldCreated,
    ImageAttached,
    IterationStarted,
    TurnEnded,
    TurnStarted,
    UsageReported,
    UserContext,
)
from vis_core.model.block import PYTHON_EXECUTION
from vis_core.model.conversation import ImagePart, Message, ThinkingDelta, ThinkingPart, ToolCall
from vis_core.model.images import describe
from vis_core.model.turn import Incomplete
from vis_core.model.usage import UsagePurpose

# UsageReported.purpose of a child session's requests (run_session, consult) in its parent:
# counted in the parent's turn and cost, not in its context or its requests
CHILD_PURPOSE = UsagePurpose.SUBAGENT

ImageLoader = Callable[[str], ImagePart | None]

NO_OUTPUT = "(the block printed nothing; print() what you want to see)"
# What the model reads after a text of its own that is not a whole answer.
INCOMPLETE_NOTES: dict[str, str] = {
    Incomplete.CUT: "\n\n[Vis: this answer was cut here: it reached the output limit "
    "(max_tokens). Say the rest in shorter parts.]",
    Incomplete.FAILED: "\n\n[Vis: this answer broke off here: the model request failed.]",
    Incomplete.CANCELLED: "\n\n[Vis: the person stopped this answer here.]",
    Incomplete.INTERRUPTED: "\n\n[Vis: this answer broke off here: Vis stopped while it streamed.]",
}


RAW_ARGUMENTS = "raw_arguments"  # the key a stored call keeps unreadable arguments under


def block_result_text(stdout: str, error: str | None, restarted: str | None = None) -> str:
    """What the model reads after a ``python_execution`` block."""
    parts = []
    if restarted:
        parts.append(f"[sandbox] {restarted}")
    if stdout:
        parts.append(stdout.rstrip("\n"))
    if error:
        parts.append(error.rstrip("\n"))
    return "\n".join(parts) if parts else NO_OUTPUT


class ThinkingCollector:
    """Gathers thinking deltas into blocks: a signature closes one, a redacted block stands
    alone, and text left at the end is a block without a signature."""

    def __init__(self) -> None:
        self._done: list[ThinkingPart] = []
        self._text: list[str] = []

    def clear(self) -> None:
        self._done.clear()
        self._text.clear()

    def add(self, delta: ThinkingDelta) -> None:
        if delta.redacted:
            self._close("")
            self._done.append(ThinkingPart(redacted=delta.redacted))
            return
        if delta.text:
            self._text.append(delta.text)
        if delta.signature:
            self._close(delta.signature)

    def _close(self, signature: str) -> None:
        if self._text or signature:
            self._done.append(ThinkingPart("".join(self._text), signature))
        self._text.clear()

    def parts(self) -> list[ThinkingPart]:
        """The blocks gathered so far (text without a signature closes as is); cleared."""
        self._close("")
        done = list(self._done)
        self._done.clear()
        return done


@dataclass
class TurnShape:
    """One turn as folds see it: its position, its iterations and which of them settled."""

    position: int
    turn_id: str
    settled: set[int] = field(default_factory=set)  # indices whose block finished
    ended: bool = False
    ids: dict[str, int] = field(default_factory=dict)  # iteration id -> index, in order


FoldSet = tuple[int, FoldCreated]  # how many folds, and the last one


def _is_set(key: FoldSet, folds: list[FoldCreated]) -> bool:
    return key[0] == len(folds) and bool(folds) and key[1] is folds[-1]


class ConversationBuilder:
    """Accumulates events into messages; used live by the loop and to resume a session.

    Images a block showed (``BlockFinished.images``) go to the model with the next request
    only, as ``show_attachment`` promises: :meth:`request_messages` adds them to that block's
    result, loading each through ``load_image`` (None: the attachment is gone, and the result
    says so); the answer to that request (``UsageReported``) retires them.

    Images the person attached (``ImageAttached``) stay with their request in every request
    after it, as the person's words do; each is loaded once (``load_image``) and kept.
    """

    def __init__(self, load_image: ImageLoader | None = None) -> None:
        self.messages: list[Message] = []
        self._pending_text: dict[str, str] = {}
        self._pending_thinking: dict[str, list[ThinkingPart]] = {}
        self._load_image = load_image
        self._shown: list[tuple[int, tuple[str, ...]]] = []  # (message index, attachment ids)
        self.tags: list[Tag] = []  # per message: (turn position, iteration | REQUEST | ANSWER)
        self.call_tags: dict[str, Tag] = {}  # tool call id -> (turn position, iteration)
        self.turns: dict[int, TurnShape] = {}  # by position
        self._positions: dict[str, int] = {}  # turn id -> position
        self.folds: list[FoldCreated] = []
        self._owners: tuple[FoldSet, FoldOwners] | None = None  # kept per fold set
        self._verdicts: list[int | None] = []  # per message: the fold dropping it, if any
        self._rejudge: set[int] = set()  # turn positions whose verdicts a new fold changes
        # the fold set before the latest added fold, kept while that fold may be taken back
        # (a fold's receipt measures the request with it, then without it)
        self._before: tuple[FoldSet, FoldOwners, list[int | None]] | None = None
        self._context: list[str] = []  # what came before the next request (the person's, Vis's)
        # notes the next fold retires: (message index, the text added, how many folds before)
        self._until_fold: list[tuple[int, str, int]] = []
        self._unanswered: dict[str, None] = {}  # tool call ids without a result, in call order
        self._person_images: dict[int, list[str]] = {}  # request message index -> attachment ids
        self._loaded: dict[str, ImagePart | None] = {}  # attachment id -> the image, once read

    def _append(self, message: Message, tag: Tag) -> None:
        self.messages.append(message)
        self.tags.append(tag)
        if message.tool_call_id is not None:
            self._unanswered.pop(message.tool_call_id, None)
        for call in message.tool_calls:
            self._unanswered[call.id] = None

    def _position(self, turn_id: str) -> int:
        return self._positions.get(turn_id, 0)

    def add(self, event: Event) -> None:
        handler = _HANDLERS.get(type(event))
        if handler is not None:  # most events (Activities) pass by
            handler(self, event)

    def _on_TurnStarted(self, event: TurnStarted) -> None:
        self._positions[event.turn_id] = event.position
        self.turns[event.position] = TurnShape(event.position, event.turn_id)
        text = "\n\n".join([*self._context, event.request])
        self._context.clear()
        self._append(Message("user", text), (event.position, REQUEST))

    def _on_UserContext(self, event: UserContext) -> None:
        """The person's addition joins its turn's request (or waits for the next one)."""
        position = self._positions.get(event.turn_id)
        if position is not None:
            for index in range(len(self.messages) - 1, -1, -1):
                if self.tags[index] == (position, REQUEST):
                    message = self.messages[index]
                    self.messages[index] = replace(message, text=f"{message.text}\n\n{event.text}")
                    return
        self._context.append(event.text)

    def _on_ImageAttached(self, event: ImageAttached) -> None:
        """The person's image joins its turn's request, named in its text."""
        position = self._positions.get(event.turn_id)
        for index in range(len(self.messages) - 1, -1, -1):
            if position is not None and self.tags[index] == (position, REQUEST):
                break
        else:
            return
        shown = describe(event.name, event.media_type, event.size, event.width, event.height)
        message = self.messages[index]
        note = f"[Vis: the person attached the image {shown}]"
        self.messages[index] = replace(message, text=f"{message.text}\n\n{note}")
        self._person_images.setdefault(index, []).append(event.attachment_id)

    def _image(self, attachment_id: str) -> ImagePart | None:
        if attachment_id not in self._loaded:
            load = self._load_image
            self._loaded[attachment_id] = load(attachment_id) if load is not None else None
        return self._loaded[attachment_id]

    def _on_BackgroundCommandEnded(
        self, event: BackgroundCommandEnded | BackgroundFilesChanged
    ) -> None:
        """A turn's next request carries it; one told between turns (no turn) goes with the
        next turn's request, before the person's words, as it happened before them."""
        if event.turn_id:
            self._note(event.text(), event.turn_id)
        else:
            self._context.append(event.text())

    def _on_ContextNote(self, event: ContextNote) -> None:
        added = self._note(event.text, event.turn_id)
        if event.until_fold:
            self._until_fold.append((len(self.messages) - 1, added, len(self.folds)))

    def _note(self, text: str, turn_id: str) -> str:
        """A note for the model goes with the next request: after the latest block's result
        or the turn's request (one user message either way, and no earlier message changes,
        so the cached prefix stays), else as a message of its own. Returns the text added."""
        last = self.messages[-1] if self.messages else None
        if last is not None and last.role in ("user", "tool"):
            self.messages[-1] = replace(last, text=f"{last.text}\n\n{text}")
            return f"\n\n{text}"
        self._append(Message("user", text), (self._position(turn_id), ANSWER))
        return text

    def _retired_notes(self, messages: list[Message]) -> set[int]:
        """Take the notes a later fold retired out of ``messages`` (that fold changed the
        request already, so the cache loses little); the indices of those that were a message
        of their own."""
        alone: set[int] = set()
        for index, added, folds in self._until_fold:
            if folds < len(self.folds):
                message = messages[index]
                if message.text == added:
                    alone.add(index)
                else:
                    messages[index] = replace(message, text=message.text.replace(added, "", 1))
        return alone

    def _on_FoldCreated(self, event: FoldCreated) -> None:
        self.folds.append(event)

    def _on_AssistantMessage(self, event: AssistantMessage) -> None:
        text = event.text + INCOMPLETE_NOTES.get(event.incomplete, "")
        self._pending_text[event.turn_id] = self._pending_text.get(event.turn_id, "") + text

    def _on_AssistantThinking(self, event: AssistantThinking) -> None:
        part = ThinkingPart(event.text, event.signature, event.redacted)
        self._pending_thinking.setdefault(event.turn_id, []).append(part)

    def _on_IterationStarted(self, event: IterationStarted) -> None:
        arguments = {"code": event.code} if event.tool == PYTHON_EXECUTION else event.arguments
        if RAW_ARGUMENTS in event.arguments:  # a call whose arguments could not be read
            arguments = dict(event.arguments)
        text = self._pending_text.pop(event.turn_id, "")
        thinking = tuple(self._pending_thinking.pop(event.turn_id, ()))
        call = ToolCall(event.iteration_id, event.tool, arguments)
        position = self._position(event.turn_id)
        tag = (position, event.index)
        self.call_tags[event.iteration_id] = tag
        shape = self.turns.get(position)
        if shape is not None:
            shape.ids[event.iteration_id] = event.index
        last = self.messages[-1] if self.messages else None
        if (
            last is not None
            and last.role == "assistant"
            and not text
            and not thinking
            and last.tool_calls
        ):
            self.messages[-1] = replace(last, tool_calls=(*last.tool_calls, call))
            self._unanswered[call.id] = None
        else:
            self._append(Message("assistant", text, (call,), thinking=thinking), tag)

    def _on_BlockFinished(self, event: BlockFinished) -> None:
        if event.images:
            self._shown.append((len(self.messages), tuple(event.images)))
        tag = self.call_tags.get(event.iteration_id, (self._position(event.turn_id), ANSWER))
        shape = self.turns.get(tag[0])
        if shape is not None and event.iteration_id in shape.ids:
            shape.settled.add(shape.ids[event.iteration_id])
        self._append(
            Message(
                "tool",
                block_result_text(event.stdout, event.error),
                tool_call_id=event.iteration_id,
                is_error=event.error is not None,
            ),
            tag,
        )

    def _on_UsageReported(self, event: UsageReported) -> None:
        if event.purpose == CHILD_PURPOSE:  # a child session's request, not this one's
            return
        self._shown.clear()  # the request that carried them was answered

    def request_messages(self, *, person_images: bool = True) -> list[Message]:
        """The messages of the next request: the conversation plus the images just shown,
        with every fold applied (folded steps leave, their gists stand in their place).
        Not ``person_images`` (the model takes no image input): a note stands in for them."""
        messages = list(self.messages)
        for index, attachment_ids in self._person_images.items():
            message = messages[index]
            if not person_images:
                note = "\n[the images attached here are left out: this model takes no images]"
                messages[index] = replace(message, text=message.text + note)
                continue
            images = [image for image in map(self._image, attachment_ids) if image is not None]
            text = message.text
            if len(images) < len(attachment_ids):
                text += "\n[an image the person attached here is no longer stored]"
            messages[index] = replace(message, text=text, images=(*message.images, *images))
        for index, attachment_ids in self._shown:
            message = messages[index]
            images: list[ImagePart] = []
            text = message.text
            for attachment_id in attachment_ids:
                image = self._load_image(attachment_id) if self._load_image else None
                if image is None:
                    text += (
                        f"\n[an image shown here (attachment {attachment_id}) is no longer stored]"
                    )
                else:
                    images.append(image)
            messages[index] = replace(message, text=text, images=tuple(images))
        if not self.folds:
            return messages
        owners = self._fold_owners()
        tags, verdicts = self.tags, self._fold_verdicts(owners)
        if alone := self._retired_notes(messages):
            kept = [index for index in range(len(messages)) if index not in alone]
            messages = [messages[index] for index in kept]
            tags, verdicts = [tags[index] for index in kept], [verdicts[index] for index in kept]
        return apply_folds(messages, tags, self.call_tags, self.folds, owners, verdicts)

    def _fold_verdicts(self, owners: FoldOwners) -> list[int | None]:
        """Each message's fold verdict, computed once per fold set; the last message (it may
        still gain tool calls), any newer ones and those of the turns a new fold spans are
        judged again."""
        verdicts = self._verdicts
        del verdicts[max(0, len(verdicts) - 1) :]
        if self._rejudge:
            positions, self._rejudge = self._rejudge, set()
            for index, tag in enumerate(self.tags[: len(verdicts)]):
                if tag[0] in positions:
                    verdicts[index] = message_owner(
                        self.messages[index], tag, self.call_tags, owners
                    )
        for index in range(len(verdicts), len(self.messages)):
            verdicts.append(
                message_owner(self.messages[index], self.tags[index], self.call_tags, owners)
            )
        return verdicts

    def _fold_owners(self) -> FoldOwners:
        """Who owns each folded step, recomputed only when the folds change; a fold added
        after the others (the usual case) only updates what it spans. A fold set is known by
        its length and its last fold (held, so its identity cannot be reused)."""
        folds = self.folds
        cached = self._owners
        if cached is not None and _is_set(cached[0], folds):
            return cached[1]
        key = (len(folds), folds[-1])
        before, self._before = self._before, None
        if before is not None and _is_set(before[0], folds):  # the fold added was taken back
            self._owners, self._verdicts, self._rejudge = (key, before[1]), before[2], set()
        elif cached is not None and len(folds) > 1 and _is_set(cached[0], folds[:-1]):
            self._before = (cached[0], cached[1], list(self._verdicts))
            self._owners = (key, with_fold(cached[1], folds))
            self._rejudge |= fold_positions(folds[-1])
        else:
            self._owners = (key, fold_owners(folds))
            self._verdicts, self._rejudge = [], set()
        return self._owners[1]

    def _on_TurnEnded(self, event: TurnEnded) -> None:
        position = self._position(event.turn_id)
        shape = self.turns.get(position)
        if shape is not None:
            shape.ended = True
            shape.settled.update(shape.ids.values())
        text = self._pending_text.pop(event.turn_id, "")
        thinking = tuple(self._pending_thinking.pop(event.turn_id, ()))
        if text:
            self._append(Message("assistant", text, thinking=thinking), (position, ANSWER))
        # A tool call left without a result (a cancelled turn) must still be answered.
        for call_id in list(self._unanswered):
            tag = self.call_tags.get(call_id, (position, ANSWER))
            self._append(Message("tool", "(cancelled)", tool_call_id=call_id, is_error=True), tag)


# The event types that change what a builder holds; the others (Activities, notices…) pass by.
# What each event the conversation is built from does to it (a registry: no lookup by name).
_HANDLERS: dict[type[Event], Callable[[ConversationBuilder, Any], None]] = {
    TurnStarted: ConversationBuilder._on_TurnStarted,
    UserContext: ConversationBuilder._on_UserContext,
    ImageAttached: ConversationBuilder._on_ImageAttached,
    BackgroundCommandEnded: ConversationBuilder._on_BackgroundCommandEnded,
    BackgroundFilesChanged: ConversationBuilder._on_BackgroundCommandEnded,  # told alike
    ContextNote: ConversationBuilder._on_ContextNote,
    FoldCreated: ConversationBuilder._on_FoldCreated,
    AssistantMessage: ConversationBuilder._on_AssistantMessage,
    AssistantThinking: ConversationBuilder._on_AssistantThinking,
    IterationStarted: ConversationBuilder._on_IterationStarted,
    BlockFinished: ConversationBuilder._on_BlockFinished,
    UsageReported: ConversationBuilder._on_UsageReported,
    TurnEnded: ConversationBuilder._on_TurnEnded,
}
CONVERSATION_EVENTS = frozenset(event_type.type for event_type in _HANDLERS)
CONVERSATION_KINDS = tuple(_HANDLERS)  # the event types :meth:`ConversationBuilder.add` reads
