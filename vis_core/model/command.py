"""Slash commands as front ends see them: what one is, what it sends, what to do after it."""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

_COMMAND = re.compile(r"^/[a-z0-9][a-z0-9_-]*(?:\s|$)")


def is_command(text: str) -> bool:
    """Whether ``text`` is a slash command (``/init``), not a request that starts with a
    path (``/etc/hosts: why is it empty?``)."""
    return bool(_COMMAND.match(text.strip()))


#: the commands Vis itself offers (``vis_core.commands``): no extension command may take a name
BUILTIN_COMMANDS = frozenset(
    {
        "compact",
        "context",
        "draft",
        "export",
        "fork",
        "goal",
        "group",
        "help",
        "init",
        "login",
        "mcp",
        "model",
        "new",
        "plan",
        "quit",
        "reload",
        "sessions",
        "settings",
        "undo",
    }
)


class CommandAction(StrEnum):
    """What a front end should do after a command (the core holds no UI)."""

    NEW_SESSION = "new_session"
    OPEN_SESSIONS = "open_sessions"
    OPEN_SETTINGS = "open_settings"
    OPEN_HELP = "open_help"
    OPEN_SESSION = "open_session"  # ``data`` is the id of the session to show
    QUIT = "quit"
    RELOAD = "reload"
    OPEN_MCP = "open_mcp"
    OPEN_MODELS = "open_models"  # the model picker
    OPEN_LOGIN = "open_login"  # choose a provider, save its key, pick a model
    SEND_PROMPT = "send_prompt"  # ``data`` is a PromptToSend: the request to send as a turn
    OPEN_DRAFT = "open_draft"  # ``data`` is a DraftView: the draft's diff and its actions


@dataclass(frozen=True)
class PromptToSend:
    """A request a command sends to the model as the next turn (``/init``, file commands);
    ``model`` (``provider/model``) switches the session's model first when given."""

    text: str
    label: str = ""
    model: str | None = None


@dataclass(frozen=True)
class CommandInfo:
    name: str
    usage: str
    doc: str
    saveable: bool = False
    owner: str = "vis"
