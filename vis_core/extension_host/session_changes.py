"""``Session.fork``, ``Session.set_model``, ``Session.publish`` and ``vis.sessions.models()``
(the changes served on the host's loop)."""

from __future__ import annotations

import asyncio
import json
from concurrent.futures import Future
from functools import partial
from typing import TYPE_CHECKING, Any

from vis_core.extension_host.gateway import (
    GatewayCode,
    GatewayError,
    require_change,
    shown_change,
)
from vis_core.model.notify import NotifyKind
from vis_core.model.turn import TurnStatus
from vis_core.store.session_data import FORK_POINT_STATE, ORIGIN_STATE
from vis_core.tools.display import plural

if TYPE_CHECKING:
    from vis_core.extension.context import CallContext
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
    from vis_core.events import SessionCreated, TurnEnded, TurnStarted
    from vis_core.extension_host.sessions_api import _renamed

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
    store.append_many(_renamed(copied, row.id))
    # its settings too: a jail turned on for that session alone stays on in the fork
    store.copy_session_overrides(bounds.id, row.id)
    store.copy_file_versions(source.id, row.id)  # the copied reads name them
    store.state_set(FORK_POINT_STATE, row.id, {"turn_id": last.id, "position": last.position})
    fresh = store.get_session(row.id)
    assert fresh is not None
    return fresh


async def fork(handle: Any, turn: int | str | None = None) -> Any:
    """See :meth:`Session.fork`."""
    what = "Session.fork()"
    call, host = check_change(handle, what)
    async with shown_change(call, "Session.fork", "Forked session") as shown:
        row = await asyncio.wrap_future(fork_stored(host.store, handle.id, turn, what))
        host.store.state_set(ORIGIN_STATE, row.id, call.owner)
        shown.summary = f"{handle.id[:8]} → {row.id[:8]} · {plural(row.turn_count, 'turn')}"
    from vis_core.extension_host.sessions_api import Session

    return Session(host, row.id, call.owner)


async def set_model(handle: Any, model: str) -> None:
    """See :meth:`Session.set_model`."""
    from vis_core.providers.base import ModelChoice

    what = "Session.set_model()"
    if not isinstance(model, str):
        raise TypeError(f"{what}: model must be text like 'anthropic/claude-sonnet-4-6'")
    choice = ModelChoice.parse(model.strip())
    call, host = check_change(handle, what)
    async with shown_change(call, "Session.set_model", "Changed model") as shown:
        chosen = host.session_model(choice, session_id=handle.id)
        if chosen.provider is None:
            raise ValueError(f"{what}: cannot use {chosen.label}: {chosen.problem}")
        await host.save_model(handle.id, chosen.label)
        agent = host.live_session(handle.id)
        if agent is not None:
            await agent.switch_model(chosen)
        shown.summary = f"{handle.id[:8]} · {chosen.label}"


async def publish(handle: Any, text: str, kind: str = "info") -> None:
    """See :meth:`Session.publish`."""
    from vis_core.events import Notification

    what = "Session.publish()"
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"{what}: the text must be nonblank")
    try:
        notify_kind = NotifyKind(kind)
    except ValueError:
        kinds = ", ".join(k.value for k in NotifyKind)
        raise ValueError(f"{what}: kind must be one of {kinds}, not {kind!r}") from None
    call, host = check_change(handle, what)
    event = Notification(handle.id, text=text, kind=notify_kind)
    async with shown_change(call, "Session.publish", "Published to session") as shown:
        agent = host.live_session(handle.id)
        if agent is not None:
            await agent.emit(event)  # saved, then shown where the session is open
        else:
            host.store.append(event)
        shown.summary = f"{handle.id[:8]} · {text}"


def models(host: HostPort) -> list[dict[str, Any]]:
    """See :meth:`Sessions.models`."""
    from vis_core.extension.context import current_call
    from vis_core.extension.place import require_trusted
    from vis_core.providers.limits import soft_budget
    from vis_core.providers.models import KNOWN_MODELS, lookup_model

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
        from vis_core.providers.models import is_known_model

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
