"""What the SDK-backed providers share: model lookup, a lazily made client, closing, stalls,
and mapping SDK errors."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from vis_core.providers.base import (
    ContextOverflowError,
    ModelInfo,
    ModelRequest,
    ProviderError,
    StreamEvent,
)
from vis_core.providers.common import (
    NO_KEY,
    estimate_tokens,
    fit_output,
    page_text,
    request_chars,
)
from vis_core.providers.errors import OutputLimitTooLarge, SdkErrors, map_error
from vis_core.providers.models import lookup_model, request_options
from vis_core.providers.tls import verified_context
from vis_core.system.redaction import hide_credentials

log = logging.getLogger(__name__)

DEFAULT_STALL_TIMEOUT = 120.0
# The default cap of one streamed response: this many bytes of server-sent events per token
# of the request's output limit (max_tokens). Generous: a streamed token is ~100-400 bytes of
# SSE JSON; an endless stream is cut at a few MiB, not at the gigabytes it would fill.
BYTES_PER_TOKEN = 512
PAGE_HEAD = 65536  # what is read of a page sent instead of a stream, to quote it


class ResponseTooLong(ProviderError):
    """The server sent more than the response cap allows (an endless or runaway stream)."""


class MalformedStream(ProviderError):
    """The server's stream could not be read: an event that is not JSON, or not the shape
    the wire format has (no choices, a number where text belongs), or a page, not a stream."""


# What reading a broken event raises (JSONDecodeError and UnicodeError are ValueErrors).
READ_FAULTS = (ValueError, TypeError, AttributeError, KeyError, IndexError)


class ResponseMeter:
    """Counts the bytes of one streamed response; past ``limit`` it raises ``error``."""

    def __init__(self, limit: int, error: Callable[[int], ProviderError]) -> None:
        self.limit = limit
        self.error = error
        self.seen = 0

    def add(self, size: int) -> None:
        self.seen += size
        if self.limit and self.seen > self.limit:
            raise self.error(self.seen)


def whole_error(body: str) -> tuple[str, dict[str, Any]] | None:
    """The message and the whole body of a JSON body ``{"error": ...}`` (a server failing,
    yet answering 200); None when ``body`` is not one."""
    try:
        data = json.loads(body)
    except ValueError:
        return None
    error = data.get("error") if isinstance(data, dict) else None
    if not error:
        return None
    message = error.get("message") if isinstance(error, dict) else error
    return (message if isinstance(message, str) and message else json.dumps(error)), data


class GuardedDecoder:
    """Wraps an async SDK client's SSE decoder: the response's bytes count against its
    :class:`ResponseMeter` (set on it once the stream is made), and ``seen`` hears of each event.
    An event with neither data nor a name carries nothing and is passed over.

    Once ``seen`` marks the response ``finished`` (its answer is complete), a connection that
    breaks before the rest (usage, the end marker) ends the events as if the server had
    closed: the answer is kept, its usage estimated, rather than failed.
    """

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.meter: ResponseMeter | None = None
        self.last = ""  # the data of the latest event, for an error that names it
        self.finished = False
        self._events: Any = None

    def seen(self, sse: Any) -> None:
        """Called with each event (subclasses look at it)."""

    def aiter_bytes(self, iterator: Any) -> Any:
        self._events = self._aiter_bytes(iterator)
        return self._events

    async def _counted(self, chunks: Any) -> Any:
        """The response's bytes, counted as they arrive (a line that never ends counts too)."""
        async for chunk in chunks:
            if self.meter is not None:
                self.meter.add(len(chunk))
            yield chunk

    async def _aiter_bytes(self, iterator: Any) -> Any:
        import httpx2

        inner = self._inner.aiter_bytes(self._counted(iterator))
        try:
            async for sse in inner:
                if not sse.data and not sse.event:
                    continue  # an empty ``data:`` line, a keep-alive some servers send
                self.last = sse.data
                self.seen(sse)
                yield sse
        except Exception as exc:  # the SDK may wrap it (anthropic's APIConnectionError)
            broke = isinstance(exc, httpx2.TransportError) or isinstance(
                exc.__cause__, httpx2.TransportError
            )
            if not (broke and self.finished):
                raise
            log.info("the connection broke after the answer was complete (%r); kept", exc)
        finally:
            await inner.aclose()

    async def aclose(self) -> None:
        """Close the events the SDK stopped reading (at ``[DONE]``, or at an error), on this
        loop now (left to the garbage collector, their closing outlives ``vis run``'s loop
        with a warning)."""
        if self._events is not None:
            try:
                await self._events.aclose()
            except RuntimeError as exc:  # still running: it ends with its task
                log.debug("SSE events not closed: %s", exc)


class SdkProvider:
    """Base of the providers built on an official SDK client; subclasses yield ``_events``.

    The SDK is imported and its client made on the first request (``client``), so building
    a provider (``vis doctor``, the TUI's start) costs no SDK import. A server that sends
    not a byte for ``stall_timeout`` seconds (before its answer or within it) ends the
    response with an error naming the setting.
    """

    default_name = ""  # the provider's name when none is given
    default_key_env = ""  # the environment variable of its key when none is given
    default_url = ""  # the server when no base_url is set
    base_url_note = ""  # what a right base_url looks like, where a wrong one is suspected
    decoder: type[GuardedDecoder] = GuardedDecoder  # what reads the client's stream

    def __init__(
        self,
        *,
        api_key: str | None,
        name: str | None = None,
        base_url: str | None = None,
        key_env: str | None = None,
        config_file: Path | str | None = None,
        model_overrides: Mapping[str, Mapping[str, Any]] | None = None,
        timeout: float = 600.0,
        stall_timeout: float = DEFAULT_STALL_TIMEOUT,
        max_response_bytes: int | None = None,
    ) -> None:
        """``max_response_bytes``: the cap of one streamed response (None: ``BYTES_PER_TOKEN``
        per token of the request's ``max_tokens``; 0: no cap)."""
        self.name = name or self.default_name
        self.key_env = self.default_key_env if key_env is None else key_env
        self._api_key = api_key or NO_KEY
        self._timeout = timeout
        self.config_file = config_file
        self.base_url = base_url
        self.stall_timeout = stall_timeout
        self.max_response_bytes = max_response_bytes
        self._overrides = dict(model_overrides or {})
        self._client: Any = None
        self._server_limits: dict[str, int] = {}  # model → the input limit the server reported
        # model → the prompt tokens a server counted per token estimated, from its refusal
        self._prompt_scale: dict[str, float] = {}

    @property
    def url(self) -> str:
        """The server's URL as Vis shows it: without the credentials ``base_url`` may hold."""
        return hide_credentials(self.base_url or self.default_url)

    @property
    def server(self) -> str:
        """The server, as a person finds it in their config: its URL and the provider name."""
        return f"The model server at {self.url} (provider {self.name})"

    @property
    def client(self) -> Any:
        if self._client is None:
            self._client = self._make_client()
        return self._client

    def _sdk(self) -> tuple[Any, type[Any], type[BaseException]]:
        """The SDK module (imported on the first request only), its async client class and
        its root error."""
        raise NotImplementedError

    def prepare(self) -> None:
        """Import the SDK now (from a thread, while the person types), so the first request
        does not wait for it: ``openai`` and ``anthropic`` take 1–3 s of CPU to import."""
        self._sdk()

    def _make_client(self) -> Any:
        sdk, client_class, _ = self._sdk()
        decoder = self.decoder

        class Client(client_class):
            # the SDKs' own hook; its arguments change between releases (anthropic 2.16 added
            # the request's options), so they pass through as given
            def _make_sse_decoder(self, *args: Any, **kwargs: Any) -> Any:
                return decoder(super()._make_sse_decoder(*args, **kwargs))

        # ``stall_timeout`` is the read timeout: every byte counts, an SSE comment (``: ping``,
        # a proxy's keep-alive) too, which the SDK reads without handing out an event; 0 is
        # never (as README says): the person's Esc ends a wait
        read = self.stall_timeout or None
        return Client(
            api_key=self._api_key,
            base_url=self.base_url,
            max_retries=0,
            timeout=sdk.Timeout(self._timeout, read=read),
            http_client=capped_http_client(sdk.DefaultAsyncHttpxClient, self.server),
        )

    def _sdk_errors(self) -> SdkErrors:
        import httpx2

        sdk, _, root = self._sdk()
        return SdkErrors(
            status=sdk.APIStatusError,
            timeout=sdk.APITimeoutError,
            connection=sdk.APIConnectionError,
            validation=sdk.APIResponseValidationError,
            base=root,
            transport=(httpx2.TransportError,),
        )

    def model_options(self, model: str) -> dict[str, str]:
        """The request options (``reasoning_effort``, ``tool_choice``, ``api``) of ``model``."""
        return request_options(self._overrides.get(model), where=self._where(model))

    def _where(self, model: str) -> str:
        return f'[models."{self.name}/{model}"]'

    def model_info(self, model: str) -> ModelInfo:
        """Prices and limits: the table, then the config; an input limit the server reported
        (``discover_limit``) comes before both."""
        info = lookup_model(model, self._overrides.get(model), where=self._where(model))
        limit = self._server_limits.get(model)
        return replace(info, input_limit=limit) if limit else info

    def known_input_limit(self, model: str) -> int | None:
        """The input limit the server reported (``/props``, ``/v1/models``, or a refusal that
        stated it), else ``[models."p/m"] input_limit``, else the known-model table; None
        when unknown."""
        from vis_core.providers.limits import configured_or_known

        return self._server_limits.get(model) or configured_or_known(
            self._overrides.get(model), model
        )

    def learn_limit(self, model: str, error: ProviderError) -> None:
        """Keep the context size a server's refusal stated (a request, or its output limit,
        too long for it)."""
        if isinstance(error, ContextOverflowError | OutputLimitTooLarge) and error.status:
            if error.limit:
                self._server_limits[model] = error.limit

    async def aclose(self) -> None:
        """Close the HTTP connections (call before the event loop ends)."""
        if self._client is not None:
            await self._client.close()

    def stalled(self, exc: BaseException) -> bool:
        """Whether ``exc`` (or its cause) is a read that waited ``stall_timeout`` for a byte."""
        import httpx2

        chain: list[BaseException] = []
        cause: BaseException | None = exc
        while cause is not None and cause not in chain and len(chain) < 10:
            chain.append(cause)
            cause = cause.__cause__ or cause.__context__
        return bool(self.stall_timeout) and any(isinstance(e, httpx2.ReadTimeout) for e in chain)

    def stall_error(self) -> ProviderError:
        return ProviderError(
            f"{self.name} sent nothing for {self.stall_timeout:g} s, so the response was "
            f"given up (the stall_timeout setting under [providers.{self.name}] in "
            f"{self.config_file or 'config.toml'}); the server may be overloaded or stuck",
            status=408,
        )

    def response_cap(self, request: ModelRequest) -> int:
        """The most bytes one streamed response may take (0: no cap)."""
        if self.max_response_bytes is not None:
            return self.max_response_bytes
        return max(request.max_tokens, 1024) * BYTES_PER_TOKEN

    def meter(self, stream: Any, request: ModelRequest) -> None:
        """Put the response cap on ``stream`` (an SDK stream made with a GuardedDecoder)."""
        decoder = getattr(stream, "_decoder", None)
        if isinstance(decoder, GuardedDecoder):
            decoder.meter = ResponseMeter(
                self.response_cap(request), lambda seen: self.too_long(request, seen)
            )

    def too_long(self, request: ModelRequest, seen: int) -> ResponseTooLong:
        cap = self.response_cap(request)
        how = (
            f"max_response_bytes = {cap} under [providers.{self.name}]"
            if self.max_response_bytes is not None
            else f"{BYTES_PER_TOKEN} bytes per token of the {request.max_tokens}-token output limit"
        )
        return ResponseTooLong(
            f"{self.server} sent more than {_size(cap)} for one response (the cap: {how}), "
            "so Vis stopped reading it and ended the turn; the server may be stuck in a loop. "
            f"If it really needs more, set max_response_bytes = N (bytes; 0 = no cap) under "
            f"[providers.{self.name}] in {self.config_file or 'config.toml'}"
        )

    def malformed(self, fault: str) -> MalformedStream:
        return MalformedStream(f"{self.server} sent a malformed stream: {fault}")

    def unreadable(self, exc: BaseException, stream: Any) -> MalformedStream:
        """The error for an event of ``stream`` that raised ``exc`` while it was read."""
        decoder = getattr(stream, "_decoder", None)
        last = decoder.last if isinstance(decoder, GuardedDecoder) else ""
        at = 0
        if isinstance(exc, json.JSONDecodeError):
            what = exc.msg.removesuffix(" at")
            fault = f"an event that is not valid JSON ({what}, at character {exc.pos})"
            at = exc.pos
        else:
            fault = f"an event Vis cannot read ({type(exc).__name__}: {exc})"
        log.debug("%s: unreadable event %r", self.name, last[:2000], exc_info=exc)
        return self.malformed(f"{fault}: {excerpt(last, around=at)}")

    async def page(self, stream: Any, limit: int = PAGE_HEAD) -> tuple[str, str] | None:
        """The content type and body (its first ``limit`` bytes; 0: all of it) of a 200
        answer that is a page, not an event stream: HTML from a proxy or a wrong base_url, a
        whole JSON answer. None for an event stream, or a server that mislabels one."""
        response = getattr(stream, "response", None)
        if response is None:
            return None
        kind = response.headers.get("content-type", "")
        if not any(page in kind for page in ("html", "json")):
            return None
        head = bytearray()
        try:
            async for chunk in response.aiter_bytes():
                head += chunk
                if limit and len(head) >= limit:  # a page that never ends is not read to its end
                    break
            body = head[: limit or None].decode("utf-8", "replace")
        except Exception as exc:  # the body is only shown: say what it was not
            body = f"(its body could not be read: {type(exc).__name__})"
        return kind.split(";")[0], body

    def not_a_stream(self, kind: str, body: str) -> MalformedStream:
        """The error for a page (:meth:`page`) sent instead of an event stream."""
        return self.malformed(
            f"it answered {kind} instead of an event stream: {excerpt(body)}; "
            f"check base_url under [providers.{self.name}] in "
            f"{self.config_file or 'config.toml'}{self.base_url_note}"
        )

    async def check_stream(self, stream: Any) -> None:
        """Refuse a 200 answer that is a page, not an event stream: an error body is the
        error an ``error`` event in the stream would be (as the SDK raises it); anything else
        is named."""
        page = await self.page(stream)
        if page is None:
            return
        kind, body = page
        failure = whole_error(body) if "json" in kind else None
        if failure is not None:
            raise self.error_page(*failure, stream)
        raise self.not_a_stream(kind, body)

    def error_page(self, message: str, body: dict[str, Any], stream: Any) -> Exception:
        """What the SDK raises for an ``error`` event in ``stream`` saying ``message``
        (``body``: the event), for the same error sent as a 200 page."""
        return self.client._make_status_error(message, body=body, response=stream.response)

    async def discover(self, model: str) -> None:
        """Ask the server about ``model`` (its input limit) before its first request; a
        provider whose server says nothing of itself does nothing."""

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """The response to ``request``, its output limit fitted to the model's known input
        limit (``fit_output``); a server that refuses that limit before answering (the prompt
        is longer than estimated) is asked once more for what its refusal says is left, and
        its count of the prompt scales the estimates of later requests."""
        model = request.model
        await self.discover(model)
        limit = self.known_input_limit(model)
        request = fit_output(request, limit, self._prompt_scale.get(model, 1.0))
        answered = False
        try:
            async for event in self._stream(request):
                answered = True
                yield event
            return
        except OutputLimitTooLarge as exc:
            if answered:
                raise
            log.info("%s: %s; asking again for %d tokens", self.name, exc, exc.room)
            estimate = estimate_tokens(request_chars(request))
            self._prompt_scale[model] = max(exc.input_tokens / max(estimate, 1), 1.0)
            request = replace(request, max_tokens=exc.room)
        async for event in self._stream(request):
            yield event

    async def _stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """``_events(request)`` with its errors mapped (a read that waited ``stall_timeout``
        for a byte is a stall)."""
        events = self._events(request)
        try:
            async for event in events:
                yield event
        except Exception as exc:
            if self.stalled(exc):
                raise self.stall_error() from exc
            mapped = map_error(
                exc,
                provider=self.name,
                key_env=self.key_env,
                config_file=self.config_file,
                sdk=self._sdk_errors(),
                server=self.server,
            )
            if isinstance(mapped, ProviderError):
                self.learn_limit(request.model, mapped)
            if mapped is None or mapped is exc:
                raise
            raise mapped from exc
        finally:
            await events.aclose()

    def _events(self, request: ModelRequest) -> AsyncGenerator[StreamEvent, None]:
        raise NotImplementedError


def _size(count: int) -> str:
    return f"{count / 1048576:.1f} MiB" if count >= 1048576 else f"{count:,} bytes"


def excerpt(data: str, limit: int = 200, around: int = 0) -> str:
    """A short, quoted, escaped piece of what the server sent (a page's words only), from
    about ``around`` (where a fault is) when the whole is too long."""
    data = page_text(data)
    if len(data) <= limit:
        return json.dumps(data)
    start = max(0, min(around - limit // 2, len(data) - limit))
    cut = ("…" if start else "") + data[start : start + limit]
    return json.dumps(cut + ("…" if start + limit < len(data) else ""))


ERROR_BODY_CAP = 1048576  # an error answer's body: a few KiB; an endless one is cut here


def capped_http_client(client_class: Any, server: str) -> Any:
    """An SDK's default HTTP client whose error answers (4xx, 5xx) may hold at most
    ``ERROR_BODY_CAP`` bytes: the SDK reads an error's whole body before it raises, and a
    server that answers an endless one would fill the memory."""
    import httpx2

    class CappedBody(httpx2.AsyncByteStream):
        def __init__(self, inner: Any) -> None:
            self._inner = inner

        async def __aiter__(self) -> AsyncIterator[bytes]:
            seen = 0
            async for chunk in self._inner:
                seen += len(chunk)
                if seen > ERROR_BODY_CAP:
                    raise ResponseTooLong(
                        f"{server} answered an error whose body is longer than "
                        f"{_size(ERROR_BODY_CAP)}, so Vis stopped reading it; the server "
                        "may be stuck in a loop"
                    )
                yield chunk

        async def aclose(self) -> None:
            await self._inner.aclose()

    class CappedTransport(httpx2.AsyncHTTPTransport):
        async def handle_async_request(self, request: Any) -> Any:
            response = await super().handle_async_request(request)
            if response.status_code >= 400:
                response.stream = CappedBody(response.stream)
            return response

    return client_class(transport=CappedTransport(verify=verified_context()))
