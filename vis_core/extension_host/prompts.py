"""Extension contributions to a model request: prompt text and activation (run in the worker)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from vis_core.extension.context import CallContext
from vis_core.extension.declarations import Extension
from vis_core.extension_host.loaded import LoadedExtension, LoadedExtensions
from vis_core.extension_host.session_workers import SessionWorkers
from vis_core.extension_host.worker_client import CallbackCall
from vis_core.ipc.kinds import CallbackKind

log = logging.getLogger(__name__)


async def answers(
    kind: CallbackKind,
    asked: Sequence[LoadedExtension],
    env: Mapping[str, Any],
    worker: SessionWorkers,
    context_for: Callable[[str], CallContext] | None,
    failed: str,
    logger: logging.Logger = log,
) -> dict[str, Any]:
    """What the ``kind`` callback of each of ``asked`` answered ``env``, by extension name,
    all run at once (in ``worker``); one that raises, hangs or is not loaded is left out,
    logged as ``failed`` says with its name and error."""
    calls = [CallbackCall(ext.name, args=(dict(env),)) for ext in asked]
    outcomes = await worker.callbacks(kind, calls, context_for=context_for)
    said: dict[str, Any] = {}
    for ext, outcome in zip(asked, outcomes, strict=True):
        if outcome.ok:
            said[ext.name] = outcome.value
        else:
            error = outcome.error
            logger.warning(
                failed, ext.name, "" if error is None else f"{type(error).__name__}: {error}"
            )
    return said


async def active_among(
    extensions: Sequence[LoadedExtension],
    env: Mapping[str, Any],
    worker: SessionWorkers,
    context_for: Callable[[str], CallContext] | None = None,
) -> list[LoadedExtension]:
    """Those of ``extensions`` whose ``activation(env)`` says yes (run in ``worker`` at once);
    one that raises, hangs or is not loaded counts as no, with a log line."""
    loaded = [ext for ext in extensions if ext.enabled and ext.declaration is not None]
    asked = [ext for ext in loaded if _declared(ext).activation is not None]
    failed = "activation of extension %r failed; it is hidden this turn: %s"
    said = await answers(CallbackKind.ACTIVATION, asked, env, worker, context_for, failed)
    return [ext for ext in loaded if ext not in asked or bool(said.get(ext.name))]


def _declared(ext: LoadedExtension) -> Extension:
    declaration = ext.declaration
    assert declaration is not None
    return declaration


async def _prompt_texts(
    extensions: Sequence[LoadedExtension],
    env: Mapping[str, Any],
    worker: SessionWorkers,
    context_for: Callable[[str], CallContext] | None,
) -> dict[str, str | None]:
    """Each extension's prompt text by name: text as declared, callbacks run at once."""
    texts: dict[str, str | None] = {}
    called: list[LoadedExtension] = []
    for ext in extensions:
        prompt = _declared(ext).prompt
        if prompt is None or isinstance(prompt, str):
            texts[ext.name] = prompt
        else:
            called.append(ext)
    failed = "prompt callback of extension %r failed; its prompt is left out: %s"
    said = await answers(CallbackKind.PROMPT, called, env, worker, context_for, failed)
    for ext in called:
        text = said.get(ext.name)
        if text is not None and not isinstance(text, str):
            log.error(
                "prompt callback of extension %r returned %s, not text",
                ext.name,
                type(text).__name__,
            )
            text = None
        texts[ext.name] = text
    return texts


def tool_roots(ext: LoadedExtension) -> list[str]:
    """The names an extension's public tools take, a namespace as ``greet.*``."""
    roots: dict[str, None] = {}
    for tool in ext.tools:
        if tool.is_hidden:
            continue
        root, dotted, _ = tool.name.partition(".")
        roots[f"{root}.*" if dotted else root] = None
    return list(roots)


async def extension_prompts(
    loaded: LoadedExtensions,
    env: Mapping[str, Any],
    worker: SessionWorkers,
    active: list[LoadedExtension] | None = None,
    context_for: Callable[[str], CallContext] | None = None,
) -> str:
    """The system prompt part for every active extension: name, tools, description, prompt.

    ``active``: the turn's active extensions (:func:`active_among` the enabled ones) when the
    caller has them already;
    ``worker`` is the session's extension worker, where prompt callbacks run.
    """
    parts: list[str] = []
    if active is None:
        active = await active_among(loaded.enabled, env, worker, context_for)
    texts = await _prompt_texts(active, env, worker, context_for)
    for ext in active:
        declaration = ext.declaration
        assert declaration is not None
        heading = f"### {declaration.name}"
        roots = tool_roots(ext)
        if roots:
            heading += f" (tools: {', '.join(roots)})"
        lines = [heading, declaration.description.strip()]
        text = texts.get(ext.name)
        if text and text.strip():
            lines.append(text.strip())
        parts.append("\n".join(lines))
    return "\n\n".join(parts)
