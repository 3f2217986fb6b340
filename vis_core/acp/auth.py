"""No usable model, said the ACP way: "authentication required" (-32000) with a message an
editor shows as it is, and the one method Vis advertises for it. Vis takes no key over the
protocol; the method tells the person where a key goes, and choosing it has Vis look again."""

from __future__ import annotations

from typing import Any

from acp import RequestError
from acp.schema import AuthMethodAgent

from vis_core.model.providers import NO_MODEL

AUTH_REQUIRED = -32000
METHOD_ID = "vis-model"
EDITOR_FIX = (
    "Give Vis a model: add the provider's key to the `env` of Vis's entry in the editor's "
    'agent servers (in Zed, `agent_servers` in settings.json), such as `"ANTHROPIC_API_KEY": '
    '"…"` or `"OPENAI_API_KEY": "…"`, or run `vis` in a terminal and choose a provider, key '
    "and model with /login. Then try again."
)


def auth_methods() -> list[Any]:
    """What ``initialize`` advertises (an agent-handled method: no ``type``)."""
    return [AuthMethodAgent(id=METHOD_ID, name="Set up a model for Vis", description=EDITOR_FIX)]


def model_required(problem: str | None) -> RequestError:
    """The error for a session that has no model: why (the shell advice of Vis's own "no
    model" help left out: it does not apply in an editor) and what to do there."""
    text = (problem or "").strip()
    reason = NO_MODEL if not text or text.startswith(NO_MODEL) else text.rstrip(".") + "."
    return RequestError(AUTH_REQUIRED, f"{reason} {EDITOR_FIX}")


def check_method(method_id: str) -> None:
    """Refuse a method Vis did not advertise."""
    if method_id != METHOD_ID:
        raise RequestError.invalid_params(
            {"methodId": f"Vis has no authentication method {method_id!r}; use {METHOD_ID!r}"}
        )
