"""The form of Chat Completions request a server reads, and what its refusal of a field changes."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any

from vis_core.providers.errors import body_detail

# How servers refuse a request field they do not take (pydantic-based servers, Azure, OpenAI).
_REFUSED = re.compile(
    r"extra inputs are not permitted|unrecognized request argument|unsupported parameter"
    r"|not supported|unknown (?:field|parameter|argument)|unexpected (?:keyword|field|argument)"
    r"|not allowed|not permitted",
    re.IGNORECASE,
)
MAX_TOKENS, MAX_COMPLETION_TOKENS = "max_tokens", "max_completion_tokens"
_LIMIT_FIELDS = re.compile(rf"\b(?:{MAX_TOKENS}|{MAX_COMPLETION_TOKENS})\b")


@dataclass(frozen=True)
class RequestForm:
    """What a request carries, as the server reads it; what Vis learns of the server
    (llama.cpp's ``/props``, a refusal of a field) changes it for the rest of the session."""

    # the output limit as max_completion_tokens (api.openai.com: its reasoning models require
    # it), else as the widely read max_tokens
    completion_tokens: bool = False
    stream_usage: bool = True  # stream_options asks for usage (else the usage is estimated)
    strings_only: bool = False  # tool_choice as a string only (llama.cpp)
    reasoning_from: str = ""  # the mark of the reasoning that goes back (to_openai_messages)

    @property
    def limit_field(self) -> str:
        """The field of the output limit."""
        return MAX_COMPLETION_TOKENS if self.completion_tokens else MAX_TOKENS


@dataclass(frozen=True)
class Fallback:
    """The form to ask again with, after the server refused ``field``; ``change`` says what
    is sent instead (for the log)."""

    field: str
    form: RequestForm
    change: str


def fallback(exc: Any, params: dict[str, Any], form: RequestForm) -> Fallback | None:
    """The form without a field of ``params`` the error answer ``exc`` refuses, or None when
    it refuses none that Vis can leave out or change.

    The object form of ``tool_choice`` (llama.cpp: "Wrong type supplied for parameter
    'tool_choice'") becomes a string; ``stream_options`` ("Extra inputs are not permitted",
    Azure's "Unrecognized request argument supplied") is left out; a refused ``max_tokens``
    ("Unsupported parameter: 'max_tokens' … Use 'max_completion_tokens'") becomes
    ``max_completion_tokens``, and the other way round.
    """
    if getattr(exc, "status_code", 0) not in (400, 422, 500):
        return None
    said = f"{body_detail(exc.body)} {exc}"
    if isinstance(params.get("tool_choice"), dict) and "tool_choice" in said:
        return Fallback(
            "tool_choice",
            replace(form, strings_only=True),
            "tool_choice as an object; sending it as a string",
        )
    if not _REFUSED.search(said):
        return None  # e.g. vLLM's "'max_tokens' … is too large" is about its value
    if "stream_options" in params and "stream_options" in said:
        return Fallback(
            "stream_options",
            replace(form, stream_usage=False),
            "stream_options; leaving it out (the usage of its answers is estimated)",
        )
    named = _LIMIT_FIELDS.search(said)  # the one refused comes first: "… Use the other"
    if named is not None and named.group() == form.limit_field:
        other = replace(form, completion_tokens=not form.completion_tokens)
        change = f"{named.group()}; sending the output limit as {other.limit_field}"
        return Fallback("the output limit", other, change)
    return None
