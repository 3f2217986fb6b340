"""What every provider shares, without importing an SDK: key names, estimates, parsing."""

from __future__ import annotations

import json
import math
import re
from dataclasses import replace

from vis_core.model.conversation import ToolCall
from vis_core.model.usage import Usage
from vis_core.providers.base import ContextOverflowError, ModelRequest

ANTHROPIC_KEY_ENV = "ANTHROPIC_API_KEY"
OPENAI_KEY_ENV = "OPENAI_API_KEY"
# Local servers (Ollama, llama.cpp, vLLM, LM Studio) ignore the key, but the SDKs need one.
NO_KEY = "no-key-needed"
RETRYABLE_STATUSES = frozenset({408, 429})
# Thinking that only an OpenAI-side server takes back is marked by a ThinkingPart.signature
# that starts with this (Anthropic's signatures are base64, without a "-"): no provider sends
# back the other's.
OPENAI_MARK = "openai-"
# The least output limit (max_tokens) worth asking for: a request whose prompt leaves less of
# the model's context than this is too long, not an answer to cut short.
MIN_OUTPUT_TOKENS = 1024
# A prompt's estimate (four characters a token) falls short of a server's count by a few per
# cent (its chat template's tokens); the output limit leaves this much more room for it.
ESTIMATE_MARGIN = 1.05


# How much of a server's error message is shown: an error body can be a whole page or megabytes.
DETAIL_LIMIT = 400
_HIDDEN = re.compile(r"<(head|script|style)\b.*?</\1\s*>", re.IGNORECASE | re.DOTALL)
_TITLE = re.compile(r"<title\b[^>]*>(.*?)</title", re.IGNORECASE | re.DOTALL)
_TAGS = re.compile(r"<[^>]*>")


def _words(markup: str) -> str:
    import html  # here: its table of entities is only read for a server's error page

    return " ".join(html.unescape(_TAGS.sub(" ", markup)).split())


def page_text(data: str) -> str:
    """The words of an HTML page (a proxy's error page): its title, unless its text says it
    already, then its text, white space collapsed; other text as it is."""
    if not data.lstrip().startswith("<"):
        return data
    found = _TITLE.search(data)
    title = _words(found.group(1)) if found else ""
    text = _words(_HIDDEN.sub(" ", data))
    return text if title in text else f"{title} {text}".strip()


def short_text(text: str, limit: int = DETAIL_LIMIT) -> str:
    """``text`` cut to ``limit`` characters, saying how long it was."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… (cut: {len(text):,} characters in all)"


def is_retryable_status(status: int | None) -> bool:
    """408, 429 and every 5xx are worth another try."""
    return status is not None and (status in RETRYABLE_STATUSES or status >= 500)


# How providers say a request is too long for the model's context window.
_OVERFLOW = re.compile(
    r"prompt is too long|context[_ ]length[_ ]exceeded|maximum context length|"
    r"context window|exceeds? (?:the )?(?:available )?context|input tokens exceed|"
    r"context size|too many (?:input )?tokens|request_too_large|reduce the length|"
    r"exceeds the maximum size",
    re.IGNORECASE,
)
_MEASURED = re.compile(r"(\d[\d,]*)\s*tokens?\s*>\s*\d|resulted in (\d[\d,]*) tokens")


def overflow_error(status: int | None, message: str) -> ContextOverflowError | None:
    """A :class:`ContextOverflowError` when ``message`` (HTTP ``status``) says the request was
    too long for the model's context, else None."""
    if status not in (None, 400, 413, 422) or not _OVERFLOW.search(message):
        return None
    found = _MEASURED.search(message)
    tokens = None
    if found is not None:
        tokens = int((found.group(1) or found.group(2)).replace(",", ""))
    return ContextOverflowError(message, status=status, input_tokens=tokens)


def fit_output(request: ModelRequest, input_limit: int | None, scale: float = 1.0) -> ModelRequest:
    """``request`` with its output limit (max_tokens) cut to what the prompt leaves of
    ``input_limit`` (servers such as vLLM refuse a prompt plus max_tokens beyond their
    context), never below ``MIN_OUTPUT_TOKENS``; as it is when the limit is unknown. The
    prompt is its estimate times ``scale`` (what the server counted of an earlier one, per
    token estimated) and ``ESTIMATE_MARGIN``."""
    if not input_limit:
        return request
    prompt = math.ceil(estimate_tokens(request_chars(request)) * scale * ESTIMATE_MARGIN)
    room = max(input_limit - prompt, MIN_OUTPUT_TOKENS)
    if room >= request.max_tokens:
        return request
    return replace(request, max_tokens=room)


def estimate_tokens(chars: int) -> int:
    """About four characters per token, rounded up."""
    return (chars + 3) // 4


def request_chars(request: ModelRequest) -> int:
    """How many characters a request sends (system, messages, tool calls, tool schemas)."""
    total = len(request.system)
    for message in request.messages:
        total += len(message.text)
        for call in message.tool_calls:
            total += len(call.name) + len(json.dumps(call.arguments, ensure_ascii=False))
    for tool in request.tools:
        total += len(tool.name) + len(tool.description) + len(json.dumps(tool.parameters))
    return total


def tool_choice_of(choice: str, request: ModelRequest) -> str:
    """The ``tool_choice`` model option as ``request`` takes it: ``auto`` and ``none`` as
    given; ``required`` or a declared tool's name forces a call on the first request of a turn
    (its last message is the person's) only, so that the turn can end; else ``auto``."""
    if choice in ("auto", "none"):
        return choice
    first = not request.messages or request.messages[-1].role == "user"
    known = choice == "required" or choice in {t.name for t in request.tools}
    return choice if first and known else "auto"


def estimated_usage(request: ModelRequest, out_chars: int) -> Usage:
    """The usage of a response whose server said none: the request's characters and the
    ``out_chars`` answered, four a token."""
    return Usage(input=estimate_tokens(request_chars(request)), output=estimate_tokens(out_chars))


def _near(text: str, position: int, width: int = 30) -> str:
    """The arguments around ``position``, for an error message."""
    start = max(position - width, 0)
    piece = text[start : position + width]
    return ("…" if start else "") + piece + ("…" if position + width < len(text) else "")


def read_tool_call(call_id: str, name: str, text: str, *, cut: bool = False) -> ToolCall:
    """The call to ``name`` with the JSON object the model streamed as its arguments.

    Parsed leniently (``strict=False``: grammar-constrained servers put literal newlines and
    tabs inside strings). Arguments that still cannot be read give a call with ``problem``
    set and ``raw_arguments`` kept; ``cut`` (the response stopped at its output limit) says
    that is why.
    """
    if not text.strip():
        return ToolCall(call_id, name, {})
    try:
        value = json.loads(text, strict=False)
    except ValueError as exc:
        if cut:
            problem = (
                f"the answer was cut at the output limit (max_tokens) inside the arguments of "
                f"this call to {name}, so it was not run; make the call shorter"
            )
        else:
            where = (
                f" near {_near(text, exc.pos)!r}" if isinstance(exc, json.JSONDecodeError) else ""
            )
            problem = (
                f"the arguments of this call to {name} are not valid JSON ({exc}{where}), "
                "so it was not run"
            )
        return ToolCall(call_id, name, {}, raw_arguments=text, problem=problem)
    if not isinstance(value, dict):
        problem = (
            f"the arguments of this call to {name} are a JSON {type(value).__name__}, not an "
            "object of named arguments, so it was not run"
        )
        return ToolCall(call_id, name, {}, raw_arguments=text, problem=problem)
    return ToolCall(call_id, name, value)
