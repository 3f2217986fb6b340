"""Extension contributions to a model request: prompt text, activation and session context."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from vis_core.extension_host.loaded import LoadedExtension, LoadedExtensions

log = logging.getLogger(__name__)
RESERVED_PREFIXES = ("engine_", "session_")
CONTEXT_ENV_KEY = "session_env"


def is_active(ext: LoadedExtension, env: Mapping[str, Any]) -> bool:
    """Whether ``ext`` takes part in this turn (``activation(env)``, errors count as no)."""
    declaration = ext.declaration
    if not ext.enabled or declaration is None:
        return False
    if declaration.activation is None:
        return True
    try:
        return bool(ext.call(declaration.activation, dict(env)))
    except Exception:
        log.exception("activation of extension %r failed; it is hidden this turn", ext.name)
        return False


def active_extensions(loaded: LoadedExtensions, env: Mapping[str, Any]) -> list[LoadedExtension]:
    return [ext for ext in loaded.enabled if is_active(ext, env)]


def _prompt_text(ext: LoadedExtension, env: Mapping[str, Any]) -> str | None:
    declaration = ext.declaration
    assert declaration is not None
    prompt = declaration.prompt
    if prompt is None or isinstance(prompt, str):
        return prompt
    try:
        text = ext.call(prompt, dict(env))
    except Exception:
        log.exception("prompt callback of extension %r failed; its prompt is skipped", ext.name)
        return None
    if text is not None and not isinstance(text, str):
        log.error(
            "prompt callback of extension %r returned %s, not text", ext.name, type(text).__name__
        )
        return None
    return text


def tool_roots(ext: LoadedExtension) -> list[str]:
    """The names an extension's public tools take, a namespace as ``greet.*``."""
    roots: dict[str, None] = {}
    for tool in ext.tools:
        if tool.is_hidden:
            continue
        root, dotted, _ = tool.name.partition(".")
        roots[f"{root}.*" if dotted else root] = None
    return list(roots)


def extension_prompts(
    loaded: LoadedExtensions,
    env: Mapping[str, Any],
    active: list[LoadedExtension] | None = None,
) -> str:
    """The system prompt part for every active extension: name, tools, description, prompt.

    ``active`` is the turn's :func:`active_extensions` when the caller has it already.
    """
    parts: list[str] = []
    for ext in active_extensions(loaded, env) if active is None else active:
        declaration = ext.declaration
        assert declaration is not None
        heading = f"### {declaration.name}"
        roots = tool_roots(ext)
        if roots:
            heading += f" (tools: {', '.join(roots)})"
        lines = [heading, declaration.description.strip()]
        text = _prompt_text(ext, env)
        if text and text.strip():
            lines.append(text.strip())
        parts.append("\n".join(lines))
    return "\n\n".join(parts)


def _merge(into: dict[str, Any], extra: Mapping[str, Any]) -> None:
    for key, value in extra.items():
        if isinstance(value, Mapping) and isinstance(into.get(key), dict):
            _merge(into[key], value)
        elif isinstance(value, Mapping):
            into[key] = {}
            _merge(into[key], value)
        else:
            into[key] = value


def extension_context(loaded: LoadedExtensions, env: Mapping[str, Any]) -> dict[str, Any]:
    """Every active extension's ``ctx(env)`` deep-merged; ``session_env`` goes under ``env``.

    A non-dict return or an exception adds nothing; other ``engine_``/``session_`` keys are
    reserved and dropped.
    """
    merged: dict[str, Any] = {}
    for ext in active_extensions(loaded, env):
        declaration = ext.declaration
        assert declaration is not None
        if declaration.ctx is None:
            continue
        try:
            extra = ext.call(declaration.ctx, dict(env))
        except Exception:
            log.exception("ctx callback of extension %r failed; it adds no context", ext.name)
            continue
        if not isinstance(extra, dict) or not all(isinstance(k, str) for k in extra):
            log.error("ctx callback of extension %r must return a string-keyed dict", ext.name)
            continue
        cleaned: dict[str, Any] = {}
        for key, value in extra.items():
            if key == CONTEXT_ENV_KEY:
                if isinstance(value, Mapping):
                    cleaned["env"] = value
                continue
            if key.startswith(RESERVED_PREFIXES):
                log.error("ctx key %r of extension %r is reserved; it is dropped", key, ext.name)
                continue
            cleaned[key] = value
        _merge(merged, cleaned)
    return merged
