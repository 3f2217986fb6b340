"""The OpenAI provider: Chat Completions streaming, also for any OpenAI-compatible base URL."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from vis_core.model.conversation import (
    ImagePart,
    Message,
    ResponseDone,
    StopReason,
    ToolCallReady,
    UsageUpdate,
)
from vis_core.model.usage import Usage
from vis_core.providers.base import ContextOverflowError, ModelRequest, StreamEvent
from vis_core.providers.common import (
    OPENAI_KEY_ENV,
    OPENAI_MARK,
    estimate_tokens,
    estimated_usage,
    request_chars,
    tool_choice_of,
)
from vis_core.providers.errors import UnfinishedResponse
from vis_core.providers.openai_answer import (
    REASONING_CONTENT,
    AnswerReader,
    text_or_none,
    whole_answer,
)
from vis_core.providers.openai_form import RequestForm, fallback
from vis_core.providers.openai_responses import response_events, usage_of, wants_responses
from vis_core.providers.sdk_provider import (
    READ_FAULTS,
    GuardedDecoder,
    SdkProvider,
    excerpt,
    whole_error,
)
from vis_core.providers.server_limits import discover_server
from vis_core.system.programs import settle_processor

log = logging.getLogger(__name__)

_STOP_REASONS = {
    "stop": StopReason.END_TURN,
    "tool_calls": StopReason.TOOL_USE,
    "function_call": StopReason.TOOL_USE,
    "length": StopReason.MAX_TOKENS,
    "content_filter": StopReason.REFUSAL,
}


def reasoning_mark(provider: str) -> str:
    """The signature of reasoning that ``provider``'s server streamed in ``reasoning_content``.

    Such reasoning goes back in that field on the assistant messages that made tool calls:
    DeepSeek's thinking mode refuses a request without it there ("Missing reasoning_content
    field in the assistant message at message index N"), and vLLM, SGLang and llama.cpp,
    which stream the field, read it too. It goes back to that provider only: api.openai.com,
    Groq and Mistral refuse a message field they do not know, so a session that moves to
    another server sends what it always did.
    """
    return f"{OPENAI_MARK}{REASONING_CONTENT}:{provider}"


# A chunk whose choice finished: a string ``finish_reason`` (escaped quotes inside the answer's
# text cannot match).
_FINISHED = re.compile(r'"finish_reason"\s*:\s*"')


def image_url_part(image: ImagePart) -> dict[str, Any]:
    url = f"data:{image.media_type};base64,{image.data}"
    return {"type": "image_url", "image_url": {"url": url}}


def shown_images_message(messages: list[Message]) -> dict[str, Any]:
    """The user message that carries the images of tool results (a tool message holds text)."""
    content: list[dict[str, Any]] = []
    for message in messages:
        content.append(
            {"type": "text", "text": f"Images shown by tool call {message.tool_call_id}:"}
        )
        content.extend(image_url_part(image) for image in message.images)
    return {"role": "user", "content": content}


def to_openai_messages(
    messages: tuple[Message, ...] | list[Message], *, reasoning_from: str = ""
) -> list[dict[str, Any]]:
    """Neutral messages → Chat Completions messages; the images of a run of tool results follow
    it as one user message, since every tool call must be answered before anything else.

    ``reasoning_from``: the :func:`reasoning_mark` of the server asked. When any message holds
    reasoning it marked, every assistant message with tool calls carries ``reasoning_content``
    (empty for one without such reasoning: DeepSeek wants the field on each of them).
    """
    if not any(p.signature == reasoning_from for m in messages for p in m.thinking):
        reasoning_from = ""
    wire: list[dict[str, Any]] = []
    with_images: list[Message] = []
    for message in messages:
        if message.role != "tool" and with_images:
            wire.append(shown_images_message(with_images))
            with_images = []
        wire.append(to_openai_message(message, reasoning_from=reasoning_from))
        if message.role == "tool" and message.images:
            with_images.append(message)
    if with_images:
        wire.append(shown_images_message(with_images))
    return wire


def to_openai_message(message: Message, *, reasoning_from: str = "") -> dict[str, Any]:
    """One message; an assistant message with tool calls carries the reasoning marked
    ``reasoning_from`` as ``reasoning_content`` (none without ``reasoning_from``)."""
    if message.role == "tool":
        text = f"Error: {message.text}" if message.is_error else message.text
        return {"role": "tool", "tool_call_id": message.tool_call_id, "content": text}
    if message.role == "assistant":
        # "" and never null: llama.cpp answers 500 to ``content: null`` beside tool_calls,
        # and its chat templates crash when the key is missing.
        wire: dict[str, Any] = {"role": "assistant", "content": message.text}
        if message.tool_calls:
            wire["tool_calls"] = [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {
                        "name": call.name,
                        "arguments": json.dumps(call.arguments, ensure_ascii=False),
                    },
                }
                for call in message.tool_calls
            ]
            if reasoning_from:
                wire[REASONING_CONTENT] = "".join(
                    p.text for p in message.thinking if p.signature == reasoning_from
                )
        return wire
    if message.images:
        parts: list[dict[str, Any]] = [{"type": "text", "text": message.text}]
        parts.extend(image_url_part(image) for image in message.images)
        return {"role": "user", "content": parts}
    return {"role": "user", "content": message.text}


def tool_choice_param(choice: str, request: ModelRequest, *, strings_only: bool = False) -> Any:
    """The Chat Completions ``tool_choice`` for the ``tool_choice`` model option, as
    :func:`~vis_core.providers.common.tool_choice_of` settles it.

    A named tool that is the only one declared is sent as ``"required"`` (the same choice, in
    the form every server reads), and so is any named tool when ``strings_only``: llama.cpp's
    server reads only a string there and takes the object form for ``"auto"``.
    """
    choice = tool_choice_of(choice, request)
    if choice in ("auto", "none", "required"):
        return choice
    if strings_only or {t.name for t in request.tools} == {choice}:
        return "required"
    return {"type": "function", "function": {"name": choice}}


def build_openai_params(
    request: ModelRequest,
    form: RequestForm | None = None,
    options: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The ``chat.completions.create`` keyword arguments for ``request``, in the ``form`` the
    server reads; ``options`` are the model's ``reasoning_effort`` and ``tool_choice``."""
    form = form or RequestForm()
    options = options or {}
    messages: list[dict[str, Any]] = []
    if request.system:
        messages.append({"role": "system", "content": request.system})
    messages.extend(to_openai_messages(request.messages, reasoning_from=form.reasoning_from))
    params: dict[str, Any] = {
        "model": request.model,
        "messages": messages,
        "stream": True,
        form.limit_field: request.max_tokens,
    }
    if form.stream_usage:
        params["stream_options"] = {"include_usage": True}
    if request.tools:
        params["tools"] = [
            {
                "type": "function",
                "function": {
                    "name": t.name,
                    "description": t.description,
                    "parameters": t.parameters,
                },
            }
            for t in request.tools
        ]
        if options.get("tool_choice"):
            params["tool_choice"] = tool_choice_param(
                options["tool_choice"], request, strings_only=form.strings_only
            )
    if options.get("reasoning_effort"):
        params["reasoning_effort"] = options["reasoning_effort"]
    return params


class _DoneSpy(GuardedDecoder):
    """Wraps the SDK's SSE decoder to see whether the stream ended with ``data: [DONE]``
    (the SDK stops there silently, exactly as when the server just closes), and whether a
    chunk gave a ``finish_reason`` (the answer is complete)."""

    def __init__(self, inner: Any) -> None:
        super().__init__(inner)
        self.done = False

    def seen(self, sse: Any) -> None:
        self.done = self.done or sse.data.startswith("[DONE]")
        self.finished = self.finished or self.done or bool(_FINISHED.search(sse.data))


class OpenAIProvider(SdkProvider):
    """Streams Chat Completions through the official ``openai`` SDK (no SDK retries); OpenAI's
    own reasoning models (or ``api = "responses"``) go through the Responses API instead.

    Usage.input is the uncached part of ``prompt_tokens``; ``cache_read`` is
    ``prompt_tokens_details.cached_tokens``. A server that reports no usage gets an estimate.
    A stream that closes without a ``finish_reason`` and without ``[DONE]`` is an error.
    """

    default_name = "openai"
    default_key_env = OPENAI_KEY_ENV
    default_url = "https://api.openai.com/v1"
    base_url_note = " (an OpenAI-compatible server's ends in /v1)"
    decoder = _DoneSpy

    def __init__(self, **options: Any) -> None:
        """The options of :class:`SdkProvider`."""
        super().__init__(**options)
        base_url = self.base_url
        self.official = base_url is None or "api.openai.com" in base_url
        # the reasoning this server streams in ``reasoning_content`` goes back (not to OpenAI's
        # own, which never streams it and refuses it back)
        self.reasoning_mark = "" if self.official else reasoning_mark(self.name)
        self.form = RequestForm(completion_tokens=self.official, reasoning_from=self.reasoning_mark)
        self._asked_server: set[str] = set()

    def _sdk(self) -> tuple[Any, type[Any], type[BaseException]]:
        import openai

        settle_processor((Path.cwd(),))  # the SDK's first request asks platform.platform()
        return openai, openai.AsyncOpenAI, openai.OpenAIError

    async def discover(self, model: str) -> None:
        """Once per model: the input limit a local or compatible server reports, and whether
        it is llama.cpp's server."""
        if self.official or model in self._asked_server or self.base_url is None:
            return
        self._asked_server.add(model)
        facts = await discover_server(self.base_url, model, api_key=self._api_key)
        if facts.input_limit:
            self._server_limits[model] = facts.input_limit
        if facts.llama_cpp:
            self.form = replace(self.form, strings_only=True)

    async def _create(self, request: ModelRequest, options: Mapping[str, str]) -> Any:
        """Start the stream. A server that refuses a field (it names it in its error answer)
        is asked again without it, or with it in the form it reads (:func:`fallback`), each
        field changed once; its form is kept for the rest of the session, and the log says
        what changed."""
        changed: set[str] = set()
        while True:
            params = build_openai_params(request, self.form, options)
            try:
                return await self.client.chat.completions.create(**params)
            except self._sdk_errors().status as exc:
                found = fallback(exc, params, self.form)
                if found is None or found.field in changed:
                    raise
                log.warning("%s refused %s", self.server, found.change)
                changed.add(found.field)
                self.form = found.form

    def unfinished(self, request: ModelRequest, answered_chars: int) -> Exception:
        """The error for a stream that closed without saying it was finished."""
        estimate = estimate_tokens(request_chars(request))
        limit = self.model_info(request.model).input_limit
        if not answered_chars and estimate > limit:
            return ContextOverflowError(
                f"{self.name} ended the response before any answer, and the request (about "
                f"{estimate} tokens) is longer than the model's input limit ({limit}): the "
                f"server at {self.url} most likely refused it as too long; its log says so",
                status=None,
                input_tokens=estimate,
                limit=limit,
            )  # refused unread: it cost nothing (its size is still recorded as rejected)
        got = f"after {answered_chars} characters" if answered_chars else "before any answer"
        return UnfinishedResponse(
            f"{self.name}: the response ended unfinished ({got}): the server at {self.url} "
            "closed the stream without a finish_reason or [DONE], so it failed after it "
            "started answering (llama.cpp servers do this when the request exceeds their "
            "context size, n_ctx, or when they crash); the server's log says why",
            usage=estimated_usage(request, answered_chars),
        )

    async def _whole(self, kind: str, body: str, spy: Any, stream: Any) -> AsyncIterator[Any]:
        """A page sent instead of a stream: a whole ``chat.completion`` (the server ignored
        ``stream: true``) is read as the one chunk that would stream it; an error body is
        the error an error event in the stream would be; anything else is refused, naming
        what came."""
        failure = whole_error(body) if "json" in kind else None
        if failure is not None:
            raise self.error_page(*failure, stream)
        chunk = whole_answer(body) if "json" in kind else None
        if chunk is None:
            raise self.not_a_stream(kind, body)
        if isinstance(spy, GuardedDecoder):
            spy.last = body  # what an error reading it quotes
        sdk, _, _ = self._sdk()
        yield sdk.types.chat.ChatCompletionChunk.construct(**chunk)

    def error_page(self, message: str, body: dict[str, Any], stream: Any) -> Exception:
        """The SDK's error for an error event in a Chat Completions or Responses stream."""
        sdk, _, _ = self._sdk()
        return sdk.APIError(message, stream.response.request, body=body["error"])

    async def _ready(self, stream: Any, request: ModelRequest) -> None:
        """A Responses stream made: capped, and refused when it is a page."""
        self.meter(stream, request)
        await self.check_stream(stream)

    async def _events(self, request: ModelRequest) -> AsyncGenerator[StreamEvent, None]:
        options = self.model_options(request.model)
        if wants_responses(request.model, official=self.official, api=options.get("api")):
            try:
                async for event in response_events(
                    self.client,
                    request,
                    provider=self.name,
                    options=options,
                    ready=lambda stream: self._ready(stream, request),
                ):
                    yield event
            except READ_FAULTS as exc:
                raise self.unreadable(exc, None) from exc
            return
        usage: Usage | None = None
        finish: str | None = None
        answer = AnswerReader(self.reasoning_mark)
        stream = await self._create(request, options)
        self.meter(stream, request)
        spy = getattr(stream, "_decoder", None)
        bare = ""  # the first chunk without choices (and without usage): not the wire format
        try:
            async with stream:
                page = await self.page(stream, self.response_cap(request))
                chunks = stream if page is None else self._whole(*page, spy, stream)
                async for chunk in chunks:
                    if chunk.usage is not None:
                        usage = usage_of(chunk.usage, "prompt_tokens", "completion_tokens")
                    elif getattr(chunk, "choices", None) is None and not bare:
                        bare = spy.last if isinstance(spy, _DoneSpy) else "?"
                    for choice in chunk.choices or ():
                        if choice.delta is not None:
                            for event in answer.read(choice.delta):
                                yield event
                        if choice.finish_reason:
                            finish = text_or_none(choice.finish_reason, "finish_reason")
        except READ_FAULTS as exc:
            raise self.unreadable(exc, stream) from exc
        finally:
            if isinstance(spy, _DoneSpy):
                await spy.aclose()
        if bare and finish is None and not answer.chars:
            raise self.malformed(
                f"no event held choices (where the answer goes), e.g. {excerpt(bare)}"
            )
        saw_done = getattr(spy, "done", False)
        if finish is None and not saw_done:
            raise self.unfinished(request, answer.chars)
        for event in answer.end():
            yield event
        stop = _STOP_REASONS.get(finish or "stop", finish or StopReason.END_TURN)
        calls = answer.calls.ready(cut=stop == StopReason.MAX_TOKENS)
        for call in calls:
            yield ToolCallReady(call)
        yield UsageUpdate(usage if usage is not None else estimated_usage(request, answer.chars))
        if calls and stop == StopReason.END_TURN:
            stop = StopReason.TOOL_USE  # some compatible servers say "stop" after a tool call
        yield ResponseDone(stop)
