"""Ask an OpenAI-compatible server how long a request may be: llama.cpp's ``/props``
``n_ctx``, or the context length ``/v1/models`` lists (vLLM, OpenRouter, LM Studio, Groq)."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

log = logging.getLogger(__name__)

ASK_TIMEOUT = 3.0
ASK_DEADLINE = 10.0  # one question in all: a server that trickles an endless answer
ASK_BYTES = 4 * 1048576  # /props or /v1/models of a real server: a few KiB to a few 100 KiB
# Keys under which servers list a model's context length in ``/v1/models`` entries.
_MODEL_KEYS = (
    "max_model_len",  # vLLM
    "context_length",  # OpenRouter, LM Studio, Together
    "context_window",  # Groq
    "max_context_length",  # LM Studio
    "n_ctx",
)


def _positive_int(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        return None
    return int(value)


def limit_from_props(props: Any) -> int | None:
    """llama.cpp's ``/props``: ``default_generation_settings.n_ctx`` (older: ``n_ctx``)."""
    if not isinstance(props, dict):
        return None
    settings = props.get("default_generation_settings")
    if isinstance(settings, dict):
        found = _positive_int(settings.get("n_ctx"))
        if found:
            return found
    return _positive_int(props.get("n_ctx"))


def limit_from_models(listing: Any, model: str) -> int | None:
    """The context length ``/v1/models`` gives for ``model`` (or for the only model served)."""
    entries = listing.get("data") if isinstance(listing, dict) else None
    if not isinstance(entries, list):
        return None
    entries = [e for e in entries if isinstance(e, dict)]
    chosen = [e for e in entries if e.get("id") == model] or (entries if len(entries) == 1 else [])
    for entry in chosen:
        for place in (entry, entry.get("meta"), entry.get("metadata")):
            if not isinstance(place, dict):
                continue
            for key in _MODEL_KEYS:
                found = _positive_int(place.get(key))
                if found:
                    return found
    return None


async def _small_body(client: Any, url: str) -> bytes | None:
    """The body of a 200 answer to GET ``url``; one past ``ASK_BYTES`` or ``ASK_DEADLINE``
    (a server that never ends it) raises ValueError or TimeoutError."""
    async with asyncio.timeout(ASK_DEADLINE), client.stream("GET", url) as response:
        if response.status_code != 200:
            return None
        body = b""
        async for chunk in response.aiter_bytes():
            body += chunk
            if len(body) > ASK_BYTES:
                raise ValueError(f"the answer is longer than {ASK_BYTES} bytes")
        return body


def _server_root(base_url: str) -> str:
    root = base_url.rstrip("/")
    return root[: -len("/v1")] if root.endswith("/v1") else root


async def discover_input_limit(base_url: str, model: str, *, api_key: str = "") -> int | None:
    """The input limit the server at ``base_url`` reports for ``model``, or None when it
    does not say (or does not answer within a few seconds)."""
    import httpx

    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    base = base_url.rstrip("/")
    async with httpx.AsyncClient(timeout=ASK_TIMEOUT, headers=headers) as client:
        for url, read in (
            (f"{_server_root(base)}/props", limit_from_props),
            (f"{base}/models", lambda body: limit_from_models(body, model)),
        ):
            try:
                body = await _small_body(client, url)
                if body is None:
                    continue
                found = read(json.loads(body))
            except (httpx.HTTPError, ValueError, TimeoutError) as exc:
                log.debug("asking %s for the context size failed: %s", url, exc)
                continue
            if found:
                return found
    return None
