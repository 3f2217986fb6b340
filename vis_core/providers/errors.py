"""Map SDK and transport failures to ProviderError / ProviderConfigError with clear advice."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anthropic
import httpx
import httpx2
import openai

from vis_core.providers.base import ProviderConfigError, ProviderError
from vis_core.providers.common import is_retryable_status

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


def _body_detail(body: Any) -> str:
    """The human message inside an error body of either wire format."""
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            return inner["message"]
        if isinstance(inner, str):
            return inner
    if isinstance(body, str) and body:
        return body
    return ""


def _body_error_type(body: Any) -> str | None:
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and isinstance(inner.get("type"), str):
            return inner["type"]
    return None


def map_error(
    exc: BaseException, *, provider: str, key_env: str, config_file: Path | str | None
) -> ProviderError | None:
    """The ProviderError for an SDK/transport exception, or None if ``exc`` is not one."""
    if isinstance(exc, ProviderError):
        return exc
    if isinstance(exc, anthropic.APIStatusError | openai.APIStatusError):
        status = exc.status_code
        if status == 200:  # an error event inside a stream
            status = _ERROR_TYPE_STATUS.get(_body_error_type(exc.body) or "", 500)
        detail = _body_detail(exc.body) or str(exc)
        if status in (401, 403):
            verb = "rejected the API key" if status == 401 else "refused access"
            return ProviderConfigError(
                f"{provider} {verb} (HTTP {status}: {detail}); "
                + key_advice(provider, key_env, config_file),
                status=status,
            )
        return ProviderError(
            f"{provider} request failed (HTTP {status}): {detail}",
            status=status,
            retryable=is_retryable_status(status),
        )
    if isinstance(exc, anthropic.APITimeoutError | openai.APITimeoutError):
        return ProviderError(f"{provider} request timed out", status=408, retryable=True)
    if isinstance(exc, anthropic.APIConnectionError | openai.APIConnectionError):
        cause = exc.__cause__ or exc.__context__
        why = f": {cause}" if cause else ""
        return ProviderError(f"connection to {provider} failed{why}", retryable=True)
    if isinstance(exc, httpx2.TransportError | httpx.TransportError | ConnectionError):
        return ProviderError(
            f"connection to {provider} broke: {exc or type(exc).__name__}", retryable=True
        )
    if isinstance(exc, anthropic.APIResponseValidationError | openai.APIResponseValidationError):
        return ProviderError(f"{provider} sent a response Vis cannot read: {exc}")
    if isinstance(exc, anthropic.AnthropicError | openai.OpenAIError):
        return ProviderError(f"{provider} request failed: {exc}")
    return None
