"""The Activity model: frozen presentation blocks, their validation, and engine-owned rows."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, fields, is_dataclass
from enum import StrEnum
from operator import attrgetter
from typing import Any, Literal, TypeVar

from vis_core.model.block import plain_error

MAX_LINE_BYTES = 512
MAX_HANDLE_CHARS = 256
R = TypeVar("R")  # a call's record: an ActivityRecord, or its stored form (a dict)


# The tools whose Activity runs a child session (vis_core/subagents): the child's Activities
# show folded under it.
CHILD_SESSION_TOOLS = frozenset({"run_session", "consult"})


class SymbolTag(StrEnum):
    """What kind of work a tool call did; decides where it is counted."""

    OBSERVATION = "observation"
    MUTATION = "mutation"
    VERIFICATION = "verification"
    EXTERNAL = "external"


class Verdict(StrEnum):
    """How a check an Activity reports came out (a test run, a lint)."""

    PASSED = "passed"
    FAILED = "failed"


class ActivityState(StrEnum):
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CANCELLED = "cancelled"


class RenderPhase(StrEnum):
    """When an Activity's ``render`` is called (equal to its plain string: "start" …)."""

    START = "start"
    SUCCESS = "success"
    FAILURE = "failure"


def _one_line(value: object, what: str, *, allow_empty: bool = True) -> str:
    value = _str(value, what)
    if "\n" in value or "\r" in value:
        raise ValueError(f"{what} must be one line; put longer text in content blocks")
    if len(value.encode("utf-8")) > MAX_LINE_BYTES:
        raise ValueError(
            f"{what} is {len(value.encode('utf-8'))} UTF-8 bytes; the limit is {MAX_LINE_BYTES}"
        )
    if not allow_empty and not value.strip():
        raise ValueError(f"{what} must not be blank")
    return value


def _str(value: object, what: str) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{what} must be a string, got {type(value).__name__}")
    return value


def _summary_format(value: object, what: str) -> str:
    if value not in ("inline", "markdown"):
        raise ValueError(f"{what} summary_format must be 'inline' or 'markdown', got {value!r}")
    return str(value)


@dataclass(frozen=True)
class ActivityText:
    """Plain text; paths in it are shortened."""

    text: str

    def __post_init__(self) -> None:
        _str(self.text, "ActivityText.text")


@dataclass(frozen=True)
class ActivityHeading:
    """A heading inside content; paths in it are shortened."""

    text: str

    def __post_init__(self) -> None:
        _one_line(self.text, "ActivityHeading.text")


@dataclass(frozen=True)
class ActivityMarkdown:
    """A Markdown body, rendered; its paths are kept as written."""

    markdown: str

    def __post_init__(self) -> None:
        _str(self.markdown, "ActivityMarkdown.markdown")


@dataclass(frozen=True)
class ActivityCode:
    """Source code, syntax highlighted in ``language``."""

    code: str
    language: str = "text"
    path: str | None = None

    def __post_init__(self) -> None:
        _str(self.code, "ActivityCode.code")
        _str(self.language, "ActivityCode.language")


@dataclass(frozen=True)
class ActivityDiff:
    """A unified diff; ``path`` is the file it changes, if one."""

    diff: str
    path: str | None = None

    def __post_init__(self) -> None:
        _str(self.diff, "ActivityDiff.diff")


@dataclass(frozen=True)
class ActivityTable:
    """A table; ``paths`` gives each row's file (``""`` for none) and must match ``rows``."""

    headers: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    paths: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        headers = tuple(_str(h, "ActivityTable header") for h in self.headers)
        rows = tuple(tuple(str(cell) for cell in row) for row in self.rows)
        for index, row in enumerate(rows):
            if len(row) != len(headers):
                raise ValueError(
                    f"ActivityTable row {index} has {len(row)} cells; the table has "
                    f"{len(headers)} headers"
                )
        object.__setattr__(self, "headers", headers)
        object.__setattr__(self, "rows", rows)
        if self.paths is not None:
            paths = tuple(_str(p, "ActivityTable path") for p in self.paths)
            if len(paths) != len(rows):
                raise ValueError(
                    f"ActivityTable paths has {len(paths)} entries but the table has "
                    f"{len(rows)} rows; give one path per row ('' for a row without a file)"
                )
            object.__setattr__(self, "paths", paths)


@dataclass(frozen=True)
class ActivityProgress:
    """Progress of ``completed`` out of ``total`` (``None`` when unknown)."""

    completed: float
    total: float | None = None
    label: str = ""

    def __post_init__(self) -> None:
        if isinstance(self.completed, bool) or not isinstance(self.completed, int | float):
            raise ValueError("ActivityProgress.completed must be a number")
        if self.completed < 0:
            raise ValueError("ActivityProgress.completed must not be negative")
        if self.total is not None:
            if isinstance(self.total, bool) or not isinstance(self.total, int | float):
                raise ValueError("ActivityProgress.total must be a number or None")
            if self.total < 0:
                raise ValueError("ActivityProgress.total must not be negative")
        _one_line(self.label, "ActivityProgress.label")


@dataclass(frozen=True)
class ActivityTerminalLine:
    """One output line of a command, on ``stdout`` or ``stderr``."""

    text: str
    stream: Literal["stdout", "stderr"] = "stdout"

    def __post_init__(self) -> None:
        _str(self.text, "ActivityTerminalLine.text")
        if self.stream not in ("stdout", "stderr"):
            raise ValueError(
                f"ActivityTerminalLine.stream must be stdout or stderr, got {self.stream!r}"
            )


@dataclass(frozen=True)
class ActivityTerminal:
    """A command as stages (later stages start with their operator) and what it printed.

    ``command_text`` is the command exactly as it ran, when the stages (shown, maybe cut) do
    not spell it joined by spaces; :meth:`command_as_run` is what a copy of it holds.
    """

    command: tuple[str, ...]
    lines: tuple[ActivityTerminalLine, ...] = ()
    exit: int | None = None
    omitted_lines: int = 0
    command_text: str = ""

    def command_as_run(self) -> str:
        """The command as it ran (its stages joined by spaces when it was not given)."""
        return self.command_text or " ".join(self.command)

    def __post_init__(self) -> None:
        command = (self.command,) if isinstance(self.command, str) else tuple(self.command)
        if not command:
            raise ValueError("ActivityTerminal.command needs at least one stage")
        for stage in command:
            _one_line(stage, "ActivityTerminal stage")
        lines = tuple(
            ActivityTerminalLine(line) if isinstance(line, str) else line for line in self.lines
        )
        for line in lines:
            if not isinstance(line, ActivityTerminalLine):
                raise ValueError("ActivityTerminal.lines holds strings or ActivityTerminalLine")
        if self.exit is not None and (
            isinstance(self.exit, bool) or not isinstance(self.exit, int)
        ):
            raise ValueError("ActivityTerminal.exit must be an int or None")
        if (
            isinstance(self.omitted_lines, bool)
            or not isinstance(self.omitted_lines, int)
            or self.omitted_lines < 0
        ):
            raise ValueError("ActivityTerminal.omitted_lines must be a non-negative int")
        _str(self.command_text, "ActivityTerminal.command_text")
        object.__setattr__(self, "command", command)
        object.__setattr__(self, "lines", lines)


# A URL or inline data: not a file the session keeps (a name, an id or a workspace path is).
_NOT_AN_ATTACHMENT = re.compile(r"^(?:[a-zA-Z][a-zA-Z0-9+.-]*://|data:)")


@dataclass(frozen=True)
class _Media:
    """A block showing one attached file."""

    attachment: str
    caption: str = ""

    def __post_init__(self) -> None:
        what = f"{type(self).__name__}.attachment"
        _one_line(self.attachment, what, allow_empty=False)
        _one_line(self.caption, f"{type(self).__name__}.caption")
        if _NOT_AN_ATTACHMENT.match(self.attachment):
            raise ValueError(
                f"{what} {self.attachment[:60]!r} is not an attachment: media blocks show files "
                "the session keeps; store it with vis.attach(...) and pass its filename or id"
            )


@dataclass(frozen=True)
class ActivityImage(_Media):
    """An image attachment, by attachment name or path."""


@dataclass(frozen=True)
class ActivityVideo(_Media):
    """A video attachment."""


@dataclass(frozen=True)
class ActivityAudio(_Media):
    """An audio attachment."""


@dataclass(frozen=True)
class ActivityFile(_Media):
    """Any other file attachment."""


BLOCK_TYPES: tuple[type, ...] = (
    ActivityText,
    ActivityHeading,
    ActivityMarkdown,
    ActivityCode,
    ActivityDiff,
    ActivityTable,
    ActivityProgress,
    ActivityTerminal,
    ActivityImage,
    ActivityVideo,
    ActivityAudio,
    ActivityFile,
)


def _blocks(content: object, owner: str) -> tuple[Any, ...]:
    if isinstance(content, str | bytes) or not isinstance(content, Iterable):
        raise ValueError(f"{owner}.content must be a sequence of Activity blocks")
    blocks = tuple(content)
    for block in blocks:
        if isinstance(block, ActivitySection):
            raise ValueError(f"{owner}.content cannot hold a section; use sections=")
        if not isinstance(block, BLOCK_TYPES):
            raise ValueError(
                f"{owner}.content holds {type(block).__name__}; use Activity blocks such as "
                "ActivityText or ActivityTable"
            )
    return blocks


@dataclass(frozen=True)
class ActivitySection:
    """A titled group of blocks with its own disclosure; sections do not nest."""

    headline: str
    summary: str
    content: tuple[Any, ...] = ()
    summary_format: str = "inline"

    def __post_init__(self) -> None:
        _one_line(self.headline, "ActivitySection.headline")
        _one_line(self.summary, "ActivitySection.summary")
        _summary_format(self.summary_format, "ActivitySection")
        object.__setattr__(self, "content", _blocks(self.content, "ActivitySection"))


@dataclass(frozen=True)
class ActivityPresentation:
    """What a person sees of one tool call: headline, summary, content behind a disclosure."""

    headline: str
    summary: str
    content: tuple[Any, ...] = ()
    sections: tuple[ActivitySection, ...] = ()
    handle_id: str | None = None
    verdict: Verdict | None = None
    outcome: str | None = None
    aside: str | None = None
    summary_format: str = "inline"

    def __post_init__(self) -> None:
        _one_line(self.headline, "ActivityPresentation.headline")
        _one_line(self.summary, "ActivityPresentation.summary")
        _summary_format(self.summary_format, "ActivityPresentation")
        object.__setattr__(self, "content", _blocks(self.content, "ActivityPresentation"))
        if isinstance(self.sections, str | bytes) or not isinstance(self.sections, Iterable):
            raise ValueError("ActivityPresentation.sections must be a sequence of ActivitySection")
        sections = tuple(self.sections)
        for section in sections:
            if not isinstance(section, ActivitySection):
                raise ValueError(
                    f"ActivityPresentation.sections holds {type(section).__name__}; "
                    "use ActivitySection"
                )
        object.__setattr__(self, "sections", sections)
        if self.handle_id is not None:
            handle = self.handle_id
            if not isinstance(handle, str) or not handle.strip():
                raise ValueError("handle_id must be a nonblank string or None")
            if len(handle) > MAX_HANDLE_CHARS:
                raise ValueError(
                    f"handle_id has {len(handle)} characters; the limit is {MAX_HANDLE_CHARS}"
                )
            _one_line(handle, "handle_id")
        if self.verdict is not None:
            if self.verdict not in tuple(Verdict):
                raise ValueError(
                    f"verdict must be 'passed', 'failed' or None, got {self.verdict!r}"
                )
            object.__setattr__(self, "verdict", Verdict(self.verdict))
        if self.outcome is not None:
            _one_line(self.outcome, "ActivityPresentation.outcome")
        if self.aside is not None:
            _one_line(self.aside, "ActivityPresentation.aside")


@dataclass(frozen=True)
class ActivityRecord:
    """An engine-owned Activity row: identity, state, tag, timing, error and handle grouping."""

    id: str
    session_id: str
    turn_id: str | None
    iteration_id: str | None
    tool: str
    tag: SymbolTag
    state: ActivityState
    presentation: ActivityPresentation | None
    owner: str = "vis"
    show_start: bool = True
    started_at: float = field(default_factory=time.time)
    ended_at: float | None = None
    error: str | None = None
    handle_id: str | None = None
    form: int = 0
    parent_id: str | None = None  # the Activity of the extension tool that made this call

    @property
    def duration(self) -> float | None:
        return None if self.ended_at is None else self.ended_at - self.started_at

    @property
    def group_key(self) -> tuple[str, int, str] | None:
        """Calls with one handle link only within one extension and one Python form."""
        return None if self.handle_id is None else (self.owner, self.form, self.handle_id)


def receipts_of(calls: Sequence[R], tool: Callable[[R], str] = attrgetter("tool")) -> tuple[R, ...]:
    """What the row of a handle lists under "Earlier on this handle", of the ``calls`` on it
    (oldest first; the row shows the newest): the calls before the newest, but not the call
    that made the handle (``shell()``: its method calls are named ``shell.wait`` …), which the
    row is itself. Its newest call says how the handle is now; listed apart, the start read
    as a second entry in a state long past ("running (pid 8585)" for a command that failed).
    ``tool``: a call's tool name (a stored record's ``"tool"``, for an export)."""
    earlier = tuple(calls[:-1])
    if earlier and tool(calls[-1]).startswith(f"{tool(earlier[0])}."):
        return earlier[1:]
    return earlier


def outcome_failed(presentation: ActivityPresentation) -> bool:
    """Whether a call's outcome failed though the call returned: a command that exited
    non-zero, tests that failed."""
    if presentation.verdict == "failed":
        return True
    blocks = [*presentation.content, *(b for s in presentation.sections for b in s.content)]
    return any(isinstance(b, ActivityTerminal) and b.exit not in (None, 0) for b in blocks)


def shown_state(record: ActivityRecord) -> ActivityState:
    """The state the person is shown (✓ ✗ ⊘): failed when the call returned but its outcome
    failed (:func:`outcome_failed`)."""
    presentation = record.presentation
    if record.state is ActivityState.SUCCEEDED and presentation and outcome_failed(presentation):
        return ActivityState.FAILED
    return record.state


def error_in_header(record: ActivityRecord) -> bool:
    """Whether the row's one line already says the whole error (it is then not said again)."""
    if not record.error or record.presentation is None:
        return warned(record)
    error, said = _header_texts(record)
    return bool(error) and error in said


def error_begun_in_header(record: ActivityRecord) -> bool:
    """Whether the row's one line says the start of the error but was cut (``…``) before its
    end: the line needs nothing after it, and the opened row shows the error whole."""
    if not record.error or record.presentation is None or warned(record):
        return False
    error, said = _header_texts(record)
    if not error or not said.endswith("…"):
        return False
    said = said[:-1]
    start = said.find(error[:_ERROR_LEAD])
    while start >= 0:
        if error.startswith(said[start:]):
            return True
        start = said.find(error[:_ERROR_LEAD], start + 1)
    return False


_ERROR_LEAD = 24  # the characters of an error a cut header must hold to count as saying it
# a path as a message or a summary writes it: absolute, ``~/…`` or relative with a ``/``
_PATH_WORD = re.compile(r"[^\s'\"`<>()\[\]{},;:|]*/[^\s'\"`<>()\[\]{},;:|]*")


def _header_texts(record: ActivityRecord) -> tuple[str, str]:
    """The error's first line and the header's summary (or outcome), as comparable texts:
    white space folded, and each path down to its last part, since a summary shows paths
    shortened (``~/…``, relative to the workspace) and an error as the tool wrote them."""
    assert record.error is not None and record.presentation is not None
    message = plain_error(record.error.splitlines()[0])
    # the class names and the tool's own "patch: " prefix aside, the header may carry the
    # message itself
    while ": " in message and message.split(": ", 1)[0].isidentifier():
        message = message.split(": ", 1)[1]
    said = record.presentation.summary or record.presentation.outcome or ""
    return _comparable(message), _comparable(said)


def _comparable(text: str) -> str:
    folded = " ".join(text.split())
    return _PATH_WORD.sub(lambda m: m.group(0).rstrip("/").rsplit("/", 1)[-1], folded)


def warned(record: ActivityRecord) -> bool:
    """A call that returned but carries a warning (a form the person did not submit)."""
    return record.state is ActivityState.SUCCEEDED and bool(record.error)


_TAG_WORDS = {
    SymbolTag.MUTATION: ("mutation", "mutations"),
    SymbolTag.OBSERVATION: ("observation", "observations"),
    SymbolTag.VERIFICATION: ("verification", "verifications"),
    SymbolTag.EXTERNAL: ("external", "external"),
}


def step_tags(records: Iterable[ActivityRecord]) -> list[SymbolTag]:
    """The agent's steps among ``records``, one tag per row the person sees: calls on one
    handle (a command started, then waited on) are one step, tagged as the first call; calls
    the person made outside any block (an ``@file`` view, a ``!command``) are not steps, nor
    is a call cancelled before it ended (it was not done; a call that failed was, and counts)."""
    steps: list[SymbolTag] = []
    seen: set[object] = set()
    for record in records:
        if record.iteration_id is None or record.state is ActivityState.CANCELLED:
            continue
        key = record.group_key or record.id
        if key not in seen:
            seen.add(key)
            steps.append(record.tag)
    return steps


def step_counts(tags: Sequence[SymbolTag | str], *, short: bool = False) -> str:
    """``1 mutation · 6 observations · 2 verifications``; ``short`` writes ``ver``."""
    counts = {tag: 0 for tag in _TAG_WORDS}
    for tag in tags:
        counts[SymbolTag(tag)] += 1
    parts = []
    for tag, (one, many) in _TAG_WORDS.items():
        n = counts[tag]
        if not n:
            continue
        word = "ver" if short and tag is SymbolTag.VERIFICATION else (one if n == 1 else many)
        parts.append(f"{n} {word}")
    return " · ".join(parts)


# -- wire form: plain dicts with a "kind" key, for the event log and the store -------------

_LEAF, _SEQ, _ENUM = 0, 1, 2
_SHAPES: dict[type, int | tuple[str, ...]] = {}


def field_names(cls: type) -> tuple[str, ...]:
    """A dataclass's field names, cached (``dataclasses.fields`` is slow on hot paths)."""
    shape = _SHAPES.get(cls)
    if not isinstance(shape, tuple):
        shape = _SHAPES[cls] = tuple(f.name for f in fields(cls))
    return shape


def _shape(cls: type) -> int | tuple[str, ...]:
    """How :func:`to_plain` treats instances of ``cls``: field names, or a leaf/seq/enum tag."""
    shape = _SHAPES.get(cls)
    if shape is None:
        if is_dataclass(cls):
            shape = field_names(cls)
        else:
            if issubclass(cls, tuple | list):
                shape = _SEQ
            elif issubclass(cls, StrEnum):
                shape = _ENUM
            else:
                shape = _LEAF
            _SHAPES[cls] = shape
    return shape


def to_plain(value: Any) -> Any:
    """A presentation (or any block) as JSON-ready data with ``kind`` discriminators."""
    shape = _shape(type(value))
    if shape == _LEAF:
        return value
    if shape == _SEQ:
        return [to_plain(item) for item in value]
    if shape == _ENUM:
        return value.value
    data: dict[str, Any] = {"kind": type(value).__name__}
    for name in shape:  # type: ignore[union-attr]
        item = getattr(value, name)
        # leaves (str, int, None…) are most fields: skip the call (this runs per stored event)
        data[name] = item if _SHAPES.get(type(item)) == _LEAF else to_plain(item)
    return data


def plain_presentation(presentation: ActivityPresentation) -> dict[str, Any]:
    """:func:`to_plain` of ``presentation``, made once per presentation and kept on it: it is
    frozen, and every event of its Activity carries it (the headline-only one a call starts
    with, every call of the tool). Shared: read it, never change it."""
    plain = presentation.__dict__.get(_PLAIN)
    if plain is None:
        plain = presentation.__dict__[_PLAIN] = to_plain(presentation)
    return plain


_PLAIN = "_plain"  # where plain_presentation keeps it (not a field: equality, repr ignore it)


def from_plain(data: Any) -> Any:
    """Rebuild what :func:`to_plain` produced."""
    if isinstance(data, list):
        return tuple(from_plain(v) for v in data)
    if isinstance(data, dict) and "kind" in data:
        kind = data["kind"]
        cls = _PLAIN_KINDS.get(kind)
        if cls is None:
            raise ValueError(f"unknown Activity kind {kind!r}")
        kwargs = {k: from_plain(v) for k, v in data.items() if k != "kind"}
        return cls(**kwargs)
    return data


@dataclass(frozen=True)
class Activity:
    """How one tool binding presents its calls: ``label``, ``presenter`` and ``render`` callback.

    ``render(phase=..., args=..., kwargs=..., result=..., error=...)`` runs on ``start``
    (unless ``show_start=False``), ``success`` and ``failure``, and returns an
    :class:`ActivityPresentation` or ``None`` to keep the current one.
    """

    label: str
    presenter: str = "generic"
    render: Any = None
    show_start: bool = True

    def __post_init__(self) -> None:
        _one_line(self.label, "Activity.label", allow_empty=False)
        _one_line(self.presenter, "Activity.presenter", allow_empty=False)
        if self.render is not None and not callable(self.render):
            raise ValueError("Activity.render must be a callable or None")
        if not isinstance(self.show_start, bool):
            raise ValueError("Activity.show_start must be a bool")


_PLAIN_KINDS: dict[str, type] = {
    cls.__name__: cls
    for cls in (*BLOCK_TYPES, ActivityTerminalLine, ActivitySection, ActivityPresentation)
}
