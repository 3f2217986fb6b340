"""Map SDK and transport failures to ProviderError / ProviderConfigError with clear advice.

This module imports no provider SDK: each provider hands :func:`map_error` the exception
classes of its own SDK (:class:`SdkErrors`), so using one provider never loads the other's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vis_core.providers.base import ContextOverflowError, ProviderConfigError, ProviderError
from vis_core.providers.common import is_retryable_status

# The typed "request too long" error; ``ContextOverflowError`` in ``providers.base``.
ContextOverflow = ContextOverflowError


class UnfinishedResponse(ProviderError):
    """The server closed a streamed response before saying it was finished (no stop reason,
    no end marker): it failed after answering 200, or the connection broke."""


@dataclass(frozen=True)
class SdkErrors:
    """The exception classes of one provider SDK (both SDKs share this shape)."""

    status: type[BaseException]  # APIStatusError: .status_code, .body, .response
    timeout: type[BaseException]  # APITimeoutError (a subclass of connection)
    connection: type[BaseException]  # APIConnectionError: .request
    validation: type[BaseException]  # APIResponseValidationError
    base: type[BaseException]  # the SDK's root error
    transport: tuple[type[BaseException], ...] = ()  # the HTTP library's transport errors


# Anthropic reports mid-stream failures as an SSE ``error`` event on a 200 response.
_ERROR_TYPE_STATUS = {
    "overloaded_error": 529,
    "api_error": 500,
    "rate_limit_error": 429,
    "timeout_error": 504,
    "request_too_large": 413,
    "invalid_request_error": 400,
    "authentication_error": 401,
    "permission_error": 403,
    "not_found_error": 404,
}

# What servers say when the request does not fit the context window.
_OVERFLOW_CODES = frozenset(
    {"context_length_exceeded", "exceed_context_size_error", "string_above_max_length"}
)
_OVERFLOW_TEXT = re.compile(
    r"prompt is too long"  # Anthropic
    r"|maximum context length"  # OpenAI, vLLM, llama-cpp-python, OpenRouter
    r"|context[_ ]length[_ ]exceeded"
    r"|exceeds? the (?:available )?context (?:size|window|length)"  # llama.cpp, Responses
    r"|exceed(?:s|ed)? context window"  # llama-cpp-python's own message
    r"|input is too long"
    r"|too many tokens"
    r"|prompt exceeds n_ctx"
    r"|context (?:size|window) (?:has been |was )?exceeded"
    r"|input token count.*exceeds the maximum"  # Gemini's compatible endpoint
    r"|model is loaded with context length of only",  # LM Studio
    re.IGNORECASE,
)
_TOKEN_FIGURES = (
    # "prompt is too long: 210000 tokens > 200000 maximum"
    re.compile(r"(\d[\d,]*) tokens? > (\d[\d,]*)"),
    # "maximum context length is 8192 tokens. However, you requested 9000 tokens"
    # (OpenAI: "... However, your messages resulted in 130532 tokens")
    re.compile(
        r"maximum context length is (\d[\d,]*).*?(?:requested|resulted in) (?:about )?(\d[\d,]*)",
        re.S,
    ),
    # "Requested tokens (9000) exceed context window of 8192"
    re.compile(r"Requested tokens \((\d+)\) exceed context window of (\d+)"),
    # llama.cpp: "request (9000 tokens) exceeds the available context size (8192 tokens), ..."
    re.compile(r"request \((\d+) tokens\) exceeds the available context size \((\d+) tokens\)"),
)
# Errors that another try cannot fix even when the server calls them 5xx.
_VALIDATION_TEXT = re.compile(
    r"validation error|invalid_request|TypeError|KeyError|ValueError|"
    r"not (?:a valid|supported)|expected .* to be|must be (?:a|an) ",
    re.IGNORECASE,
)


def key_advice(provider: str, key_env: str, config_file: Path | str | None) -> str:
    """How to fix the API key of ``provider``: the env var and the ``config.toml`` setting."""
    where = str(config_file) if config_file else "config.toml"
    if key_env:
        return (
            f"set the environment variable {key_env} to a valid API key, or name another "
            f'variable with `api_key_env = "..."` under [providers.{provider}] in {where}'
        )
    return f'set `api_key_env = "..."` under [providers.{provider}] in {where}'


def missing_key_error(
    provider: str, key_env: str, config_file: Path | str | None
) -> ProviderConfigError:
    return ProviderConfigError(
        f"no API key for provider {provider!r}: {key_env} is not set; "
        + key_advice(provider, key_env, config_file)
    )


def _inner(body: Any) -> Any:
    if isinstance(body, dict) and "error" in body:
        return body["error"]
    return body


def body_detail(body: Any) -> str:
    """The human message inside an error body of either wire format."""
    inner = _inner(body)
    if isinstance(inner, dict) and isinstance(inner.get("message"), str):
        return inner["message"]
    if isinstance(inner, str):
        return inner
    if isinstance(body, str) and body:
        return body
    return ""


def _body_field(body: Any, name: str) -> str | None:
    inner = _inner(body)
    if isinstance(inner, dict) and isinstance(inner.get(name), str):
        return inner[name]
    return None


def _figures(text: str) -> tuple[int | None, int | None]:
    """(tokens requested, context limit) as a context-overflow message states them."""
    for index, pattern in enumerate(_TOKEN_FIGURES):
        found = pattern.search(text)
        if found is None:
            continue
        first, second = (int(g.replace(",", "")) for g in found.groups())
        return (second, first) if index == 1 else (first, second)
    return None, None


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def context_overflow(provider: str, status: int | None, body: Any) -> ContextOverflow | None:
    """The ContextOverflow an error body describes, or None when it is another error."""
    detail = body_detail(body)
    code = _body_field(body, "code") or ""
    kind = _body_field(body, "type") or ""
    if code not in _OVERFLOW_CODES and kind not in _OVERFLOW_CODES:
        if not _OVERFLOW_TEXT.search(detail):
            return None
    tokens, limit = _figures(detail)
    inner = _inner(body)
    if isinstance(inner, dict):  # llama.cpp's server says them as fields
        tokens = tokens or _count(inner.get("n_prompt_tokens"))
        limit = limit or _count(inner.get("n_ctx"))
    where = f" (HTTP {status})" if status else ""
    return ContextOverflow(
        f"{provider}: the request is longer than the model's context window{where}: "
        f"{detail or code or kind}",
        status=status,
        input_tokens=tokens,
        limit=limit,
    )


def _url_of(exc: BaseException) -> str:
    request = getattr(exc, "request", None)
    url = getattr(request, "url", None)
    return str(url) if url is not None else ""


def _status_error(
    exc: Any, *, provider: str, key_env: str, config_file: Path | str | None
) -> ProviderError:
    status = int(exc.status_code)
    body = exc.body
    if status == 200:  # an error event inside a stream
        status = _ERROR_TYPE_STATUS.get(_body_field(body, "type") or "", 500)
    overflow = context_overflow(provider, status, body)
    if overflow is not None:
        return overflow
    detail = body_detail(body) or str(exc)
    if status in (401, 403):
        verb = "rejected the API key" if status == 401 else "refused access"
        return ProviderConfigError(
            f"{provider} {verb} (HTTP {status}: {detail}); "
            + key_advice(provider, key_env, config_file),
            status=status,
        )
    url = _url_of(exc)
    message = f"{provider} request failed (HTTP {status}): {detail}"
    if status == 404 and url and "/v1/" not in url and "api.openai.com" not in url:
        message += (
            f"; {url} was not found: an OpenAI-compatible server usually serves under /v1, "
            f'so try base_url = "{url.split("/chat/")[0].split("/responses")[0]}/v1" '
            f"under [providers.{provider}] in {config_file or 'config.toml'}"
        )
    elif status == 404 and url:
        message += f" ({url})"
    retryable = is_retryable_status(status)
    if retryable and status >= 500 and _VALIDATION_TEXT.search(detail):
        retryable = False  # the server rejected what was sent; the same request fails again
    return ProviderError(message, status=status, retryable=retryable)


def map_error(
    exc: BaseException,
    *,
    provider: str,
    key_env: str,
    config_file: Path | str | None,
    sdk: SdkErrors | None = None,
    server: str = "",
) -> ProviderError | None:
    """The ProviderError for an SDK/transport exception, or None if ``exc`` is not one.
    ``server`` names the server (URL and provider) in the errors of a stream it broke."""
    if isinstance(exc, ProviderError):
        return exc
    if sdk is not None:
        if isinstance(exc, sdk.status):
            return _status_error(exc, provider=provider, key_env=key_env, config_file=config_file)
        url = _url_of(exc)
        at = f" at {url}" if url else ""
        if isinstance(exc, sdk.timeout):
            return ProviderError(f"{provider} request{at} timed out", status=408, retryable=True)
        if isinstance(exc, sdk.connection):
            cause = exc.__cause__ or exc.__context__
            why = f": {cause}" if cause else ""
            return ProviderError(f"connection to {provider}{at} failed{why}", retryable=True)
        if isinstance(exc, sdk.validation):
            who = server or f"{provider}{at}"
            return ProviderError(f"{who} sent a response Vis cannot read: {exc}")
    transport = sdk.transport if sdk is not None else ()
    if isinstance(exc, (*transport, ConnectionError)):
        url = _url_of(exc)
        at = f" at {url}" if url else ""
        return ProviderError(
            f"connection to {provider}{at} broke: {exc or type(exc).__name__}", retryable=True
        )
    if sdk is not None and isinstance(exc, sdk.base):
        if server:  # e.g. an ``error`` event in the middle of a stream
            return ProviderError(f"{server} answered with an error: {exc}")
        return ProviderError(f"{provider} request failed: {exc}")
    return None
