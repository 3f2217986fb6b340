"""What ``Session``'s changes share (the rule of a change, a stored session's fork and its
events renamed) and ``vis.sessions.models()``."""

from __future__ import annotations

import json
import uuid
from concurrent.futures import Future
from functools import partial
from typing import TYPE_CHECKING, Any

from vis_core.events import Event, SessionCreated, TurnEnded, TurnStarted, event_from_dict
from vis_core.extension.context import CallContext, current_call
from vis_core.extension.place import require_trusted
from vis_core.extension_host.gateway import GatewayCode, GatewayError, require_change
from vis_core.model.turn import TurnStatus
from vis_core.providers.limits import soft_budget
from vis_core.providers.models import KNOWN_MODELS, is_known_model, lookup_model
from vis_core.store.session_data import FORK_POINT_STATE

if TYPE_CHECKING:
    from vis_core.extension_host.host_port import HostPort
    from vis_core.model.sessions import SessionRow, TurnRow
    from vis_core.store import Store


def check_change(handle: Any, what: str) -> tuple[CallContext, HostPort]:
    """The bound call, and the Vis whose extension holds ``handle``, for a change of its
    session: only in an active callback of a session, and only that session or one the
    calling extension created."""
    call = require_change(what)
    if handle.id != call.session_id and handle.origin != call.owner:
        raise GatewayError(
            GatewayCode.FORBIDDEN_SESSION,
            f"session {handle.id} belongs to another extension or to a person; {what} can "
            "change only the bound session and sessions that your extension created",
        )
    return call, handle._home


def _fork_turn(turns: list[TurnRow], turn: int | str | None, what: str) -> TurnRow:
    """The last turn a fork copies: a position, a turn id, or the latest settled turn."""
    if not turns:
        raise ValueError(f"{what}: the session has no turn yet; there is nothing to fork")
    if turn is None:
        settled = [t for t in turns if t.status != TurnStatus.RUNNING]
        if not settled:
            raise ValueError(f"{what}: the session's only turn is still running; fork after it")
        return settled[-1]
    if isinstance(turn, bool) or not isinstance(turn, int | str):
        raise TypeError(f"{what}: turn must be a position (int) or a turn id, not {turn!r}")
    found = next((t for t in turns if t.position == turn or t.id == turn), None)
    if found is None:
        raise ValueError(
            f"{what}: the session has no turn {turn!r}; its turns are 1-{turns[-1].position}"
        )
    if found.status == TurnStatus.RUNNING:
        raise ValueError(f"{what}: turn {found.position} is still running; fork after it")
    return found


def fork_stored(
    store: Store,
    source_id: str,
    turn: int | str | None,
    what: str,
    settings_of: str | None = None,
) -> Future[SessionRow]:
    """A new session holding ``source_id``'s events as it stood after ``turn``: up to the
    next turn's start, so what came between (a ``/compact``'s fold, a draft left, a command's
    note) is the fork's too. Fresh ids; the workspace, group and session settings of
    ``settings_of`` (default: the session it copies; a consulted session's fork takes those
    of the session that asks, and runs where it does, even when it copies another project's
    session); ``forked_from`` recorded and the fork point kept for ``read_session``. Read and
    written by the store's writer, after what was queued before: the future of the new row,
    or of the ``LookupError`` or ``ValueError`` that says why there is no fork."""
    return store.writer.call(partial(_fork, store, source_id, turn, what, settings_of))


def _fork(
    store: Store, source_id: str, turn: int | str | None, what: str, settings_of: str | None
) -> SessionRow:
    source = store.get_session(source_id)
    if source is None:
        raise LookupError(f"{what}: there is no session {source_id!r}")
    last = _fork_turn(store.turns(source.id), turn, what)
    copied: list[dict[str, Any]] = []
    ended = False
    for stored in store.events(source.id):
        if ended and stored.type == TurnStarted.type:
            break  # the next turn (maybe running): what follows it is not the fork's
        copied.append(json.loads(stored.data))
        ended = ended or (stored.type == TurnEnded.type and copied[-1].get("turn_id") == last.id)
    title = f"{source.title} (fork)" if source.title else "fork"
    bounds = source if settings_of is None else store.get_session(settings_of)
    if bounds is None:
        raise LookupError(f"{what}: there is no session {settings_of!r}")
    row = store.create_session(
        bounds.workspace,
        bounds.project_root,
        title=title,
        group=bounds.group,
        forked_from=source.id,
    )
    store.append(SessionCreated(row.id, title=title, workspace=bounds.workspace, group=row.group))
    store.append_many(renamed(copied, row.id))
    # its settings too: a jail turned on for that session alone stays on in the fork
    store.copy_session_overrides(bounds.id, row.id)
    store.copy_file_versions(source.id, row.id)  # the copied reads name them
    store.state_set(FORK_POINT_STATE, row.id, {"turn_id": last.id, "position": last.position})
    fresh = store.get_session(row.id)
    assert fresh is not None
    return fresh


def renamed(events: list[dict[str, Any]], session_id: str) -> list[Event]:
    """The snapshot's events for a new session: every turn, iteration, fold and activity id
    renewed."""
    fresh: dict[str, str] = {}

    def renew(value: Any) -> Any:
        if not isinstance(value, str) or not value:
            return value
        if value not in fresh:
            fresh[value] = (
                f"call_{uuid.uuid4().hex[:24]}" if value.startswith("call_") else uuid.uuid4().hex
            )
        return fresh[value]

    out: list[Event] = []
    for raw in events:
        if raw.get("type") == SessionCreated.__name__:
            continue
        item = dict(raw)
        item["session_id"] = session_id
        for name in ("turn_id", "iteration_id", "fold_id"):
            if name in item:
                item[name] = renew(item[name])
        activity = item.get("activity")
        if isinstance(activity, dict):
            activity = dict(activity, session_id=session_id, id=renew(activity.get("id")))
            for name in ("turn_id", "iteration_id"):
                activity[name] = renew(activity.get(name))
            item["activity"] = activity
        out.append(event_from_dict(item))
    return out


def models(host: HostPort) -> list[dict[str, Any]]:
    """See :meth:`Sessions.models`."""
    require_trusted("vis.sessions.models()")
    call = current_call()
    current = None
    if call is not None and call.session_id is not None:
        agent = host.live_session(call.session_id)
        current = agent.model.label if agent is not None else None
    ids = [
        f"{'anthropic' if name.startswith('claude') else 'openai'}/{name}" for name in KNOWN_MODELS
    ]
    configured = host.config_data().get("models")
    if isinstance(configured, dict):
        ids += [str(key) for key in configured if "/" in str(key)]
    if current and current not in ids:
        ids.append(current)
    rows = []
    for model_id in dict.fromkeys(ids):
        provider, _, name = model_id.partition("/")
        overrides = configured.get(model_id) if isinstance(configured, dict) else None
        try:
            info = lookup_model(name, overrides if isinstance(overrides, dict) else None)
        except ValueError:
            continue  # a bad [models] table: doctor and the provider explain it
        known = is_known_model(name) or bool((overrides or {}).get("input_limit"))
        limit = info.input_limit if known else None
        rows.append(
            {
                "id": model_id,
                "provider": provider,
                "model": name,
                "input_limit": limit,
                "auto_compress_above": soft_budget(name, limit),
                "input_price": info.input_price,
                "output_price": info.output_price,
                "cache_read_price": info.cache_read_price,
                "cache_write_price": info.cache_write_price,
                "current": model_id == current,
            }
        )
    return rows
