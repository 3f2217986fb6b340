"""A threaded HTTP server on 127.0.0.1 speaking the OpenAI and Anthropic streaming wire formats.

Usage (also from other test packages)::

    with WireServer() as server:
        server.reply(openai_reply(text="hi", usage=(12, 3, 0)))
        provider = OpenAIProvider(api_key="k", base_url=server.openai_base_url)
        ...
        assert server.requests[0].body["messages"][0] == {...}

``reply()`` queues answers; each POST takes the next one. With none left the server
answers 500 and records the request, so a test sees what went unexpected. GET requests
(``/props``, ``/v1/models``: what a provider asks about the server) are answered from
``serve(path, reply)``, else 404 like a server without that route, and recorded in ``gets``.
"""

from __future__ import annotations

import json
import socket
import struct
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


@dataclass(frozen=True)
class WireReply:
    """One answer: an SSE stream (``frames``) or a JSON ``body`` with ``status``.

    ``delay`` waits between frames; ``cut_after`` closes the socket after that many frames
    without ending the stream (a connection reset mid-response). ``empty_stream``: a 200
    event stream that ends at once with no data (llama-cpp-python's answer when the prompt
    does not fit its context). ``stall_after``: after that many frames, send nothing more
    for ``stall`` seconds (a stuck server), then end as told. ``forever``: after the
    frames, send this frame again and again until the client hangs up (an endless stream).
    """

    status: int = 200
    frames: tuple[str | bytes, ...] = ()  # bytes: sent as they are (half a character, say)
    body: Any = None
    headers: tuple[tuple[str, str], ...] = ()
    delay: float = 0.0
    cut_after: int | None = None
    empty_stream: bool = False
    stall_after: int | None = None
    stall: float = 0.0
    forever: str | None = None
    raw: bool = False  # ``body`` is text sent as it is (an HTML page), typed by ``headers``
    reset: bool = False  # ``cut_after`` resets the connection (RST) rather than closing it


@dataclass(frozen=True)
class WireToolCall:
    id: str
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_GET(self) -> None:
        wire = self.server.wire
        with wire._lock:
            wire.gets.append(self.path)
            reply = wire._static.get(self.path)
        reply = reply or WireReply(status=404, body={"error": "Not Found"})
        if reply.forever:
            self._send_stream(reply)
        else:
            self._send_json(reply)

    def do_POST(self) -> None:
        self._handle()

    def _handle(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", "replace")
        wire = self.server.wire
        reply = wire._take(
            RecordedRequest(
                self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body
            )
        )
        if reply.frames or reply.empty_stream or reply.forever:
            self._send_stream(reply)
        else:
            self._send_json(reply)

    def _send_json(self, reply: WireReply) -> None:
        if reply.raw:
            data = str(reply.body).encode()
        else:
            data = json.dumps(reply.body if reply.body is not None else {}).encode()
        self.send_response(reply.status)
        if not reply.raw:
            self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for key, value in reply.headers:
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def _send_stream(self, reply: WireReply) -> None:
        self.send_response(reply.status)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        for key, value in reply.headers:
            self.send_header(key, value)
        self.end_headers()
        for index, frame in enumerate(reply.frames):
            if reply.cut_after is not None and index >= reply.cut_after:
                self.wfile.flush()
                self.close_connection = True
                if reply.reset:  # closed with no lingering: the peer reads a reset
                    linger = struct.pack("ii", 1, 0)
                    self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, linger)
                    self.server.resets.add(self.connection)
                else:
                    self.connection.shutdown(socket.SHUT_RDWR)
                return
            if index and reply.delay:
                time.sleep(reply.delay)
            if reply.stall_after is not None and index == reply.stall_after:
                wire = self.server.wire
                wire._closing.wait(reply.stall)  # a closing server ends its stalls
                with wire._lock:
                    wire.stalls_ended += 1
            data = frame if isinstance(frame, bytes) else frame.encode()
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()
        if reply.forever is not None:
            data = reply.forever.encode()
            while True:  # until the client hangs up (a ConnectionError ends the handler)
                self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                self.wfile.flush()
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    wire: WireServer

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.resets: set[socket.socket] = set()  # connections to close with a reset

    def shutdown_request(self, request: Any) -> None:
        """A connection to reset is closed without the orderly end (FIN) first."""
        if request in self.resets:
            self.resets.discard(request)
            self.close_request(request)
        else:
            super().shutdown_request(request)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hangs up mid-stream (a cancelled turn) is expected, not an error."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class WireServer:
    """A real HTTP server on an ephemeral 127.0.0.1 port that replays queued replies."""

    def __init__(self, checks: Callable[[RecordedRequest], WireReply | None] | None = None) -> None:
        self._checks = checks  # a real server's validation: a reply here answers instead
        self._replies: deque[WireReply] = deque()
        self._lock = threading.Lock()
        self.requests: list[RecordedRequest] = []
        self.gets: list[str] = []
        self._static: dict[str, WireReply] = {}
        self._closing = threading.Event()
        self.stalls_ended = 0  # stalled replies that went on sending (their stall was over)
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.wire = self
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def openai_base_url(self) -> str:
        return f"{self.url}/v1"

    @property
    def anthropic_base_url(self) -> str:
        return self.url

    def reply(self, *replies: WireReply) -> WireServer:
        with self._lock:
            self._replies.extend(replies)
        return self

    def serve(self, path: str, reply: WireReply) -> WireServer:
        """Answer every GET of ``path`` (e.g. ``/props``) with ``reply``."""
        with self._lock:
            self._static[path] = reply
        return self

    @property
    def bodies(self) -> list[Any]:
        return [r.body for r in self.requests]

    def _take(self, request: RecordedRequest) -> WireReply:
        with self._lock:
            self.requests.append(request)
            rejected = self._checks(request) if self._checks is not None else None
            if rejected is not None:
                return rejected
            if self._replies:
                return self._replies.popleft()
        return WireReply(
            status=500,
            body={"error": {"type": "api_error", "message": "wire server: no reply queued"}},
        )

    def start(self) -> WireServer:
        self._thread.start()
        return self

    def close(self) -> None:
        self._closing.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> WireServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()


def _pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or []


# --- OpenAI Chat Completions -------------------------------------------------------------


def openai_frames(chunks: Iterable[dict[str, Any]], *, done: bool = True) -> tuple[str, ...]:
    frames = tuple(f"data: {json.dumps(c)}\n\n" for c in chunks)
    return (*frames, "data: [DONE]\n\n") if done else frames


def openai_reply(
    text: str = "",
    tool_calls: Sequence[WireToolCall] = (),
    *,
    usage: tuple[int, int, int] | None = (10, 5, 0),
    model: str = "gpt-test",
    piece: int = 7,
    finish_reason: str | None = None,
    delay: float = 0.0,
    cut_after: int | None = None,
    reasoning: str = "",
    reasoning_field: str = "reasoning_content",
    repeat_name: bool = False,
    raw_arguments: Sequence[str] | None = None,
    unfinished: bool = False,
) -> WireReply:
    """A streamed completion: ``reasoning`` (in ``reasoning_field`` deltas), ``text`` in
    pieces, tool calls with arguments streamed in pieces, then (``usage`` = prompt,
    completion, cached tokens) a usage-only chunk.

    Quirks of real servers: ``repeat_name`` sends the id, type and name again in every
    argument chunk (llama.cpp, some vLLM parsers); ``raw_arguments`` streams these strings
    as the calls' arguments as they are (e.g. with literal newlines inside JSON strings, as
    grammar-constrained servers do); ``unfinished`` closes the stream after the content
    with no finish_reason, no usage and no ``[DONE]`` (a server failing after its 200)."""
    base = {"id": "chatcmpl-wire", "object": "chat.completion.chunk", "created": 1, "model": model}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        return {**base, "choices": [choice]}

    chunks = [chunk({"role": "assistant", "content": ""})]
    chunks += [chunk({reasoning_field: p}) for p in _pieces(reasoning, piece)]
    chunks += [chunk({"content": p}) for p in _pieces(text, piece)]
    for index, call in enumerate(tool_calls):
        head = {"index": index, "id": call.id, "type": "function"}
        chunks.append(
            chunk({"tool_calls": [{**head, "function": {"name": call.name, "arguments": ""}}]})
        )
        arguments = json.dumps(call.arguments) if raw_arguments is None else raw_arguments[index]
        for p in _pieces(arguments, piece):
            part: dict[str, Any] = {"index": index, "function": {"arguments": p}}
            if repeat_name:
                part = {**head, "function": {"name": call.name, "arguments": p}}
            chunks.append(chunk({"tool_calls": [part]}))
    if unfinished:
        return WireReply(frames=openai_frames(chunks, done=False), delay=delay)
    finish = finish_reason or ("tool_calls" if tool_calls else "stop")
    chunks.append(chunk({}, finish))
    if usage is not None:
        prompt, completion, cached = usage
        chunks.append(
            {
                **base,
                "choices": [],
                "usage": {
                    "prompt_tokens": prompt,
                    "completion_tokens": completion,
                    "total_tokens": prompt + completion,
                    "prompt_tokens_details": {"cached_tokens": cached},
                },
            }
        )
    return WireReply(frames=openai_frames(chunks), delay=delay, cut_after=cut_after)


def openai_error(
    status: int, message: str, type_: str = "server_error", code: str | None = None
) -> WireReply:
    return WireReply(
        status=status, body={"error": {"message": message, "type": type_, "code": code}}
    )


def llama_cpp_python_checks(request: RecordedRequest) -> WireReply | None:
    """What llama-cpp-python 0.3's server does with a chat request before answering: an
    assistant message with ``content: null`` crashes its chat template (HTTP 500), one
    without the key crashes it too. None: the request passes."""
    body = request.body if isinstance(request.body, dict) else {}
    for message in body.get("messages", ()):
        if message.get("role") == "assistant" and message.get("content", None) is None:
            return openai_error(
                500,
                'TypeError: can only concatenate str (not "NoneType") to str',
                "internal_server_error",
            )
    return None


def deepseek_thinking_checks(request: RecordedRequest) -> WireReply | None:
    """What DeepSeek's thinking mode does with a request: an assistant message that made tool
    calls must carry its ``reasoning_content`` (HTTP 400 otherwise, in DeepSeek's words)."""
    body = request.body if isinstance(request.body, dict) else {}
    for index, message in enumerate(body.get("messages", ())):
        if message.get("tool_calls") and "reasoning_content" not in message:
            return openai_error(
                400,
                f"Missing `reasoning_content` field in the assistant message at message index "
                f"{index}. For more information, please refer to "
                "https://api-docs.deepseek.com/guides/thinking_mode#tool-calls",
                "invalid_request_error",
                "invalid_request_error",
            )
    return None


# The fields of a Chat Completions message that api.openai.com (and Groq, Mistral) accept.
_MESSAGE_FIELDS = frozenset({"role", "content", "name", "tool_calls", "tool_call_id", "refusal"})


def strict_message_checks(request: RecordedRequest) -> WireReply | None:
    """What api.openai.com does with a message field it does not know: HTTP 400."""
    body = request.body if isinstance(request.body, dict) else {}
    for index, message in enumerate(body.get("messages", ())):
        for name in set(message) - _MESSAGE_FIELDS:
            return openai_error(
                400,
                f"Additional properties are not allowed ('{name}' was unexpected) - "
                f"'messages.{index}'",
                "invalid_request_error",
            )
    return None


# --- Anthropic Messages ------------------------------------------------------------------


def anthropic_frames(events: Iterable[dict[str, Any]]) -> tuple[str, ...]:
    return tuple(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)


def anthropic_reply(
    text: str = "",
    tool_calls: Sequence[WireToolCall] = (),
    *,
    usage: tuple[int, int, int, int] = (10, 5, 0, 0),
    model: str = "claude-test",
    piece: int = 7,
    stop_reason: str | None = None,
    delay: float = 0.0,
    cut_after: int | None = None,
    error_event: tuple[str, str] | None = None,
    thinking: str = "",
    signature: str = "sig-wire",
    redacted: str = "",
) -> WireReply:
    """A streamed message: a text block, tool_use blocks with ``input_json_delta`` pieces;
    ``usage`` = input, output, cache read, cache creation tokens. ``error_event`` =
    (type, message) ends the stream with an SSE ``error`` event after the text.
    ``thinking`` comes first as a thinking block (``thinking_delta`` pieces, then a
    ``signature_delta``); ``redacted`` adds a redacted_thinking block after it."""
    inp, out, cache_read, cache_write = usage
    start_usage = {
        "input_tokens": inp,
        "output_tokens": 1,
        "cache_read_input_tokens": cache_read,
        "cache_creation_input_tokens": cache_write,
    }
    message = {
        "id": "msg_wire",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": start_usage,
    }
    events: list[dict[str, Any]] = [{"type": "message_start", "message": message}, {"type": "ping"}]
    index = 0
    if thinking:
        start = {"type": "thinking", "thinking": "", "signature": ""}
        events.append({"type": "content_block_start", "index": index, "content_block": start})
        for p in _pieces(thinking, piece):
            delta = {"type": "thinking_delta", "thinking": p}
            events.append({"type": "content_block_delta", "index": index, "delta": delta})
        delta = {"type": "signature_delta", "signature": signature}
        events.append({"type": "content_block_delta", "index": index, "delta": delta})
        events.append({"type": "content_block_stop", "index": index})
        index += 1
    if redacted:
        block = {"type": "redacted_thinking", "data": redacted}
        events.append({"type": "content_block_start", "index": index, "content_block": block})
        events.append({"type": "content_block_stop", "index": index})
        index += 1
    if text:
        events.append(
            {
                "type": "content_block_start",
                "index": index,
                "content_block": {"type": "text", "text": ""},
            }
        )
        for p in _pieces(text, piece):
            events.append(
                {
                    "type": "content_block_delta",
                    "index": index,
                    "delta": {"type": "text_delta", "text": p},
                }
            )
        events.append({"type": "content_block_stop", "index": index})
        index += 1
    if error_event is not None:
        kind, msg = error_event
        events.append({"type": "error", "error": {"type": kind, "message": msg}})
        return WireReply(frames=anthropic_frames(events), delay=delay, cut_after=cut_after)
    for call in tool_calls:
        block = {"type": "tool_use", "id": call.id, "name": call.name, "input": {}}
        events.append({"type": "content_block_start", "index": index, "content_block": block})
        for p in _pieces(json.dumps(call.arguments), piece):
            delta = {"type": "input_json_delta", "partial_json": p}
            events.append({"type": "content_block_delta", "index": index, "delta": delta})
        events.append({"type": "content_block_stop", "index": index})
        index += 1
    stop = stop_reason or ("tool_use" if tool_calls else "end_turn")
    events.append(
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop, "stop_sequence": None},
            "usage": {"output_tokens": out},
        }
    )
    events.append({"type": "message_stop"})
    return WireReply(frames=anthropic_frames(events), delay=delay, cut_after=cut_after)


def anthropic_error(status: int, message: str, type_: str = "api_error") -> WireReply:
    return WireReply(
        status=status, body={"type": "error", "error": {"type": type_, "message": message}}
    )


# --- OpenAI Responses --------------------------------------------------------------------


def openai_responses_reply(
    text: str = "",
    tool_calls: Sequence[WireToolCall] = (),
    *,
    reasoning: str = "",
    encrypted: str = "enc-wire",
    usage: tuple[int, int, int] = (10, 5, 0),
    incomplete: str | None = None,
    piece: int = 7,
) -> WireReply:
    """A streamed Responses API answer: a reasoning item (summary deltas, then the item with
    its ``encrypted_content``), text deltas, function_call items; ``response.completed``, or
    ``response.incomplete`` with ``incomplete`` as the reason. ``usage`` = input, output,
    cached tokens."""
    events: list[dict[str, Any]] = []
    response = {"id": "resp_wire", "object": "response", "status": "in_progress", "output": []}
    events.append({"type": "response.created", "response": response})
    if reasoning:
        for p in _pieces(reasoning, piece):
            events.append(
                {"type": "response.reasoning_summary_text.delta", "item_id": "rs_1", "delta": p}
            )
        item = {
            "type": "reasoning",
            "id": "rs_1",
            "summary": [{"type": "summary_text", "text": reasoning}],
            "encrypted_content": encrypted,
        }
        events.append({"type": "response.output_item.done", "output_index": 0, "item": item})
    for p in _pieces(text, piece):
        events.append({"type": "response.output_text.delta", "item_id": "msg_1", "delta": p})
    for index, call in enumerate(tool_calls):
        item = {
            "type": "function_call",
            "id": f"fc_{index}",
            "call_id": call.id,
            "name": call.name,
            "arguments": "",
            "status": "in_progress",
        }  # announced first, as the API does, then done with its arguments
        events.append({"type": "response.output_item.added", "output_index": 1, "item": item})
        item = {**item, "arguments": json.dumps(call.arguments), "status": "completed"}
        events.append({"type": "response.output_item.done", "output_index": 1, "item": item})
    inp, out, cached = usage
    final = {
        **response,
        "status": "incomplete" if incomplete else "completed",
        "usage": {
            "input_tokens": inp,
            "output_tokens": out,
            "total_tokens": inp + out,
            "input_tokens_details": {"cached_tokens": cached},
            "output_tokens_details": {"reasoning_tokens": 0},
        },
        "incomplete_details": {"reason": incomplete} if incomplete else None,
    }
    kind = "response.incomplete" if incomplete else "response.completed"
    events.append({"type": kind, "response": final})
    for number, event in enumerate(events):
        event["sequence_number"] = number
    return WireReply(frames=tuple(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events))
