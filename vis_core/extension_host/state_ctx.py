"""A state-only ``ctx`` (``Extension.ctx_state_key``): answered without the extension's worker.

Such a ``ctx`` computes its answer from one key of its extension's ``vis.state`` alone. The
registration worker runs it once, against an empty ``vis.state`` (:func:`answer_when_empty`),
and reports the answer with the declaration (the bundled extensions' is kept between starts).
A session that finds nothing under the key gives that answer itself
(:func:`answered_without_worker`), so its first turns start no worker process for it; once the
key holds a value, the ``ctx`` runs in the session's worker as any other.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vis_core.extension.context import CallContext, calling
from vis_core.extension.declarations import Extension, callback_env, state_key_of
from vis_core.extension.runtime import RuntimeOverride, current_runtime
from vis_core.extension_host.declared import StateOnlyCtx
from vis_core.model.channel import Channel
from vis_core.model.plain import check_plain

if TYPE_CHECKING:
    from vis_core.extension_host.loaded import LoadedExtension

# ``(extension, key)``: whether that key of the extension's ``vis.state`` holds a value
StateHolds = Callable[[str, str], bool]


class _EmptyState(RuntimeOverride):
    """The runtime of the running process with an empty ``vis.state`` that takes no writes: a
    state-only ``ctx`` only reads."""

    def state_read(self, owner: str | None, key: str) -> tuple[bool, Any]:
        return False, None

    def state_keys(self, owner: str | None) -> list[str]:
        return []

    def state_items(self, owner: str | None) -> dict[str, Any]:
        return {}

    def _refuse(self) -> Any:
        raise RuntimeError("a ctx declared with ctx_state_key reads vis.state; it cannot change it")

    def state_write(self, owner: str | None, key: str, value: Any) -> None:
        self._refuse()

    def state_delete(self, owner: str | None, key: str) -> bool:
        return self._refuse()

    def state_clear(self, owner: str | None) -> None:
        self._refuse()


def answer_when_empty(extension: Extension) -> dict[str, Any] | None:
    """What ``extension``'s state-only ``ctx`` answers against an empty ``vis.state``, or
    ``None`` (it has none, it failed, or its answer is not plain data): then it runs in the
    worker at every block, as a ``ctx`` without the declaration, and says so there.

    Runs in the registration worker, as the extension and with no session."""
    ctx = extension.ctx
    if ctx is None or extension.ctx_state_key is None:
        return None
    here = Path(os.getcwd())
    env = callback_env(workspace_root=here, project_root=here, session_id=None, channel=Channel.CLI)
    context = CallContext(
        session_id=None,
        workspace_root=here,
        project_root=here,
        owner=extension.name,
        channel=Channel.CLI,
        runtime=_EmptyState(current_runtime()),
    )
    try:
        with calling(context):
            answer = ctx(env)
        if not isinstance(answer, dict):
            return None
        check_plain(answer, f"the ctx of extension {extension.name!r}")
    except (Exception, SystemExit):  # the worker runs it again, and logs what it raises
        return None
    return answer


def answered_without_worker(
    ext: LoadedExtension, session_id: str | None, state_holds: StateHolds
) -> dict[str, Any] | None:
    """``ext``'s ``ctx`` answer in session ``session_id`` when it is known without running it
    (a state-only ``ctx`` whose key holds nothing in this session), else ``None``.

    An extension with an ``activation`` callback is not answered here: whether it is active
    is asked in its worker."""
    declaration = ext.declaration
    if declaration is None or session_id is None or declaration.activation is not None:
        return None
    ctx = declaration.ctx
    key = state_key_of(declaration, session_id)
    if not isinstance(ctx, StateOnlyCtx) or key is None or state_holds(ext.name, key):
        return None
    return copy.deepcopy(ctx.when_empty)
