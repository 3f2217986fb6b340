"""``[REDACTED]`` in place of saved secret values: in stored events (blocks, Activities), logs."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from vis_core.events import Event

REDACTED = "[REDACTED]"
# A secret shorter than this cannot be redacted safely inside other text (a one-letter secret
# is in almost every word, a 4-digit PIN in about 1 id of 2,000): Vis refuses to save one, and
# one saved before is redacted only where it stands alone (never inside a word or an id).
MIN_SECRET_LENGTH = 8
# Fields that name a class or a closed set (validated values, never a secret): kept.
_KEEP = frozenset({"type", "kind", "tag", "state", "status", "origin", "placement"})


def _is_id(key: Any) -> bool:
    """An id field (``session_id``, ``id``, ``images``: attachment ids): a short secret is
    never looked for in it, so a secret ``b`` or a PIN cannot turn an id into
    "…[REDACTED]…"; a long one still is (only a hostile server puts one there)."""
    return isinstance(key, str) and (
        key == "id" or key.endswith("_id") or key.endswith("_ids") or key == "images"
    )


def short_secret_problem(what: str, value: str) -> str | None:
    """Why ``value`` is too short to save as a secret (None when it is long enough)."""
    if not value or len(value) >= MIN_SECRET_LENGTH:
        return None
    size = f"{len(value)} character" + ("" if len(value) == 1 else "s")
    return (
        f"{what} is {size} long, shorter than the {MIN_SECRET_LENGTH} characters Vis needs to "
        "redact a secret safely (a shorter one turns up inside ordinary words and ids)"
    )


# Variables named like a key: Vis's providers read ANTHROPIC_API_KEY / OPENAI_API_KEY, MCP
# servers' headers and env take ``${GITHUB_TOKEN}``-like values; all are secrets to redact.
_KEY_NAME = re.compile(r"(?:^|_)(?:API_?KEY|ACCESS_KEY|SECRET(?:_KEY)?|TOKEN|PASSWORD|PASSWD)$")


def key_name(name: str) -> bool:
    """Whether an environment variable named ``name`` holds a key (``GITHUB_TOKEN``...)."""
    return bool(_KEY_NAME.search(name.upper()))


def environment_secrets(environ: Mapping[str, str], names: Iterable[str] = ()) -> list[str]:
    """The values of the keys Vis reads from the environment: the variables ``names`` (each
    provider's ``api_key_env``) and every variable named like a key (``*_API_KEY``,
    ``*_TOKEN``, ``*_SECRET``, ``*_PASSWORD``...), when long enough to redact safely."""
    wanted = set(names)
    found = (value.strip() for name, value in environ.items() if name in wanted or key_name(name))
    return [value for value in found if len(value) >= MIN_SECRET_LENGTH]


class Redactor:
    """Replaces every saved secret value; ``secrets`` is re-read through ``source`` on demand."""

    def __init__(self, source: Callable[[], Iterable[str]]) -> None:
        self._source = source
        self._secrets: tuple[str, ...] = ()
        self.refresh()

    def refresh(self) -> None:
        """Re-read the saved secrets (after a secret is saved or reset)."""
        values = {value for value in self._source() if value} | _remembered
        long = {value for value in values if len(value) >= MIN_SECRET_LENGTH}
        # Longest first, so a secret containing another is replaced whole.
        self._secrets = tuple(sorted(long, key=len, reverse=True))
        # a short one only where it stands alone: not inside a word, a number or an id
        short = sorted(values - long, key=len, reverse=True)
        self._short = (
            re.compile(r"(?<!\w)(?:" + "|".join(map(re.escape, short)) + r")(?!\w)")
            if short
            else None
        )
        # each secret as the event log's JSON writes it inside a string (quotes, backslashes
        # and control characters escaped): an event whose text holds none of them has none
        self._in_json = tuple({form for v in values for form in (v, _json_string(v))})

    @property
    def active(self) -> bool:
        return bool(self._secrets) or self._short is not None

    def text(self, text: str) -> str:
        text = self._long(text)
        if self._short is not None:
            text = self._short.sub(REDACTED, text)
        return text

    def _long(self, text: str) -> str:
        for secret in self._secrets:
            if secret in text:
                text = text.replace(secret, REDACTED)
        return text

    def _ids(self, value: Any) -> Any:
        if isinstance(value, str):
            return self._long(value)
        if isinstance(value, list | tuple):
            return [self._ids(item) for item in value]
        return value

    def in_json(self, payload: str) -> bool:
        """Whether a JSON text may hold a secret (raw, or as JSON escapes it)."""
        return any(form in payload for form in self._in_json)

    def contains(self, text: str) -> bool:
        return any(secret in text for secret in self._secrets) or bool(
            self._short is not None and self._short.search(text)
        )

    def value(self, value: Any) -> Any:
        """``value`` with secrets replaced inside every string; dict keys, type names and
        closed sets (status, state, tag...) kept as they are, ids cleaned of long secrets
        only."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {
                key: item if key in _KEEP else self._ids(item) if _is_id(key) else self.value(item)
                for key, item in value.items()
            }
        if isinstance(value, list | tuple):
            return [self.value(item) for item in value]
        return value

    def event(
        self, event: Event, data: dict[str, Any], payload: str
    ) -> tuple[Event, dict[str, Any], str]:
        """The store's append hook: the event as it may be written."""
        if not any(form in payload for form in self._in_json):
            return event, data, payload  # no secret in it (most events): nothing to walk
        cleaned = self.value(data)
        if cleaned == data:  # compared as values: a secret JSON escapes is found too
            return event, data, payload
        from vis_core.events import event_from_dict, event_payload  # the store has them loaded

        redacted = event_from_dict(cleaned)
        data, payload = event_payload(redacted)
        return redacted, data, payload


def _json_string(text: str) -> str:
    """``text`` as the event log's JSON encoder writes it between quotes."""
    import orjson  # not before the welcome header (vis_core.welcome reads the settings)

    return orjson.dumps(text).decode()[1:-1]


_active: list[Redactor] = []
_remembered: set[str] = set()


def activate(redactor: Redactor) -> None:
    """Make ``redactor`` the one :func:`redact_text` uses (the running Vis's settings)."""
    _active.append(redactor)


def deactivate(redactor: Redactor) -> None:
    if redactor in _active:
        _active.remove(redactor)


def remember_secrets(values: Iterable[str]) -> None:
    """Redact ``values`` from now on too: keys Vis expanded at run time (an MCP server's
    ``${TOKEN}`` header). Kept for the life of the process, in every redactor."""
    new = {v for v in values if len(v) >= MIN_SECRET_LENGTH} - _remembered
    if new:
        _remembered.update(new)
        for redactor in _active:
            redactor.refresh()


def redact_text(text: str) -> str:
    """``text`` with the running Vis's saved secrets replaced (saved outputs, printed lines)."""
    return _active[-1].text(text) if _active else text


class RedactingFilter(logging.Filter):
    """A handler filter that writes ``[REDACTED]`` over secrets in each formatted record."""

    def __init__(self, redactor: Redactor) -> None:
        super().__init__()
        self.redactor = redactor

    def filter(self, record: logging.LogRecord) -> bool:
        if not self.redactor.active:
            return True
        message = record.getMessage()
        if self.redactor.contains(message):
            record.msg, record.args = self.redactor.text(message), None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = self.redactor.text(record.exc_text)
        if record.stack_info:
            record.stack_info = self.redactor.text(record.stack_info)
        return True
