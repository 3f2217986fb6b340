"""A local HTTP server that answers as vLLM's OpenAI-compatible server does where Vis meets it.

What it copies, from vLLM's ``entrypoints/openai`` sources:

* ``GET /v1/models``: one entry with ``max_model_len``, the context of the served model
  (``models=False`` leaves it out: a proxy that forwards chat requests only).
* A chat request whose prompt and output limit (``max_tokens`` or ``max_completion_tokens``)
  together exceed ``max_model_len`` is refused before any answer with HTTP 400
  (``_validate_input`` in serving_engine.py), in the words of the release ``wording`` names:
  ``"old"`` (≤ 0.9: "However, you requested N tokens (P in the messages, M in the completion)",
  a flat body) or ``"new"`` ("'max_tokens' or 'max_completion_tokens' is too large: M. …
  your request has P input tokens", under ``error``). A prompt of ``max_model_len`` tokens or
  more is refused in the same release's words for a prompt too long.

Answers to accepted chat requests are queued with ``reply()`` as on a WireServer.
"""

from __future__ import annotations

import json
from typing import Any

from .wire_servers import RecordedRequest, WireReply, WireServer

CHARS_PER_TOKEN = 4  # the stand-in tokenizer: a token per four characters of the request


class VllmServer:
    """vLLM serving ``model`` with a context of ``max_model_len`` tokens."""

    def __init__(
        self,
        max_model_len: int = 8192,
        model: str = "qwen",
        *,
        wording: str = "old",
        models: bool = True,
    ) -> None:
        self.max_model_len = max_model_len
        self.model = model
        self.wording = wording
        self.wire = WireServer(checks=self._check)
        if models:
            self.wire.serve("/v1/models", WireReply(body=self.models()))

    @property
    def base_url(self) -> str:
        return self.wire.openai_base_url

    @property
    def asked_output(self) -> list[int]:
        """The output limit each chat request asked for."""
        return [
            body.get("max_tokens") or body.get("max_completion_tokens") or 0
            for body in self.wire.bodies
        ]

    def models(self) -> dict[str, Any]:
        entry = {
            "id": self.model,
            "object": "model",
            "created": 1764547200,
            "owned_by": "vllm",
            "root": f"/models/{self.model}",
            "parent": None,
            "max_model_len": self.max_model_len,
        }
        return {"object": "list", "data": [entry]}

    def prompt_tokens(self, body: dict[str, Any]) -> int:
        sent = json.dumps([body.get("messages", []), body.get("tools", [])])
        return len(sent) // CHARS_PER_TOKEN

    def refusal(self, prompt: int, output: int) -> WireReply:
        context = self.max_model_len
        if self.wording == "old":
            if prompt >= context:
                message = (
                    f"This model's maximum context length is {context} tokens. However, you "
                    f"requested {prompt} tokens in the messages, Please reduce the length of "
                    "the messages."
                )
            else:
                message = (
                    f"This model's maximum context length is {context} tokens. However, you "
                    f"requested {prompt + output} tokens ({prompt} in the messages, {output} "
                    "in the completion). Please reduce the length of the messages or completion."
                )
            body = {"object": "error", "message": message, "type": "BadRequestError"}
            return WireReply(status=400, body={**body, "param": None, "code": 400})
        if prompt >= context:
            message = (
                f"This model's maximum context length is {context} tokens. However, your "
                f"request has {prompt} input tokens. Please reduce the length of the input "
                "messages."
            )
        else:
            message = (
                f"'max_tokens' or 'max_completion_tokens' is too large: {output}. This model's "
                f"maximum context length is {context} tokens and your request has {prompt} "
                f"input tokens ({output} > {context} - {prompt})."
            )
        error = {"message": message, "type": "BadRequestError", "param": None, "code": 400}
        return WireReply(status=400, body={"error": error})

    def _check(self, request: RecordedRequest) -> WireReply | None:
        body = request.body if isinstance(request.body, dict) else {}
        if not request.path.endswith("/chat/completions"):
            return None
        prompt = self.prompt_tokens(body)
        output = body.get("max_tokens") or body.get("max_completion_tokens") or 0
        if prompt >= self.max_model_len or prompt + output > self.max_model_len:
            return self.refusal(prompt, output)
        return None

    def reply(self, *replies: WireReply) -> VllmServer:
        self.wire.reply(*replies)
        return self

    def __enter__(self) -> VllmServer:
        self.wire.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.wire.close()
