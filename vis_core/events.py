"""Typed, frozen events the agent loop emits, the store persists and front ends read."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, ClassVar

import orjson

from vis_core.model.activity import (
    ActivityRecord,
    ActivityState,
    SymbolTag,
    field_names,
    from_plain,
    plain_presentation,
)
from vis_core.model.block import PYTHON_EXECUTION, FileChange
from vis_core.model.draft import DraftAction
from vis_core.model.notify import NotifyKind
from vis_core.model.turn import ContextOrigin, TurnStatus
from vis_core.model.usage import Usage, UsagePurpose
from vis_core.text_limits import one_line

_EVENT_TYPES: dict[str, type[Event]] = {}


def _dumps(data: dict[str, Any]) -> str:
    """Compact JSON, UTF-8 kept as is (orjson: the event log's hot path)."""
    return orjson.dumps(data).decode()


@dataclass(frozen=True)
class Event:
    """Base of every event; ``type`` names the class in the event log."""

    session_id: str
    type: ClassVar[str] = "Event"

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.type = cls.__name__
        _EVENT_TYPES[cls.__name__] = cls

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"type": self.type}
        for name in field_names(type(self)):
            value = getattr(self, name)
            if isinstance(value, ActivityRecord):
                value = activity_to_dict(value)
            elif isinstance(value, Usage):
                value = {key: getattr(value, key) for key in field_names(Usage)}
            elif name == "files" and isinstance(value, tuple):
                value = [change.to_plain() for change in value]
            data[name] = value
        return data

    def to_json(self) -> str:
        return event_payload(self)[1]


def stored_form(event: Event) -> tuple[Event, dict[str, Any], str]:
    """The event as the log stores it: itself, as a dict and as JSON text, walked once. Text
    that is not valid Unicode (a lone surrogate: a file name decoded with ``surrogateescape``,
    a ``\\udcff`` escape in a provider's JSON) is written out as ``\\udcff`` in all three, so
    it can be stored, read back and printed."""
    data = event.to_dict()
    try:
        return event, data, _dumps(data)
    except TypeError:  # orjson refuses lone surrogates (and nothing else a dict here holds)
        data = _written_out(data)
        return event_from_dict(data), data, _dumps(data)


def event_payload(event: Event) -> tuple[dict[str, Any], str]:
    """The event as a dict and as the JSON text ``to_json`` writes (see :func:`stored_form`)."""
    return stored_form(event)[1:]


def _written_out(value: Any) -> Any:
    """``value`` with each lone surrogate of its text written out (``\\udcff``)."""
    if isinstance(value, str):
        return value.encode("utf-8", "backslashreplace").decode("utf-8")
    if isinstance(value, dict):
        return {_written_out(k): _written_out(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_written_out(item) for item in value]
    return value


def event_from_dict(data: dict[str, Any]) -> Event:
    """Rebuild an event from :meth:`Event.to_dict` output."""
    data = dict(data)
    cls = _EVENT_TYPES.get(data.pop("type", ""))
    if cls is None:
        raise ValueError(f"unknown event type in {data!r}")
    kwargs: dict[str, Any] = {}
    for name in field_names(cls):
        if name not in data:
            continue
        value = data[name]
        if name == "activity" and isinstance(value, dict):
            value = activity_from_dict(value)
        elif name == "usage" and isinstance(value, dict):
            value = Usage(**value)
        elif name == "status" and isinstance(value, str):
            value = TurnStatus(value)
        elif name == "origin" and cls is UserContext and isinstance(value, str):
            value = ContextOrigin(value)
        elif name == "purpose" and cls is UsageReported and isinstance(value, str):
            value = UsagePurpose(value)
        elif name == "files" and isinstance(value, list):
            value = tuple(FileChange.from_plain(item) for item in value)
        kwargs[name] = value
    return cls(**kwargs)


def activity_to_dict(record: ActivityRecord) -> dict[str, Any]:
    """The record's fields in order (a frozen dataclass without slots: its attributes are its
    fields, in the order its constructor set them), with plain tag, state and presentation
    (an enum's ``_value_``: its ``value`` property costs as much as the rest of the copy)."""
    data = record.__dict__.copy()
    data["tag"] = record.tag._value_
    data["state"] = record.state._value_
    presentation = record.presentation
    data["presentation"] = None if presentation is None else plain_presentation(presentation)
    return data


def activity_from_dict(data: dict[str, Any]) -> ActivityRecord:
    data = dict(data)
    data["tag"] = SymbolTag(data["tag"])
    data["state"] = ActivityState(data["state"])
    if data.get("presentation") is not None:
        data["presentation"] = from_plain(data["presentation"])
    return ActivityRecord(**data)


@dataclass(frozen=True)
class SessionCreated(Event):
    """A session was created."""

    title: str = ""
    workspace: str = ""
    group: str | None = None


@dataclass(frozen=True)
class TurnStarted(Event):
    """A turn began with the person's request."""

    turn_id: str = ""
    position: int = 0
    request: str = ""


@dataclass(frozen=True)
class AssistantDelta(Event):
    """A piece of streamed answer text."""

    turn_id: str = ""
    text: str = ""


@dataclass(frozen=True)
class AssistantMessage(Event):
    """The whole text of one model response (after its deltas), kept for the transcript."""

    turn_id: str = ""
    iteration: int = 0
    text: str = ""
    incomplete: str = ""  # an Incomplete value: why the text is not a whole answer


@dataclass(frozen=True)
class AssistantThinking(Event):
    """One block of the model's reasoning in a response (after its deltas). ``signature`` /
    ``redacted`` are the provider's opaque fields, kept so the conversation can go on."""

    turn_id: str = ""
    iteration: int = 0
    text: str = ""
    signature: str = ""
    redacted: str = ""


@dataclass(frozen=True)
class IterationStarted(Event):
    """The model called a tool: ``python_execution`` (``code``) or a direct tool."""

    turn_id: str = ""
    iteration_id: str = ""
    index: int = 0
    tool: str = PYTHON_EXECUTION
    code: str = ""
    arguments: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class BlockPrinted(Event):
    """What a running block printed since its last ``BlockPrinted`` (a long stretch: its end,
    after a note of the cut), committed before it is shown, so a Vis that is killed keeps it."""

    turn_id: str = ""
    iteration_id: str = ""
    text: str = ""


@dataclass(frozen=True)
class BlockFinished(Event):
    """A block (or direct call) ended; ``stdout``/``error`` are what the model sees (a cut
    output says where the whole of it was saved); ``files`` are the workspace files it
    created, changed or removed, with their diffs."""

    turn_id: str = ""
    iteration_id: str = ""
    stdout: str = ""
    error: str | None = None
    restarted: bool = False
    duration: float = 0.0
    images: list[str] = field(default_factory=list)  # ids of attachments shown to the model
    files: tuple[FileChange, ...] = ()


@dataclass(frozen=True)
class ActivityStarted(Event):
    """A tool call began."""

    activity: ActivityRecord | None = None


@dataclass(frozen=True)
class ActivityUpdated(Event):
    """A running tool call showed more."""

    activity: ActivityRecord | None = None


@dataclass(frozen=True)
class ActivityEnded(Event):
    """A tool call ended."""

    activity: ActivityRecord | None = None


@dataclass(frozen=True)
class UsageReported(Event):
    """Usage of one model request. ``context_tokens`` is the request's measured input,
    ``context_limit`` the model's input limit (0: unknown), ``context_budget`` the soft budget
    (``auto_compress_above``), ``model`` the ``provider/model`` that answered; ``purpose``
    says why it was made (the conversation, or a side call Vis made itself)."""

    turn_id: str = ""
    usage: Usage = field(default_factory=Usage)
    cost: float = 0.0
    context_tokens: int = 0
    context_limit: int = 0
    context_budget: int = 0
    model: str = ""
    purpose: UsagePurpose = UsagePurpose.CONVERSATION


# The iteration slot of a turn's request and of its answer in a (turn position, slot) tag;
# iterations count from 1.
REQUEST_SLOT, ANSWER_SLOT = 0, -1


@dataclass(frozen=True)
class FoldCreated(Event):
    """Settled steps left the model's active context, replaced by ``gist`` (none when empty).

    ``spans`` are ``[turn position, first iteration, last iteration]``; ``[position, 0, 0]``
    is a whole turn with its request and answer. ``origin`` is ``model`` (``fold_session``),
    ``overflow`` (Vis recovered from a too-long request) or ``compact`` (``/compact``).
    ``removed_tokens`` is the local estimate of the receipt; ``before_input_tokens`` the
    latest measured input when the fold was made. The stored history never changes.
    """

    fold_id: str = ""
    turn_id: str = ""
    iteration_id: str | None = None
    key: str = ""
    gist: str = ""
    spans: list[list[int]] = field(default_factory=list)
    origin: str = "model"
    removed_tokens: int = 0
    before_input_tokens: int = 0
    model: str = ""


@dataclass(frozen=True)
class DraftChanged(Event):
    """The session entered, synced, approved or discarded a draft (vis_core/drafts): the
    transcript marks it in turn ``turn_id`` and the status bar shows the draft it is in."""

    turn_id: str = ""
    action: DraftAction = DraftAction.ENTERED
    label: str = ""
    backend: str = ""
    root: str = ""
    files: int = 0  # files differing from the target (written, for an approval)
    text: str = ""  # one line for the person
    commit: str = ""  # an approval's commit on the target branch (a git draft's), else empty

    def __post_init__(self) -> None:
        object.__setattr__(self, "action", DraftAction(self.action))

    @property
    def in_draft(self) -> bool:
        """Whether the session is in the draft after this change."""
        return self.action in (DraftAction.ENTERED, DraftAction.SYNCED, DraftAction.RESUMED)


@dataclass(frozen=True)
class BackgroundCommandEnded(Event):
    """A ``shell()`` command still running when its block ended has exited since.

    The model reads it with its next request (:meth:`text`) and the transcript shows it;
    ``handle_id`` is the handle ``shells()`` lists, ``state`` says how it ended (``exit 0``,
    ``stopped after its timeout (exit -15)``) and ``output`` is its output's tail.
    """

    turn_id: str = ""
    handle_id: str = ""
    command: str = ""
    exit_code: int | None = None
    state: str = ""
    output: str = ""
    runtime: float | None = None

    def text(self) -> str:
        took = f" after {self.runtime:.1f}s" if self.runtime is not None else ""
        tail = f" Last output:\n{self.output.rstrip()}" if self.output.strip() else ""
        return (
            f"[Vis: the background command {self.handle_id} ({self.command!r}) ended: "
            f"{self.state}{took}. shells() lists it; its logs() has the whole output.]{tail}"
        )


@dataclass(frozen=True)
class BackgroundFilesChanged(Event):
    """Files changed in the workspace after a block listed them, while commands
    the session's blocks left running (``commands``) ran: Vis cannot tell their changes from
    the person's, so each one seen then is listed here, with its diff, and ``/undo`` of
    turn ``undo_with`` (the last turn that ran a block before them) takes them back.

    Told when such a command ends between turns, when the turn ends, before ``/undo``, as
    the session closes (its commands stopped) (``turn_id`` empty), when the next turn takes
    its checkpoint and before a request that follows a block which left one running
    (``turn_id``: that turn's). ``more``: how many commands ran too, past those named."""

    turn_id: str = ""
    undo_with: int = 0  # the position of the turn whose /undo takes them back (0: none)
    commands: tuple[str, ...] = ()
    files: tuple[FileChange, ...] = ()
    more: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "commands", tuple(self.commands))  # a list, read back

    def text(self) -> str:
        ran = ", ".join(repr(one_line(command, 100)) for command in self.commands)
        ran += f" and {self.more} more" if self.more else ""
        changed = ", ".join(f"{change.path} ({change.kind.value})" for change in self.files)
        many = len(self.commands) + self.more > 1
        return (
            f"[Vis: while the background command{'s' if many else ''} "
            f"{ran} ran, after the last block's listing, these files changed (the person's "
            f"editor may have changed some): {changed}. The person was shown each diff.]"
        )


@dataclass(frozen=True)
class ContextNote(Event):
    """A note Vis adds to the model's next request: the context budget's hint from 90 %
    (``topic`` ``utilization``, until the next fold), the MCP servers section when it changed
    (``mcp_servers``). It follows the latest tool result or the turn's request, so the cached
    prefix stays."""

    turn_id: str = ""
    topic: str = ""
    text: str = ""

    @property
    def until_fold(self) -> bool:
        """Whether the next fold retires it: the budget's hint asks for one, and its numbers
        predate it (the stored note stays; a new one follows while the budget calls for it)."""
        return self.topic == "utilization"

    def summary(self, limit: int = 160) -> str:
        """One line for people: what Vis told the model."""
        if self.topic == "mcp_servers":
            return "Vis told the model the MCP servers section changed"
        line = one_line(self.text.removeprefix("[Vis: ").removesuffix("]"), limit)
        return f"Vis told the model: {line}"


@dataclass(frozen=True)
class Notification(Event):
    """A toast in the session: ``kind`` is one closed set from ``vis.notify`` to the TUI.
    ``transient``: it tells of a passing state (a model request being retried), so a front end
    shows it until the turn moves on, not as a toast that outlives the success."""

    text: str = ""
    kind: NotifyKind = NotifyKind.INFO
    transient: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", NotifyKind(self.kind))


@dataclass(frozen=True)
class TurnEnded(Event):
    """A turn ended, with its status and usage."""

    turn_id: str = ""
    status: TurnStatus = TurnStatus.COMPLETED
    content: str = ""
    usage: Usage = field(default_factory=Usage)
    cost: float = 0.0
    error: str | None = None


@dataclass(frozen=True)
class UserContext(Event):
    """Text the person added for the model (``@path``, ``!command``, ``/undo``): part of
    turn ``turn_id``'s request, or of the next request when ``turn_id`` is empty. ``note``
    is what the person was shown of it (Markdown; ``/undo`` keeps its note for a resume)."""

    turn_id: str = ""
    origin: ContextOrigin = ContextOrigin.FILE
    title: str = ""
    text: str = ""
    note: str = ""


@dataclass(frozen=True)
class ImageAttached(Event):
    """The person attached an image to turn ``turn_id``'s request (``@shot.png``, a pasted
    path, the clipboard). The bytes are the session's attachment ``attachment_id``; the event
    holds only what the transcript shows, so history pages never read the image."""

    turn_id: str = ""
    attachment_id: str = ""
    name: str = ""
    media_type: str = ""
    size: int = 0
    width: int = 0
    height: int = 0


@dataclass(frozen=True)
class CommandNoted(Event):
    """What a slash command showed the person (``markdown``; ``ok`` False: an error), kept
    so that a resumed session shows it again where it was, after the turn before it."""

    command: str = ""
    markdown: str = ""
    ok: bool = True


@dataclass(frozen=True)
class FormRequested(Event):
    """An extension called ``vis.ask``; ``form`` is the plain form (no validators)."""

    request_id: str = ""
    owner: str = ""
    title: str = ""
    form: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class FormAnswered(Event):
    """How a form ended: ``reason`` is submitted, cancelled, timeout or undeliverable;
    ``values`` has secrets masked."""

    request_id: str = ""
    reason: str = "submitted"
    values: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class LiveOpened(Event):
    """A ``vis.live`` view opened; ``nodes`` are plain components."""

    view_id: str = ""
    title: str = ""
    owner: str = ""
    placement: str = "inline"
    key: str | None = None
    nodes: list[Any] = field(default_factory=list)
    activity_id: str | None = None
    turn_id: str | None = None


@dataclass(frozen=True)
class LiveUpdated(Event):
    """A batch of updates to an open view (``LiveUpdate.to_plain`` dicts, in order)."""

    view_id: str = ""
    updates: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class LiveClosed(Event):
    """A live view was closed."""

    view_id: str = ""
    reason: str | None = None
    summary: str | None = None


@dataclass(frozen=True)
class StoredEvent:
    """One entry of a session's event log; ``seq`` increases with every append."""

    seq: int
    session_id: str
    type: str
    data: str
    created: float

    @property
    def event(self) -> Event:
        return event_from_dict(json.loads(self.data))
