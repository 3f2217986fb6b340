"""``list_sessions`` and ``read_session`` for the model, governed by ``introspection``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from vis_core.model.activity import Activity, ActivityPresentation, RenderPhase, SymbolTag
from vis_core.store.session_data import resolve_any, search_rows, session_data
from vis_core.text_limits import one_line
from vis_core.tools.display import plural
from vis_core.tools.registry import HostTool

if TYPE_CHECKING:
    from vis_core.store import Store


def _render(label: str) -> Any:
    def render(
        *, phase: str, args: Any = (), kwargs: Any = None, result: Any = None, error: Any = None
    ) -> ActivityPresentation:
        given = [str(a) for a in (args or ())] + [str(v) for v in (kwargs or {}).values()]
        target = one_line(" ".join(given), 80) or "this session"
        if phase == RenderPhase.FAILURE:
            return ActivityPresentation(label, f"{target}: {one_line(str(error), 160)}")
        if phase == RenderPhase.SUCCESS and isinstance(result, list):
            return ActivityPresentation(label, f"{target} · {plural(len(result), 'session')}")
        if phase == RenderPhase.SUCCESS and isinstance(result, dict):
            turns = len(result.get("transcript", {}).get("turns", []))
            title = result.get("session", {}).get("title") or "untitled"
            return ActivityPresentation(label, f"{one_line(title, 60)} · {plural(turns, 'turn')}")
        return ActivityPresentation(label, target)

    return render


def session_tools(store: Store, own_id: str, workspace: str | None) -> list[HostTool]:
    """The model's session tools in session ``own_id``: the sessions of ``workspace`` only
    (``None``: of every workspace, the setting ``sessions_scope = "all"``)."""

    def list_sessions(search: str | None = None) -> list[dict[str, Any]]:
        """This workspace's stored sessions, newest first: `id`, `title`, `turn_count`,
        `created_at`, `modified_at`. With `search`, the matches of the session search (title
        first, then request, reply, thinking), each with `rank`, `is_in_*` flags and snippets."""
        return search_rows(store, search, workspace=workspace)

    def read_session(session_id: str | None = None) -> dict[str, Any]:
        """A session's data (this session without an argument; else a bare id, an unambiguous
        prefix or a `vis_session_id#<uuid>` marker): `session`, `current_turn`, `failures`,
        `diagnosis`, `session_forks`, `turn_retries`, `usage`, `transcript` (turns with
        `position`, `user_request`, `status`, `content`, `iterations` of `blocks` with `code`,
        `stdout`, `error`), plus `folds` and `request_health`. Folded steps are all here, but
        reading them does not put them back into the conversation."""
        row = resolve_any(store, session_id or own_id, "read_session()", workspace=workspace)
        return session_data(store, row)

    return [
        HostTool(
            "list_sessions",
            list_sessions,
            SymbolTag.OBSERVATION,
            Activity("List sessions", render=_render("List sessions")),
        ),
        HostTool(
            "read_session",
            read_session,
            SymbolTag.OBSERVATION,
            Activity("Read session", render=_render("Read session")),
        ),
    ]
