"""A local HTTP server that answers as llama.cpp's ``llama-server`` does where Vis meets it.

What it copies, from llama.cpp's ``tools/server`` sources:

* ``GET /props``: ``default_generation_settings`` (``n_ctx``: the context of one slot, and the
  sampling ``params``), ``total_slots``, ``model_alias``, ``model_path``, ``chat_template``,
  ``build_info`` (``engine_properties`` in server-context.cpp).
* ``GET /v1/models``: one entry, ``owned_by: "llamacpp"``, with ``meta`` holding the model's
  training context (``n_ctx_train``), not the served one.
* ``tool_choice`` is read with ``json_value(body, "tool_choice", std::string("auto"))``
  (server-common.cpp): the object form is a type error that is only logged ("Wrong type
  supplied for parameter 'tool_choice'. Expected 'string', using default value: …") and the
  request goes on as ``"auto"``, answered 200.
* A prompt of ``n_ctx`` tokens or more is refused before any answer: HTTP 400
  ``{"error": {"code": 400, "message": "request (N tokens) exceeds the available context size
  (M tokens), try increasing it", "type": "exceed_context_size_error", "n_prompt_tokens": N,
  "n_ctx": M}}``.

Answers to accepted chat requests are queued with ``reply()`` as on a WireServer; ``log``
holds the server's warnings and ``read_tool_choice`` what each chat request's ``tool_choice``
was read as.
"""

from __future__ import annotations

import json
from typing import Any

from .wire_servers import RecordedRequest, WireReply, WireServer

CHARS_PER_TOKEN = 4  # the stand-in tokenizer: a token per four characters of the request


class LlamaServer:
    """A llama-server serving ``alias`` with a context of ``n_ctx`` tokens per slot;
    ``props=False`` leaves ``/props`` out (a server started with it disabled, or behind a
    proxy that forwards ``/v1`` only)."""

    def __init__(self, n_ctx: int = 8192, alias: str = "smol", *, props: bool = True) -> None:
        self.n_ctx = n_ctx
        self.alias = alias
        self.log: list[str] = []
        self.read_tool_choice: list[str] = []
        self.wire = WireServer(checks=self._check)
        if props:
            self.wire.serve("/props", WireReply(body=self.props()))
        self.wire.serve("/v1/models", WireReply(body=self.models()))

    @property
    def base_url(self) -> str:
        return self.wire.openai_base_url

    def props(self) -> dict[str, Any]:
        return {
            "default_generation_settings": {
                "params": {"temperature": 0.8, "top_k": 40, "top_p": 0.95, "n_predict": -1},
                "n_ctx": self.n_ctx,
            },
            "total_slots": 1,
            "model_alias": self.alias,
            "model_path": f"/models/{self.alias}.gguf",
            "modalities": {"vision": False, "audio": False},
            "endpoint_slots": True,
            "endpoint_props": False,
            "endpoint_metrics": False,
            "chat_template": "{% for message in messages %}{{ message.content }}{% endfor %}",
            "bos_token": "<|im_start|>",
            "eos_token": "<|im_end|>",
            "build_info": "b6500-1a2b3c4d",
            "is_sleeping": False,
        }

    def models(self) -> dict[str, Any]:
        meta = {"vocab_type": 2, "n_vocab": 49152, "n_ctx_train": 32768, "n_embd": 576}
        return {
            "models": [{"name": self.alias, "model": self.alias, "type": "model"}],
            "object": "list",
            "data": [
                {
                    "id": self.alias,
                    "object": "model",
                    "created": 1764547200,
                    "owned_by": "llamacpp",
                    "meta": meta,
                }
            ],
        }

    def prompt_tokens(self, body: dict[str, Any]) -> int:
        sent = json.dumps([body.get("messages", []), body.get("tools", [])])
        return len(sent) // CHARS_PER_TOKEN

    def overflow(self, tokens: int) -> WireReply:
        message = (
            f"request ({tokens} tokens) exceeds the available context size "
            f"({self.n_ctx} tokens), try increasing it"
        )
        error = {
            "code": 400,
            "message": message,
            "type": "exceed_context_size_error",
            "n_prompt_tokens": tokens,
            "n_ctx": self.n_ctx,
        }
        return WireReply(status=400, body={"error": error})

    def _check(self, request: RecordedRequest) -> WireReply | None:
        body = request.body if isinstance(request.body, dict) else {}
        if not request.path.endswith("/chat/completions"):
            return None
        choice = body.get("tool_choice", "auto")
        if not isinstance(choice, str):
            self.log.append(
                "Wrong type supplied for parameter 'tool_choice'. Expected 'string', using "
                "default value: [json.exception.type_error.302] type must be string, but is "
                "object"
            )
            choice = "auto"
        self.read_tool_choice.append(choice)
        tokens = self.prompt_tokens(body)
        if tokens >= self.n_ctx:
            return self.overflow(tokens)
        return None

    def reply(self, *replies: WireReply) -> LlamaServer:
        self.wire.reply(*replies)
        return self

    def __enter__(self) -> LlamaServer:
        self.wire.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.wire.close()
