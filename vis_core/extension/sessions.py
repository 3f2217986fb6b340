"""``vis.list_sessions``, ``vis.read_session``, ``vis.sessions``, ``vis.session`` and ``vis.run``:
find, read, start and drive sessions through the runtime (trusted extension code only)."""

from __future__ import annotations

import dataclasses
import json
import re
from typing import Any

from vis_core.extension.acting import loading_extension
from vis_core.extension.context import current_call
from vis_core.extension.errors import GatewayCode, GatewayError
from vis_core.extension.place import require_trusted
from vis_core.extension.runtime import current_runtime
from vis_core.extension.unavailable import Speech
from vis_core.model.turn import TurnStatus


def list_sessions(search: str | None = None) -> list[dict[str, Any]]:
    """Every session, newest first; with ``search``, the matches ranked title, request, reply,
    thinking, each with ``rank``, ``is_in_*`` flags and snippets."""
    require_trusted("vis.list_sessions()")
    return current_runtime().list_sessions(search)


def read_session(session_id: str | None = None) -> dict[str, Any]:
    """A session's data: ``session``, ``current_turn``, ``failures``, ``diagnosis``,
    ``session_forks``, ``turn_retries``, ``usage`` and ``transcript`` (turns with iterations).

    ``session_id`` is a bare id, an unambiguous prefix or the ``vis_session_id#<uuid>`` marker;
    without it, the session that runs your extension.
    """
    require_trusted("vis.read_session()")
    return current_runtime().read_session(session_id)


CHANGES = frozenset({"create", "restore"})  # the calls of vis.sessions that change something


class Sessions:
    """``vis.sessions``: ``create``, ``get``, ``list``, ``models``, ``export`` and ``restore``
    (see the Sessions API); each runs in the Vis process serving your extension."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        require_trusted("vis.sessions")
        if name in CHANGES and current_call() is None and loading_extension()[0]:
            raise GatewayError(
                GatewayCode.SESSION_NOT_BOUND,
                f"vis.sessions.{name}() changes something, but no session called your extension "
                "(it is loading); make the call in a tool call or a command",
            )
        return getattr(current_runtime().sessions(), name)

    def __repr__(self) -> str:
        return "<vis.sessions>"


class BoundSession:
    """``vis.session``: the ``Session`` of the session that called your extension."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        require_trusted("vis.session")
        return getattr(current_runtime().bound_session(), name)

    def __repr__(self) -> str:
        call = current_call()
        return f"<vis.session {call.session_id if call else 'unbound'}>"


class CouncilHandle:
    """``vis.council``: the Council handle of the session that called your extension:
    ``run_session(request, model=None, read_only=True, timeout=None)`` runs a turn in a new
    child session of it and returns the answer; ``consult(session, question, timeout=None)``
    asks a stored session in a read-only fork of it (``session_id``, ``title``, ``answer``,
    ``fork_id``). Each child shows under your tool's Activity and costs the session's model
    tokens. Without a bound session, RuntimeError."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        require_trusted("vis.council")
        return getattr(current_runtime().council(), name)

    def __repr__(self) -> str:
        return "<vis.council>"


def run(
    request: str, *, timeout: float | None = None, response_model: Any = None, **options: Any
) -> Any:
    """Create an independent session and run one turn: its dict, or ``response_model`` parsed
    from the reply (JSON) when given."""
    require_trusted("vis.run()")
    turn = sessions.create(**options).run(request, timeout=timeout)
    if response_model is None:
        return turn
    if turn["status"] != TurnStatus.COMPLETED:
        raise RuntimeError(
            f"vis.run(): the turn ended {turn['status']} ({turn['error']}), so there is no "
            f"{getattr(response_model, '__name__', 'response')} to read"
        )
    return _parse(response_model, turn["content"])


def _parse(model: Any, content: str) -> Any:
    fenced = re.search(r"```(?:json)?\s*(.*?)```", content, re.DOTALL)
    text = (fenced.group(1) if fenced else content).strip()
    validate = getattr(model, "model_validate_json", None)
    if validate is not None:
        return validate(text)
    data = json.loads(text)
    if isinstance(model, type) and dataclasses.is_dataclass(model):
        return model(**data)
    return model(data)


sessions = Sessions()
session = BoundSession()
council = CouncilHandle()
speech = Speech()  # not implemented: every use raises SpeechUnavailable
