"""The wire formats Vis speaks to model servers: a ``[providers.NAME]`` table's ``kind``."""

from __future__ import annotations

from enum import StrEnum


class ProviderKind(StrEnum):
    ANTHROPIC = "anthropic"
    OPENAI = "openai"  # OpenAI's API and any OpenAI-compatible server
    SCRIPTED = "scripted"  # replays a script file (tests, demos)


# The first line of the help a session without a model fails with (the app shows the help as
# a note already, and says only this much again at each failed turn).
NO_MODEL = "No model is configured."
