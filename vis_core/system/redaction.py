"""``[REDACTED]`` in place of saved secret values: in saved outputs, log lines, stored events
(the store's hook is :class:`vis_core.settings.redact.Redactor`); ``***`` in place of the
credentials a URL carries."""

from __future__ import annotations

import json
import logging
import os
import re
import threading
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from vis_core.config import file_stamp, not_utf8
from vis_core.paths import VisPaths

REDACTED = "[REDACTED]"
# A secret shorter than this cannot be redacted safely inside other text (a one-letter secret
# is in almost every word, a 4-digit PIN in about 1 id of 2,000): Vis refuses to save one, and
# one saved before is redacted only where it stands alone (never inside a word or an id).
MIN_SECRET_LENGTH = 8
# Fields that name a class or a closed set (validated values, never a secret): kept.
_KEEP = frozenset({"type", "kind", "tag", "state", "status", "origin", "placement"})


# The credentials a URL can carry: its user and password, and query parameters named like a
# key ("?key=", "&api_key=", "access_token=", "sig=").
_USERINFO = re.compile(r"\b([a-z][a-z0-9+.-]*://)[^\s/?#@]+@", re.IGNORECASE)
_KEY_PARAMETER = re.compile(
    r"([?&][^=&\s#]*(?:key|token|secret|pass|pwd|auth|sig|credential)[^=&\s#]*=)[^&\s#\"'<>]+",
    re.IGNORECASE,
)


def hide_credentials(text: str) -> str:
    """``text`` with the credentials of every URL in it masked (``http://***@host/v1?key=***``):
    what Vis prints, stores or logs of a URL never holds a password or key (a provider's
    ``base_url``, an MCP server's ``url``), though none is a saved secret."""
    return _KEY_PARAMETER.sub(r"\1***", _USERINFO.sub(r"\1***@", text))


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
        self._all = (*self._secrets, *short)
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

    def secret_start(self, text: str) -> int:
        """How many characters at the end of ``text`` could be the start of a secret (or a
        whole short one, which a word character after it would keep): streamed text holds
        them back, so no secret is ever split across two pieces redacted apart."""
        for size in range(min(len(text), max(map(len, self._all), default=0)), 0, -1):
            tail = text[-size:]
            if any(secret.startswith(tail) for secret in self._all):
                return size
        return 0

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
        for redactor in (*_active, _saved.current()):
            redactor.refresh()


def redact_text(text: str) -> str:
    """``text`` with the running Vis's saved secrets replaced (saved outputs, printed lines)."""
    return _active[-1].text(text) if _active else text


def secret_start(text: str) -> int:
    """:meth:`Redactor.secret_start` of the running Vis's redactor (0 without one)."""
    return _active[-1].secret_start(text) if _active else 0


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


def read_secrets(path: Path) -> dict[str, str]:
    """The saved secrets (JSON, mode 0600): none when the file is absent. Raises
    :class:`ValueError` when it cannot be read."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise ValueError(f"cannot read the secrets file {path}: {exc}") from None
    except UnicodeDecodeError as exc:
        raise ValueError(not_utf8(path, exc)) from None
    try:
        data = json.loads(text) if text.strip() else {}
    except (ValueError, RecursionError):
        raise ValueError(
            f"the secrets file {path} is not valid JSON; save the secrets again"
        ) from None
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}


class _SavedSecrets:
    """The secrets saved on this computer, re-read when the secrets file changes.

    Covers log lines written before a Host attaches its redactor (extensions loading, code
    outside Vis) and secrets another process (``vis settings set``) saved meanwhile."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._key: tuple[object, ...] | None = None
        self._redactor = Redactor(tuple)

    def current(self) -> Redactor:
        """The redactor made last (:func:`remember_secrets` adds its keys to it)."""
        with self._lock:
            return self._redactor

    def redactor(self, path: Path) -> Redactor:
        stamp = file_stamp(path)
        key = (path, stamp)
        with self._lock:
            if key != self._key:
                try:
                    values = tuple(read_secrets(path).values()) if stamp is not None else ()
                except ValueError:  # unreadable: the Host reports it; redact what it knows
                    values = ()
                values += tuple(environment_secrets(os.environ))  # keys named like keys
                self._redactor, self._key = Redactor(lambda: values), key
            return self._redactor


_saved = _SavedSecrets()
# the log file's filter, while a Host has one attached (vis_core.settings.logfile)
log_filter: RedactingFilter | None = None


def log_redactors() -> list[Redactor]:
    """The redactors :func:`redact_log_text` applies, taken once (for many texts in a row)."""
    active = log_filter
    saved = _saved.redactor(VisPaths.from_env().secrets_file)
    return [active.redactor, saved] if active is not None else [saved]


def redact_log_text(text: str) -> str:
    """``text`` as it may be written to the log folder: every saved secret as ``[REDACTED]``
    (the attached Host's secrets, and those in Vis's secrets file)."""
    for redactor in log_redactors():
        text = redactor.text(text)
    return text
