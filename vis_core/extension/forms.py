"""``vis.ask``: form fields, layout nodes, the answer and its secret values."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, NoReturn

from vis_core.model.lines import is_one_line

Validator = Callable[[Any], "str | None"]
Scalar = str | int | float | bool

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]*$")
MASK = "••••••"


class FieldType(StrEnum):
    PLAINTEXT = "plaintext"
    PASSWORD = "password"
    MULTILINE = "multiline"
    SELECT = "select"
    MULTISELECT = "multiselect"
    CHECKBOX = "checkbox"
    RANGE = "range"
    OTP = "otp"


SECRET_TYPES = frozenset({FieldType.PASSWORD, FieldType.OTP})
TEXT_TYPES = frozenset({FieldType.PLAINTEXT, FieldType.PASSWORD, FieldType.MULTILINE})


class Direction(StrEnum):
    COLUMN = "column"
    ROW = "row"


class AnswerReason(StrEnum):
    """Why an answer carries no values."""

    CANCELLED = "cancelled"
    TIMEOUT = "timeout"
    UNDELIVERABLE = "undeliverable"


class FormDeclarationError(ValueError):
    """A form or live view was declared wrongly; the message names the node and the fix."""


def _fail(where: str, problem: str) -> NoReturn:
    raise FormDeclarationError(f"{where}: {problem}")


def _whole(value: Any) -> bool:
    """A whole number of 0 or more, not a bool (``True`` is an int to Python, 1 ms here)."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _text(where: str, name: str, value: Any, *, optional: bool = False) -> None:
    """``value`` is text (or None where ``optional``): a widget draws it as such, and an int
    or None in its place ended the TUI as it drew the node."""
    if not (isinstance(value, str) or (optional and value is None)):
        _fail(where, f"{name} must be text{' or None' if optional else ''}, got {value!r}")


@dataclass(frozen=True)
class Option:
    """One choice of a select or multiselect: the value returned and the label shown."""

    value: Scalar
    label: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.value, Scalar):
            _fail("option", f"value must be a str, int, float or bool, got {self.value!r}")
        if not self.label:
            object.__setattr__(self, "label", str(self.value))
        _text(f"option {self.value!r}", "label", self.label)


@dataclass(frozen=True)
class Field:
    """One input of a form (or of a live view); ``name`` keys its value in the answer."""

    name: str
    label: str = ""
    description: str | None = None
    type: FieldType = FieldType.PLAINTEXT
    placeholder: str | None = None
    default: Any = None
    is_required: bool = False
    min_length: int | None = None
    max_length: int | None = None
    validate: tuple[Validator, ...] = ()
    options: tuple[Option, ...] = ()
    min: float = 0
    max: float = 100
    step: float = 1
    length: int = 6

    def __post_init__(self) -> None:
        where = f"field {self.name!r}"
        if not isinstance(self.name, str) or not _NAME.fullmatch(self.name):
            _fail(where, "name must start with a letter or _ and hold letters, digits, _ . -")
        object.__setattr__(self, "type", _enum(FieldType, self.type, where, "type"))
        if not self.label:
            object.__setattr__(self, "label", self.name.replace("_", " ").capitalize())
        _text(where, "label", self.label)
        _text(where, "description", self.description, optional=True)
        _text(where, "placeholder", self.placeholder, optional=True)
        validators = self.validate
        if callable(validators):
            validators = (validators,)
        validators = tuple(validators or ())
        if not all(callable(v) for v in validators):
            _fail(where, "validate takes a function or a list of functions")
        object.__setattr__(self, "validate", validators)
        options = tuple(o if isinstance(o, Option) else _option(o) for o in self.options)
        object.__setattr__(self, "options", options)
        self._check_declaration(where)

    def _check_declaration(self, where: str) -> None:
        kind = self.type
        if kind in (FieldType.SELECT, FieldType.MULTISELECT):
            if not self.options:
                _fail(where, f"a {kind} needs options, e.g. options=[vis.option('a', 'A')]")
            values = [o.value for o in self.options]
            if len(set(values)) != len(values):
                _fail(where, "option values must be unique")
        elif self.options:
            _fail(where, f"options apply only to select and multiselect, not {kind}")
        for key in ("min_length", "max_length"):
            value = getattr(self, key)
            if value is not None and (not isinstance(value, int) or value < 0):
                _fail(where, f"{key} must be a whole number ≥ 0")
        if (
            self.min_length is not None
            and self.max_length is not None
            and self.min_length > self.max_length
        ):
            _fail(where, "min_length is larger than max_length")
        if kind is FieldType.RANGE:
            if not self.min < self.max:
                _fail(where, f"min ({self.min}) must be below max ({self.max})")
            if not self.step > 0:
                _fail(where, f"step must be above 0, got {self.step}")
        if kind is FieldType.OTP and not (isinstance(self.length, int) and 6 <= self.length <= 12):
            _fail(where, f"an otp code has 6 to 12 digits, got length={self.length!r}")
        if self.default is not None:
            if kind in SECRET_TYPES:
                _fail(where, "a secret field cannot have a default")
            problem = self._shape(self.default)
            if problem:
                _fail(where, f"default {self.default!r}: {problem}")

    # -- values -----------------------------------------------------------------------
    @property
    def id(self) -> str:
        return self.name

    @property
    def is_secret(self) -> bool:
        return self.type in SECRET_TYPES

    def initial(self) -> Any:
        """The value the input starts with."""
        if self.default is not None:
            return list(self.default) if self.type is FieldType.MULTISELECT else self.default
        return {
            FieldType.SELECT: None,
            FieldType.MULTISELECT: [],
            FieldType.CHECKBOX: False,
            FieldType.RANGE: self.min,
        }.get(self.type, "")

    def _shape(self, value: Any) -> str | None:
        """What is wrong with the type of ``value`` for this field, or None."""
        kind = self.type
        if kind in TEXT_TYPES or kind is FieldType.OTP:
            if not isinstance(value, str):
                return "expected text"
            if kind is FieldType.PLAINTEXT and not is_one_line(value):
                return "expected one line of text (vis.multiline takes more)"
            return None
        if kind is FieldType.CHECKBOX:
            return None if isinstance(value, bool) else "expected True or False"
        if kind is FieldType.RANGE:
            if isinstance(value, bool) or not isinstance(value, int | float):
                return "expected a number"
            if not self.min <= value <= self.max:
                return f"pick a number from {_num(self.min)} to {_num(self.max)}"
            steps = (value - self.min) / self.step
            if not math.isclose(steps, round(steps), abs_tol=1e-9):
                return f"use steps of {_num(self.step)} from {_num(self.min)}"
            return None
        values = [o.value for o in self.options]
        if kind is FieldType.SELECT:
            return None if value is None or value in values else "not one of the options"
        if not isinstance(value, list | tuple):
            return "expected a list of option values"
        wrong = [v for v in value if v not in values]
        return f"not among the options: {', '.join(map(repr, wrong))}" if wrong else None

    def check(self, value: Any) -> str | None:
        """The message to show under this field for ``value``, or None when it is fine."""
        text = value.reveal() if isinstance(value, Secret) else value
        kind = self.type
        empty = text in (None, "", [], ()) or (kind is FieldType.CHECKBOX and text is False)
        if empty:
            if self.is_required:
                return {
                    FieldType.SELECT: "Required: choose one option.",
                    FieldType.MULTISELECT: "Required: choose at least one option.",
                    FieldType.CHECKBOX: "Required: tick this box to go on.",
                }.get(kind, "Required: enter a value.")
            return None
        problem = self._shape(text)
        if problem:
            return f"Invalid: {problem}."
        if kind is FieldType.OTP and not (
            isinstance(text, str) and text.isascii() and text.isdigit() and len(text) == self.length
        ):
            return f"Enter the {self.length}-digit code (digits only)."
        if isinstance(text, str) and kind is not FieldType.OTP:
            if self.min_length is not None and len(text) < self.min_length:
                return f"Too short: at least {self.min_length} characters (now {len(text)})."
            if self.max_length is not None and len(text) > self.max_length:
                return f"Too long: at most {self.max_length} characters (now {len(text)})."
        for validator in self.validate:
            try:
                message = validator(text)
            except Exception as exc:  # the extension's check itself broke: say so on the field
                return f"The check of this field failed: {type(exc).__name__}: {exc}"
            if message:
                return str(message)
        return None

    def coerce(self, value: Any) -> Any:
        """The answer value: secrets wrapped, multiselect in declared order, numbers typed."""
        if self.is_secret:
            return value if isinstance(value, Secret) else Secret(str(value or ""))
        if self.type is FieldType.MULTISELECT:
            chosen = list(value or [])
            return [o.value for o in self.options if o.value in chosen]
        if self.type is FieldType.RANGE:
            whole = all(float(x).is_integer() for x in (self.min, self.step))
            return int(round(value)) if whole else float(value)
        if self.type is FieldType.CHECKBOX:
            return bool(value)
        return value


@dataclass(frozen=True)
class Heading:
    """A heading line (level 1–6); carries no value."""

    text: str
    level: int = 2
    id: str | None = None

    def __post_init__(self) -> None:
        _text("heading", "text", self.text)
        if not isinstance(self.level, int) or not 1 <= self.level <= 6:
            _fail(f"heading {self.text!r}", f"level must be 1 to 6, got {self.level!r}")


@dataclass(frozen=True)
class Paragraph:
    """A paragraph of text; carries no value."""

    text: str
    id: str | None = None

    def __post_init__(self) -> None:
        _text("paragraph", "text", self.text)


@dataclass(frozen=True)
class Group:
    """Nodes laid out in a column or a row."""

    fields: tuple[Any, ...] = ()
    direction: Direction = Direction.COLUMN
    id: str | None = None
    label: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "fields", tuple(self.fields))
        object.__setattr__(
            self, "direction", _enum(Direction, self.direction, "group", "direction")
        )
        _text("group", "label", self.label, optional=True)


FORM_NODE_TYPES: tuple[type, ...] = (Field, Heading, Paragraph, Group)


class Secret:
    """A secret typed by the person: ``reveal()`` gives the text; repr and str stay masked."""

    __slots__ = ("_text",)

    def __init__(self, text: str) -> None:
        self._text = text

    def reveal(self) -> str:
        return self._text

    def __repr__(self) -> str:
        return f"Secret({MASK!r})"

    __str__ = __repr__

    def __bool__(self) -> bool:
        return bool(self._text)

    def __reduce__(self) -> Any:
        raise TypeError("a vis secret cannot be pickled; call reveal() where you need the text")


class Answer:
    """What the person answered: truthy only when submitted; ``values`` maps field names."""

    __slots__ = ("_values", "reason")

    def __init__(
        self, values: Mapping[str, Any] | None = None, reason: AnswerReason | None = None
    ) -> None:
        self._values = dict(values or {})
        self.reason = None if reason is None else AnswerReason(reason)

    @property
    def values(self) -> dict[str, Any]:
        return dict(self._values)

    def __bool__(self) -> bool:
        return self.reason is None

    def __getitem__(self, name: str) -> Any:
        return self._values[name]

    def get(self, name: str, default: Any = None) -> Any:
        return self._values.get(name, default)

    def reveal(self, name: str) -> str:
        """The text of the secret field ``name``."""
        value = self._values.get(name)
        if isinstance(value, Secret):
            return value.reveal()
        if name not in self._values:
            raise KeyError(f"the answer has no field {name!r}; fields: {', '.join(self._values)}")
        raise TypeError(f"field {name!r} is not a secret; read answer.values[{name!r}]")

    def masked(self) -> dict[str, Any]:
        """Values with secrets shown as a mask (safe to log or store)."""
        return {k: MASK if isinstance(v, Secret) else v for k, v in self._values.items()}

    def __repr__(self) -> str:
        state = "submitted" if self.reason is None else self.reason.value
        return f"Answer({state}, values={self.masked()!r})"

    __str__ = __repr__


@dataclass(frozen=True)
class Form:
    """A whole ``vis.ask`` request, validated on construction."""

    title: str
    nodes: tuple[Any, ...]
    description: str | None = None
    submit_label: str = "Submit"
    cancel_label: str = "Cancel"
    is_cancellable: bool = True
    timeout_ms: int = 300_000

    def __post_init__(self) -> None:
        if not isinstance(self.title, str) or not self.title.strip():
            _fail("vis.ask", "the form needs a title")
        _text("vis.ask", "description", self.description, optional=True)
        _text("vis.ask", "submit_label", self.submit_label)
        _text("vis.ask", "cancel_label", self.cancel_label)
        nodes = (self.nodes,) if isinstance(self.nodes, FORM_NODE_TYPES) else tuple(self.nodes)
        object.__setattr__(self, "nodes", nodes)
        _check_nodes(nodes, FORM_NODE_TYPES, "vis.ask")
        if not _whole(self.timeout_ms):
            _fail(
                "vis.ask",
                f"timeout_ms must be a whole number ≥ 0 (0 waits forever), got {self.timeout_ms!r}",
            )

    def fields(self) -> list[Field]:
        return list(iter_fields(self.nodes))

    def initial_values(self) -> dict[str, Any]:
        return {f.name: f.initial() for f in self.fields()}

    def check(self, values: Mapping[str, Any]) -> dict[str, str]:
        """Messages of the wrong fields, in form order (empty when all are fine)."""
        errors = {}
        for item in self.fields():
            message = item.check(values.get(item.name))
            if message:
                errors[item.name] = message
        return errors

    def answer(self, values: Mapping[str, Any]) -> Answer:
        return Answer({f.name: f.coerce(values.get(f.name, f.initial())) for f in self.fields()})


def walk(nodes: Iterable[Any]) -> Iterator[Any]:
    """Every node in ``nodes`` and in the layouts among them, depth first, in declared order."""
    for node in nodes:
        yield node
        yield from walk(children(node))


def children(node: Any) -> tuple[Any, ...]:
    """The nodes a layout (a group, a disclosure) holds; none for any other node."""
    held = getattr(node, "fields", None) or getattr(node, "nodes", None)
    return held if isinstance(held, tuple) else ()


def iter_fields(nodes: Iterable[Any]) -> Iterator[Field]:
    """Every field in ``nodes``, depth first, in declared order."""
    return (node for node in walk(nodes) if isinstance(node, Field))


def _check_nodes(nodes: tuple[Any, ...], allowed: tuple[type, ...], where: str) -> None:
    names: set[str] = set()
    for item in walk(nodes):
        if not isinstance(item, allowed):
            kinds = ", ".join(sorted(t.__name__ for t in allowed))
            _fail(where, f"{not_a_node(item)} is not a component here (expected one of: {kinds})")
        if isinstance(item, Field):
            if item.name in names:
                _fail(where, f"two fields are named {item.name!r}; names must be unique")
            names.add(item.name)


def not_a_node(value: Any) -> str:
    """``value``, which is no component, for a refusal: a list or tuple by its length and how
    to pass its nodes (not every node's repr), anything else by a short repr."""
    if isinstance(value, list | tuple):
        kind = type(value).__name__
        return (
            f"a {kind} of {len(value)} item(s) (a layout takes its nodes as arguments, "
            f"group(a, b), or one {kind} of them, group([a, b]))"
        )
    text = repr(value)
    return text if len(text) <= 80 else f"{text[:77]}..."


def _laid_out(nodes: tuple[Any, ...]) -> tuple[Any, ...]:
    """A layout's nodes, given as arguments or as one list or tuple (as ``vis.ask`` takes)."""
    if len(nodes) == 1 and isinstance(nodes[0], list | tuple):
        return tuple(nodes[0])
    return nodes


def _enum(kind: type[StrEnum], value: Any, where: str, key: str) -> Any:
    try:
        return kind(value)
    except ValueError:
        choices = ", ".join(m.value for m in kind)  # type: ignore[attr-defined]
        _fail(where, f"{key} must be one of {choices}, got {value!r}")


def _option(value: Any) -> Option:
    if isinstance(value, tuple):
        if len(value) != 2:
            _fail("option", f"a (value, label) pair has two items, got {value!r}")
        return Option(value[0], value[1])
    return Option(value)


def _num(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


# -- builders -------------------------------------------------------------------------------


def plaintext(name: str, label: str = "", **keys: Any) -> Field:
    return Field(name, label, type=FieldType.PLAINTEXT, **keys)


def password(name: str, label: str = "", **keys: Any) -> Field:
    return Field(name, label, type=FieldType.PASSWORD, **keys)


def multiline(name: str, label: str = "", **keys: Any) -> Field:
    return Field(name, label, type=FieldType.MULTILINE, **keys)


def select(name: str, label: str = "", options: Iterable[Any] = (), **keys: Any) -> Field:
    return Field(name, label, type=FieldType.SELECT, options=tuple(options), **keys)


def multiselect(name: str, label: str = "", options: Iterable[Any] = (), **keys: Any) -> Field:
    return Field(name, label, type=FieldType.MULTISELECT, options=tuple(options), **keys)


def checkbox(name: str, label: str = "", **keys: Any) -> Field:
    return Field(name, label, type=FieldType.CHECKBOX, **keys)


def slider(
    name: str, label: str = "", *, min: float = 0, max: float = 100, step: float = 1, **keys: Any
) -> Field:
    return Field(name, label, type=FieldType.RANGE, min=min, max=max, step=step, **keys)


def otp(name: str, label: str = "", *, length: int = 6, **keys: Any) -> Field:
    return Field(name, label, type=FieldType.OTP, length=length, **keys)


def option(value: Scalar, label: str = "") -> Option:
    return Option(value, label)


def group(
    *nodes: Any, direction: str = "column", id: str | None = None, label: str | None = None
) -> Group:
    return Group(_laid_out(nodes), Direction(direction), id=id, label=label)


def row(*nodes: Any, id: str | None = None) -> Group:
    return Group(_laid_out(nodes), Direction.ROW, id=id)


def column(*nodes: Any, id: str | None = None) -> Group:
    return Group(_laid_out(nodes), Direction.COLUMN, id=id)


def heading(text: str, level: int = 2, *, id: str | None = None) -> Heading:
    return Heading(text, level, id=id)


def paragraph(text: str, *, id: str | None = None) -> Paragraph:
    return Paragraph(text, id=id)


def ask(
    title: str,
    fields: Iterable[Any] | Any,
    *,
    description: str | None = None,
    submit_label: str = "Submit",
    cancel_label: str = "Cancel",
    is_cancellable: bool = True,
    timeout_ms: int = 300_000,
) -> Answer:
    """Pause the calling extension and ask the person to fill a form; returns an ``Answer``
    (falsy with ``.reason`` "cancelled", "timeout" or "undeliverable" unless submitted)."""
    form = Form(
        title,
        (fields,) if isinstance(fields, FORM_NODE_TYPES) else tuple(fields),
        description=description,
        submit_label=submit_label,
        cancel_label=cancel_label,
        is_cancellable=is_cancellable,
        timeout_ms=timeout_ms,
    )
    from vis_core.extension.runtime import current_runtime

    return current_runtime().ask(form)
