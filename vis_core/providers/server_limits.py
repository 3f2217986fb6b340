"""Ask an OpenAI-compatible server about itself: how long a request may be (llama.cpp's
``/props`` ``n_ctx``, or the context length ``/v1/models`` lists: vLLM, OpenRouter, LM Studio,
Groq), whether it is llama.cpp's ``llama-server`` (which reads ``tool_choice`` as a string
only), and which models it serves."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from vis_core.providers.tls import verified_context
from vis_core.system.redaction import hide_credentials

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


@dataclass(frozen=True)
class ServerFacts:
    """What a server said about itself: the input limit of a model (None: it did not say) and
    whether it is llama.cpp's server (its ``/props`` names its build and generation settings)."""

    input_limit: int | None = None
    llama_cpp: bool = False


def is_llama_cpp(props: Any) -> bool:
    """Whether a ``/props`` answer is llama.cpp's: generation settings beside its build, slots
    or chat template (what llama-server's ``/props`` always holds)."""
    if not isinstance(props, dict) or not isinstance(
        props.get("default_generation_settings"), dict
    ):
        return False
    return any(key in props for key in ("build_info", "total_slots", "chat_template"))


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


async def _small_body(client: Any, url: str, headers: dict[str, str] | None = None) -> bytes | None:
    """The body of a 200 answer to GET ``url``; one past ``ASK_BYTES`` or ``ASK_DEADLINE``
    (a server that never ends it) raises ValueError or TimeoutError."""
    async with (
        asyncio.timeout(ASK_DEADLINE),
        client.stream("GET", url, headers=headers) as response,
    ):
        if response.status_code != 200:
            return None
        body = bytearray()  # grown in place: adding to bytes copied all of it at each piece
        async for chunk in response.aiter_bytes():
            body += chunk
            if len(body) > ASK_BYTES:
                raise ValueError(f"the answer is longer than {ASK_BYTES} bytes")
        return bytes(body)


def _server_root(base_url: str) -> str:
    root = base_url.rstrip("/")
    return root[: -len("/v1")] if root.endswith("/v1") else root


async def discover_server(base_url: str, model: str, *, api_key: str = "") -> ServerFacts:
    """What the server at ``base_url`` reports about itself and ``model`` (nothing when it
    does not answer within a few seconds)."""
    import httpx2

    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    base = base_url.rstrip("/")
    limit: int | None = None
    llama = False
    async with httpx2.AsyncClient(
        timeout=ASK_TIMEOUT, headers=headers, verify=verified_context()
    ) as client:
        for url in (f"{_server_root(base)}/props", f"{base}/models"):
            try:
                body = await _small_body(client, url)
                if body is None:
                    continue
                answer = json.loads(body)
            except (httpx2.HTTPError, ValueError, TimeoutError) as exc:
                log.debug("asking %s about the server failed: %s", hide_credentials(url), exc)
                continue
            if url.endswith("/props"):
                llama = is_llama_cpp(answer)
                limit = limit_from_props(answer)
            else:
                limit = limit_from_models(answer, model)
            if limit:
                break
    return ServerFacts(limit, llama)


def served_ids(listing: Any) -> list[str]:
    """The model ids a ``/v1/models`` answer lists, in its order."""
    entries = listing.get("data") if isinstance(listing, dict) else None
    if not isinstance(entries, list):
        return []
    ids = [e.get("id") for e in entries if isinstance(e, dict)]
    return [i for i in ids if isinstance(i, str) and i.strip()]


async def served_models(
    servers: Sequence[tuple[str, str]], *, timeout: float = 2.0
) -> list[list[str] | OSError]:
    """The models each ``(base_url, api_key)`` server serves (its ``/v1/models``), or the
    OSError naming why it could not be asked (not running, no such route, an answer that is
    not a listing). ``timeout`` bounds each request alone: the client is built before it."""
    import httpx2

    async with httpx2.AsyncClient(timeout=timeout, verify=verified_context()) as client:
        return await asyncio.gather(*(_served(client, u, k, timeout) for u, k in servers))


async def _served(client: Any, base_url: str, api_key: str, timeout: float) -> list[str] | OSError:
    import httpx2

    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    url = f"{base_url.rstrip('/')}/models"
    shown = hide_credentials(url)
    try:
        async with asyncio.timeout(timeout):
            body = await _small_body(client, url, headers)
        if body is None:
            return OSError(f"{shown} answered with an error")
        return served_ids(json.loads(body))
    except (httpx2.HTTPError, ValueError, TimeoutError) as exc:
        return OSError(
            f"{shown} did not answer ({type(exc).__name__}: {hide_credentials(str(exc))})"
        )
