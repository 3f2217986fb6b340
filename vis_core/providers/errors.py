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
from vis_core.providers.common import (
    MIN_OUTPUT_TOKENS,
    is_retryable_status,
    page_text,
    short_text,
)
from vis_core.providers.retry_after import retry_after
from vis_core.system.redaction import hide_credentials


class OutputLimitTooLarge(ProviderError):
    """The prompt fits the model's context, but not with the output limit asked for
    (max_tokens): ``input_tokens`` (what the server counted) and ``limit`` (the context) say
    how much is left for the answer (``room``). Asked again with at most that, it goes."""

    def __init__(self, message: str, *, status: int | None, input_tokens: int, limit: int):
        super().__init__(message, status=status)
        self.input_tokens = input_tokens
        self.limit = limit

    @property
    def room(self) -> int:
        return self.limit - self.input_tokens


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
_TOKEN_FIGURES = (  # each names the request's input tokens and the model's limit
    # "prompt is too long: 210000 tokens > 200000 maximum"
    re.compile(r"(?P<tokens>\d[\d,]*) tokens? > (?P<limit>\d[\d,]*)"),
    # "maximum context length is 8192 tokens. However, you requested 9000 tokens in the
    # messages" (vLLM), "... However, your messages resulted in 130532 tokens" (OpenAI),
    # "... However, your request has 9000 input tokens" (vLLM ≥ 0.10)
    re.compile(
        r"maximum context length is (?P<limit>\d[\d,]*).*?"
        r"(?:requested|resulted in|request has) (?:about )?(?P<tokens>\d[\d,]*)",
        re.S,
    ),
    # "Requested tokens (9000) exceed context window of 8192"
    re.compile(r"Requested tokens \((?P<tokens>\d+)\) exceed context window of (?P<limit>\d+)"),
    # llama.cpp: "request (9000 tokens) exceeds the available context size (8192 tokens), ..."
    re.compile(
        r"request \((?P<tokens>\d+) tokens\) exceeds the available context size "
        r"\((?P<limit>\d+) tokens\)"
    ),
)
# What servers say when the prompt and the output limit asked for (max_tokens) together exceed
# the context: each names the prompt's tokens (``tokens``, plus ``more`` for tool schemas) and
# the context (``limit``). The output limit is what to change while the prompt fits.
_OUTPUT_LIMIT_FIGURES = (
    # vLLM, OpenAI: "maximum context length is 8192 tokens. However, you requested 9469 tokens
    # (1277 in the messages, 8192 in the completion)" (OpenAI adds "N in the functions, ")
    re.compile(
        r"maximum context length is (?P<limit>\d[\d,]*) tokens.*?"
        r"\((?P<tokens>\d[\d,]*) in the messages, (?:(?P<more>\d[\d,]*) in the functions, )?"
        r"\d[\d,]* in the completion",
        re.S,
    ),
    # vLLM ≥ 0.10: "'max_tokens' or 'max_completion_tokens' is too large: 8192. This model's
    # maximum context length is 8192 tokens and your request has 1277 input tokens"
    re.compile(
        r"too large: \d+\. This model's maximum context length is (?P<limit>\d+) tokens "
        r"and your request has (?P<tokens>\d+) input tokens"
    ),
    # SGLang: "... maximum context length of 8192 tokens. You requested a total of 9469
    # tokens: 1277 tokens from the input messages and 8192 tokens for the completion"
    re.compile(
        r"maximum context length of (?P<limit>\d+) tokens\. You requested a total of \d+ "
        r"tokens: (?P<tokens>\d+) tokens from the input messages"
    ),
    # Text Generation Inference: "`inputs` tokens + `max_new_tokens` must be <= 8192. Given:
    # 1277 `inputs` tokens and 8192 `max_new_tokens`"
    re.compile(r"must be <= (?P<limit>\d+)\. Given: (?P<tokens>\d+) `inputs` tokens"),
    # Anthropic: "input length and `max_tokens` exceed context limit: 195000 + 8192 > 200000"
    re.compile(
        r"input length and `max_tokens` exceed context limit: (?P<tokens>\d+) \+ \d+ > "
        r"(?P<limit>\d+)"
    ),
)
# A 429 that no wait ends: the account has no quota (credit) left (OpenAI's code and type).
_QUOTA_USED_UP = "insufficient_quota"
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
    return ProviderConfigError(  # /login's key counts only while the variable is unset: here
        f"no API key for provider {provider!r}: {key_env} is not set; "
        + key_advice(provider, key_env, config_file)
        + ", or run /login in the app"
    )


def _inner(body: Any) -> Any:
    if isinstance(body, dict) and "error" in body:
        return body["error"]
    return body


def _message(body: Any) -> str:
    """The message inside an error body of either wire format, whole."""
    inner = _inner(body)
    return inner if isinstance(inner, str) else _body_field(body, "message") or ""


def shown(text: str) -> str:
    """A server's error text as Vis shows and stores it: credentials in URLs masked (servers
    echo the URL they were asked), a page reduced to its words, cut to ``DETAIL_LIMIT``."""
    return short_text(page_text(hide_credentials(text)))


def body_detail(body: Any) -> str:
    """The human message inside an error body of either wire format, as :func:`shown`."""
    return shown(_message(body))


def _body_field(body: Any, name: str) -> str | None:
    inner = _inner(body)
    if isinstance(inner, dict) and isinstance(inner.get(name), str):
        return inner[name]
    return None


def _number(found: re.Match[str], name: str) -> int:
    value = found.groupdict().get(name)
    return int(value.replace(",", "")) if value else 0


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def context_overflow(provider: str, status: int | None, body: Any) -> ContextOverflowError | None:
    """The ContextOverflowError an error body describes, or None when it is another error."""
    message = _message(body)
    code = _body_field(body, "code") or ""
    kind = _body_field(body, "type") or ""
    if code not in _OVERFLOW_CODES and kind not in _OVERFLOW_CODES:
        if not _OVERFLOW_TEXT.search(message):
            return None
    found = next(filter(None, (p.search(message) for p in _TOKEN_FIGURES)), None)
    tokens = _number(found, "tokens") if found else None
    limit = _number(found, "limit") if found else None
    detail = body_detail(body)
    inner = _inner(body)
    if isinstance(inner, dict):  # llama.cpp's server says them as fields
        tokens = tokens or _count(inner.get("n_prompt_tokens"))
        limit = limit or _count(inner.get("n_ctx"))
    where = f" (HTTP {status})" if status else ""
    return ContextOverflowError(
        f"{provider}: the request is longer than the model's context window{where}: "
        f"{detail or code or kind}",
        status=status,
        input_tokens=tokens,
        limit=limit,
    )


def _url_of(exc: BaseException) -> str:
    """The URL ``exc`` was asking, its credentials masked."""
    request = getattr(exc, "request", None)
    url = getattr(request, "url", None)
    return hide_credentials(str(url)) if url is not None else ""


def _text(exc: BaseException) -> str:
    """What ``exc`` says, as :func:`shown`."""
    return shown(str(exc))


def _reason(exc: BaseException) -> str:
    """Why a connection failed, from ``exc`` and its causes: what ``exc`` says, or when it
    says nothing (a reset, an ``httpx.ReadError()``), its kind ("read error") and what the
    first cause beneath it that says something says."""
    if str(exc):
        return _text(exc)
    kind = " ".join(re.findall(r"[A-Z]+[a-z]*|[a-z]+", type(exc).__name__)).lower()
    seen: list[BaseException] = [exc]
    cause = exc.__cause__ or exc.__context__
    while cause is not None and cause not in seen and len(seen) < 10:
        if str(cause):
            return f"{kind} ({_text(cause)})"
        seen.append(cause)
        cause = cause.__cause__ or cause.__context__
    return kind


def output_limit_refusal(
    provider: str, status: int | None, body: Any
) -> OutputLimitTooLarge | ContextOverflowError | None:
    """The error for a refusal of the output limit asked for (max_tokens): the prompt and it
    together exceed the model's context. :class:`OutputLimitTooLarge` when the prompt leaves
    at least ``MIN_OUTPUT_TOKENS`` for the answer, else a ContextOverflowError (the conversation
    itself must shrink); None when ``body`` says something else."""
    message = _message(body)
    found = next(filter(None, (p.search(message) for p in _OUTPUT_LIMIT_FIGURES)), None)
    if found is None:
        return None
    detail = body_detail(body)
    tokens = _number(found, "tokens") + _number(found, "more")
    limit = _number(found, "limit")
    where = f" (HTTP {status})" if status else ""
    if limit - tokens < MIN_OUTPUT_TOKENS:
        return ContextOverflowError(
            f"{provider}: the request ({tokens} tokens) leaves no room for an answer in the "
            f"model's {limit}-token context window{where}: {detail}",
            status=status,
            input_tokens=tokens,
            limit=limit,
        )
    return OutputLimitTooLarge(
        f"{provider} refused the output limit asked for (max_tokens){where}: the request's "
        f"{tokens} tokens leave {limit - tokens} of the model's {limit}-token context for the "
        f"answer: {detail}",
        status=status,
        input_tokens=tokens,
        limit=limit,
    )


def _status_error(
    exc: Any, *, provider: str, key_env: str, config_file: Path | str | None
) -> ProviderError:
    status = int(exc.status_code)
    body = exc.body
    if status == 200:  # an error event inside a stream
        status = _ERROR_TYPE_STATUS.get(_body_field(body, "type") or "", 500)
    overflow = output_limit_refusal(provider, status, body) or context_overflow(
        provider, status, body
    )
    if overflow is not None:
        return overflow
    detail = body_detail(body) or _text(exc)
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
    if _QUOTA_USED_UP in (_body_field(body, "code"), _body_field(body, "type")):
        return ProviderError(
            f"{message} (the account's quota is used up: waiting does not help, so Vis did "
            "not try again)",
            status=status,
        )
    retryable = is_retryable_status(status)
    if retryable and status >= 500 and _VALIDATION_TEXT.search(detail):
        retryable = False  # the server rejected what was sent; the same request fails again
    headers = getattr(getattr(exc, "response", None), "headers", None)
    wait = retry_after(headers) if retryable and headers is not None else None
    return ProviderError(message, status=status, retryable=retryable, retry_after=wait)


def _event_error(exc: BaseException, server: str) -> ProviderError:
    """An ``error`` event in a stream. One that gives an HTTP status as its ``code`` (OpenRouter:
    ``{"error": {"code": 502, ...}}`` when the model's provider failed) is retried as that
    status is, when it came before any answer."""
    inner = _inner(getattr(exc, "body", None))
    code = _count(inner.get("code")) if isinstance(inner, dict) else None
    if code is None or not 400 <= code <= 599:
        return ProviderError(f"{server} answered with an error: {_text(exc)}")
    retryable = is_retryable_status(code) and not _VALIDATION_TEXT.search(str(exc))
    return ProviderError(
        f"{server} answered with an error (code {code}): {_text(exc)}",
        status=code,
        retryable=retryable,
    )


def map_error(
    exc: BaseException,
    *,
    provider: str,
    key_env: str,
    config_file: Path | str | None,
    sdk: SdkErrors,
    server: str,
) -> ProviderError | None:
    """The ProviderError for an SDK/transport exception, or None if ``exc`` is not one.
    ``server`` names the server (URL and provider) in the errors of a stream it broke."""
    if isinstance(exc, ProviderError):
        return exc
    if isinstance(exc, sdk.status):
        return _status_error(exc, provider=provider, key_env=key_env, config_file=config_file)
    url = _url_of(exc)
    at = f" at {url}" if url else ""
    if isinstance(exc, sdk.timeout):
        return ProviderError(f"{provider} request{at} timed out", status=408, retryable=True)
    if isinstance(exc, sdk.connection):
        cause = exc.__cause__ or exc.__context__
        why = f": {_reason(cause)}" if cause else ""
        return ProviderError(f"connection to {provider}{at} failed{why}", retryable=True)
    if isinstance(exc, sdk.validation):
        return ProviderError(f"{server} sent a response Vis cannot read: {_text(exc)}")
    if isinstance(exc, (*sdk.transport, ConnectionError)):
        return ProviderError(f"connection to {provider}{at} broke: {_reason(exc)}", retryable=True)
    if isinstance(exc, sdk.base):  # e.g. an ``error`` event in the middle of a stream
        return _event_error(exc, server)
    return None
