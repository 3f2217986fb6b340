"""Scripted sessions for the context tests: turns with steps, and what the provider received."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from vis_core.agent.session import AgentSession
from vis_core.events import Event
from vis_core.host import Host, HostOptions
from vis_core.providers.base import ModelRequest


def write_script(path: Path, responses: list[dict[str, Any]]) -> Path:
    path.write_text(yaml.safe_dump(responses, sort_keys=False), encoding="utf-8")
    return path


def steps(*outputs: str, answer: str) -> list[dict[str, Any]]:
    """A turn: one block per output (it prints that output), then the answer."""
    return [{"code": f"print({out!r})"} for out in outputs] + [{"text": answer}]


# Turn 1 has two steps, turn 2 three; both are settled when turn 3 starts.
HISTORY = [
    *steps("one-1", "one-2", answer="answer one"),
    *steps("two-1", "two-2", "two-3", answer="answer two"),
]
REQUESTS = ("first request", "second request")


async def open_host(workspace: Path, script: Path) -> Host:
    return await Host.open(HostOptions(workspace=workspace, provider="scripted", script=script))


def received(session: AgentSession) -> list[ModelRequest]:
    """Every request the scripted provider received in this session."""
    return session.model.provider.requests  # type: ignore[union-attr]


def flat(request: ModelRequest) -> list[str]:
    """Each message of a request as ``role: text`` (a tool call shows its code)."""
    out = []
    for message in request.messages:
        text = message.text
        for call in message.tool_calls:
            text += " " + str(call.arguments.get("code", call.arguments))
        out.append(f"{message.role}: {text}".strip())
    return out


def joined(request: ModelRequest) -> str:
    return "\n".join(flat(request))


async def run_turns(session: AgentSession, *requests: str) -> list[Event]:
    events: list[Event] = []
    session.subscribe(events.append)
    for request in requests:
        await session.submit(request)
    return events
