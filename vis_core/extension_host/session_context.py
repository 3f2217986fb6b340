"""The model's ``session`` dict: core fields plus every extension's ``ctx`` deep-merged."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from vis_core.extension.context import CallContext
from vis_core.extension_host.prompts import active_among, answers
from vis_core.extension_host.state_ctx import StateHolds, answered_without_worker
from vis_core.ipc.kinds import CallbackKind

if TYPE_CHECKING:
    from vis_core.extension_host.loaded import LoadedExtensions
    from vis_core.extension_host.session_workers import SessionWorkers

log = logging.getLogger(__name__)

# Fields Vis fills itself; extensions cannot set them (``session_env`` nests under ``env``).
CORE_KEYS = frozenset(
    {
        "id",
        "title",
        "turn",
        "iteration",
        "workspace_root",
        "project_root",
        "cwd",
        "channel",
        "model",
        "utilization",
        "request_health",
        "goal",
        "env",
    }
)
RESERVED_PREFIXES = ("engine_", "session_")
SESSION_ENV_KEY = "session_env"
_reported: set[tuple[str, str]] = set()  # each refusal is logged once per process


def _refuse(extension: str, key: str, message: str) -> None:
    if (extension, key) not in _reported:
        _reported.add((extension, key))
        log.error("ctx of extension %r: %s", extension, message)


def deep_merge(into: dict[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    """Merge ``extra`` into ``into``: dicts merge key by key, anything else replaces."""
    for key, value in extra.items():
        if isinstance(value, Mapping):
            target = into.get(key)
            if not isinstance(target, dict):
                target = into[key] = {}
            deep_merge(target, value)
        else:
            into[key] = value
    return into


def clean_contribution(extension: str, value: object) -> dict[str, Any] | None:
    """What one ``ctx`` result adds; ``None`` (nothing) for a non-dict or non-string keys.

    Core fields and ``engine_``/``session_`` keys are refused (logged) and the rest is kept;
    ``session_env`` must be a dict and goes under ``env``.
    """
    if not isinstance(value, dict):
        log.error(
            "ctx of extension %r returned %s, not a dict; it adds no context",
            extension,
            type(value).__name__,
        )
        return None
    if not all(isinstance(key, str) for key in value):
        log.error("ctx of extension %r returned non-string keys; it adds no context", extension)
        return None
    cleaned: dict[str, Any] = {}
    for key, item in value.items():
        if key == SESSION_ENV_KEY:
            if isinstance(item, Mapping) and all(isinstance(k, str) for k in item):
                cleaned["env"] = dict(item)
            else:
                _refuse(extension, key, "session_env must be a string-keyed dict; it is refused")
            continue
        if key in CORE_KEYS or key.startswith(RESERVED_PREFIXES):
            _refuse(extension, key, f"key {key!r} is reserved for Vis; it is refused")
            continue
        cleaned[key] = item
    from vis_core.store.extras import to_json

    try:
        to_json(cleaned, f"the ctx of extension {extension!r}")
    except ValueError as exc:
        log.error("%s; it adds no context", exc)
        return None
    return cleaned


async def collect_context(
    loaded: LoadedExtensions | None,
    env: Mapping[str, Any],
    worker: SessionWorkers,
    context_for: Callable[[str], CallContext] | None = None,
    state_holds: StateHolds | None = None,
) -> dict[str, Any]:
    """Every active extension's ``ctx(env)`` deep-merged; a failing one adds nothing.

    The activations, then the ctx callbacks, run in ``worker`` (the session's extension
    worker), each batch at once. With ``state_holds`` (what the session's store
    holds), a state-only ``ctx`` whose key holds nothing gives its answer without running."""
    merged: dict[str, Any] = {}
    if loaded is None:
        return merged
    asking = []
    for ext in loaded.enabled:
        if ext.declaration is None or ext.declaration.ctx is None:
            continue
        known = (
            None
            if state_holds is None
            else answered_without_worker(ext, env.get("session_id"), state_holds)
        )
        if known is None:
            asking.append(ext)
            continue
        cleaned = clean_contribution(ext.name, known)
        if cleaned:
            deep_merge(merged, cleaned)
    if not asking:
        return merged
    active = await active_among(asking, env, worker, context_for)
    failed = "ctx of extension %r failed; it adds no context: %s"
    said = await answers(CallbackKind.CTX, active, env, worker, context_for, failed, log)
    for ext in active:
        if ext.name in said:
            cleaned = clean_contribution(ext.name, said[ext.name])
            if cleaned:
                deep_merge(merged, cleaned)
    return merged


def session_dict(core: Mapping[str, Any], contributed: Mapping[str, Any]) -> dict[str, Any]:
    """The ``session`` global: ``core`` fields with the merged extension context."""
    result = deep_merge({}, core)
    result.setdefault("env", {})
    deep_merge(result, contributed)
    return result
