"""The ``scripted`` provider: replays a YAML/JSON script of responses in place of a model.

Beyond the keys of ``scripted-provider.md``, a response may hold ``thinking: "..."``: the
model's reasoning, streamed (in ``chunk``-sized pieces) before the response's text.

Like a real model, the provider refuses a request longer than the model's configured
``[models."scripted/<model>"] input_limit`` (its estimated input, characters / 4): it fails
with a context-overflow error ("prompt is too long: N tokens > LIMIT maximum") and uses no
response, so the next request that fits gets it. An ``error`` response whose message says the
prompt is too long fails the same way. ``requests`` keeps every request the provider received
(with the images it carried).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vis_core.model.block import PYTHON_EXECUTION
from vis_core.model.conversation import (
    ResponseDone,
    TextDelta,
    ThinkingDelta,
    ToolCall,
    ToolCallReady,
    ToolCallStarted,
    UsageUpdate,
)
from vis_core.model.usage import Usage
from vis_core.providers.base import (
    ModelInfo,
    ModelRequest,
    ProviderConfigError,
    ProviderError,
    StreamEvent,
)
from vis_core.providers.common import (
    estimate_tokens,
    estimated_usage,
    is_retryable_status,
    overflow_error,
    request_chars,
)
from vis_core.providers.models import lookup_model

DEFAULT_CHUNK = 16
_KEYS = frozenset({"text", "code", "tool", "usage", "chunk", "delay_ms", "error", "thinking"})
_USAGE_KEYS = frozenset({"input", "output", "cache_read", "cache_write"})


class ScriptError(ProviderConfigError):
    """A script file that cannot be read or does not follow the script format."""


@dataclass(frozen=True)
class ScriptedError:
    """A provider error the script asks for."""

    status: int
    message: str


@dataclass(frozen=True)
class ScriptedResponse:
    """One validated response of a script."""

    text: str = ""
    code: str | None = None
    tool: ToolCall | None = None
    usage: Usage | None = None
    chunk: int = DEFAULT_CHUNK
    delay_ms: int = 0
    error: ScriptedError | None = None
    thinking: str = ""


def _nonneg_int(value: Any, what: str, where: str, *, minimum: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ScriptError(f"{where}: {what} must be an integer >= {minimum}, not {value!r}")
    return value


def _parse_response(raw: Any, index: int, path: Path, call_id: str) -> ScriptedResponse:
    where = f"{path}: response {index + 1}"
    if not isinstance(raw, Mapping):
        raise ScriptError(f"{where}: expected a mapping such as {{text: ...}}, got {raw!r}")
    unknown = sorted(set(raw) - _KEYS)
    if unknown:
        allowed = ", ".join(sorted(_KEYS))
        raise ScriptError(
            f"{where}: unknown key(s) {', '.join(map(str, unknown))}; allowed: {allowed}"
        )
    if "code" in raw and "tool" in raw:
        raise ScriptError(f"{where}: has both code and tool; a response holds at most one of them")
    text = raw.get("text", "")
    if not isinstance(text, str):
        raise ScriptError(f"{where}: text must be a string, not {text!r}")
    thinking = raw.get("thinking", "")
    if not isinstance(thinking, str):
        raise ScriptError(f"{where}: thinking must be a string, not {thinking!r}")
    code = raw.get("code")
    if code is not None and not isinstance(code, str):
        raise ScriptError(f"{where}: code must be a string, not {code!r}")
    tool = None
    if "tool" in raw:
        spec = raw["tool"]
        if (
            not isinstance(spec, Mapping)
            or not isinstance(spec.get("name"), str)
            or not spec["name"]
        ):
            raise ScriptError(
                f"{where}: tool must be {{name: ..., arguments: {{...}}}}, not {spec!r}"
            )
        extra_keys = sorted(set(spec) - {"name", "arguments"})
        if extra_keys:
            raise ScriptError(f"{where}: tool has unknown key(s) {', '.join(extra_keys)}")
        arguments = spec.get("arguments", {}) or {}
        if not isinstance(arguments, Mapping):
            raise ScriptError(f"{where}: tool arguments must be a mapping, not {arguments!r}")
        tool = ToolCall(call_id, spec["name"], dict(arguments))
    usage = None
    if "usage" in raw:
        spec = raw["usage"]
        if not isinstance(spec, Mapping) or set(spec) - _USAGE_KEYS:
            raise ScriptError(
                f"{where}: usage must be a mapping of input, output, cache_read, cache_write; "
                f"got {spec!r}"
            )
        usage = Usage(**{k: _nonneg_int(v, f"usage.{k}", where) for k, v in spec.items()})
    chunk = _nonneg_int(raw.get("chunk", DEFAULT_CHUNK), "chunk", where, minimum=1)
    delay_ms = _nonneg_int(raw.get("delay_ms", 0), "delay_ms", where)
    error = None
    if "error" in raw:
        spec = raw["error"]
        if not isinstance(spec, Mapping) or set(spec) - {"status", "message"}:
            raise ScriptError(f"{where}: error must be {{status: 503, message: ...}}, not {spec!r}")
        status = _nonneg_int(spec.get("status", 500), "error.status", where, minimum=100)
        message = spec.get("message", f"HTTP {status}")
        if not isinstance(message, str):
            raise ScriptError(f"{where}: error.message must be a string, not {message!r}")
        if code is not None or tool is not None:
            raise ScriptError(f"{where}: an error response cannot also hold code or tool")
        error = ScriptedError(status, message)
    return ScriptedResponse(text, code, tool, usage, chunk, delay_ms, error, thinking)


def load_tracks(
    path: Path | str, data: Any = None
) -> tuple[tuple[ScriptedResponse, ...], dict[str, tuple[ScriptedResponse, ...]]]:
    """A script's responses and its ``sessions`` tracks (request text → responses).

    A script is a list of responses, or a mapping with ``responses`` (that list) and
    ``sessions``: for each text, the responses of a session whose first request holds that
    text (a child session a block started, a consulted fork) instead of ``responses``.
    """
    path = Path(path)
    if data is None:
        return load_tracks(path, _read(path))
    tracks: dict[str, Any] = {}
    if isinstance(data, Mapping) and ("responses" in data or "sessions" in data):
        unknown = sorted(map(str, set(data) - {"responses", "sessions"}))
        if unknown:
            raise ScriptError(
                f"{path}: unknown key(s) {', '.join(unknown)}; a script mapping holds "
                "responses and sessions"
            )
        tracks = data.get("sessions") or {}
        if not isinstance(tracks, Mapping) or not all(
            isinstance(key, str) and key and isinstance(value, list)
            for key, value in tracks.items()
        ):
            raise ScriptError(f"{path}: sessions must map a request's text to a list of responses")
        data = data.get("responses") or []
    if not isinstance(data, list):
        raise ScriptError(f"{path}: a script is a list of responses, got {type(data).__name__}")
    return _responses(data, path), {key: _responses(value, path) for key, value in tracks.items()}


def _read(path: Path) -> Any:
    suffix = path.suffix.lower()
    if suffix not in (".yaml", ".yml", ".json"):
        raise ScriptError(f"{path}: a script must be a .yaml, .yml or .json file")
    try:
        source = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ScriptError(f"cannot read the script {path}: {exc.strerror or exc}") from exc
    if suffix == ".json":
        try:
            return json.loads(source)
        except ValueError as exc:
            raise ScriptError(f"{path}: not valid JSON: {exc}") from exc
    import yaml  # with a YAML script only: its import is ~5% of a `vis run` start

    fast = getattr(yaml, "CSafeLoader", None)  # libyaml's, ~30 times faster
    if fast is not None:
        try:
            return yaml.load(source, Loader=fast)
        except (ValueError, yaml.YAMLError):
            pass  # a lone surrogate's escape, which only Python's loader reads, or an error
    try:
        return yaml.safe_load(source)
    except (ValueError, yaml.YAMLError) as exc:
        raise ScriptError(f"{path}: not valid YAML: {exc}") from exc


def _responses(data: list[Any], path: Path) -> tuple[ScriptedResponse, ...]:
    return tuple(
        _parse_response(raw, i, path, call_id=f"scripted-{i + 1}") for i, raw in enumerate(data)
    )


def _chunks(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


class ScriptedProvider:
    """Replays a script: each ``stream()`` consumes the next response, in order, for the session."""

    def __init__(
        self,
        script_path: Path | str,
        *,
        name: str = "scripted",
        model_overrides: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> None:
        self.name = name
        self.script_path = Path(script_path)
        self.responses, self._tracks = load_tracks(self.script_path)
        self.position = 0
        self._overrides = dict(model_overrides or {})
        self.requests: list[ModelRequest] = []  # what the "model" received, in order

    @property
    def remaining(self) -> int:
        return len(self.responses) - self.position

    def model_info(self, model: str) -> ModelInfo:
        """The table and config like any model; a scripted model takes images unless its
        ``[models."scripted/<model>"]`` says ``images = false``."""
        overrides = {"images": True, **(self._overrides.get(model) or {})}
        return lookup_model(model, overrides, where=f'[models."{self.name}/{model}"]')

    def known_input_limit(self, model: str) -> int | None:
        """``[models."p/m"] input_limit``, else the known-model table; None when unknown."""
        from vis_core.providers.limits import configured_or_known

        return configured_or_known(self._overrides.get(model), model)

    async def aclose(self) -> None:
        """Nothing to close; here so every provider can be closed alike."""

    def _choose_track(self, request: ModelRequest) -> None:
        """At the session's first request: the ``sessions`` track its request names, if any."""
        asked = next((m.text for m in reversed(request.messages) if m.role == "user"), "")
        found = next((key for key in self._tracks if key in asked), None)
        if found is not None:
            self.responses = self._tracks[found]
        self._tracks = {}

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        if not self.requests and self._tracks:
            self._choose_track(request)
        self.requests.append(request)
        limit = (self._overrides.get(request.model) or {}).get("input_limit")
        if isinstance(limit, int) and limit > 0:
            tokens = estimate_tokens(request_chars(request))
            if tokens > limit:
                overflow = overflow_error(
                    400, f"prompt is too long: {tokens} tokens > {limit} maximum"
                )
                assert overflow is not None
                raise overflow
        if self.position >= len(self.responses):
            count = len(self.responses)
            raise ProviderError(
                f"script exhausted after {count} {'response' if count == 1 else 'responses'}"
            )
        response = self.responses[self.position]
        self.position += 1
        delay = response.delay_ms / 1000
        for piece in _chunks(response.thinking, response.chunk):
            await asyncio.sleep(delay)
            yield ThinkingDelta(piece)
        for piece in _chunks(response.text, response.chunk):
            await asyncio.sleep(delay)
            yield TextDelta(piece)
        if response.error is not None:
            await asyncio.sleep(delay)
            status, message = response.error.status, response.error.message
            overflow = overflow_error(status, message)
            if overflow is not None:
                raise overflow
            cls = ProviderConfigError if status in (401, 403) else ProviderError
            raise cls(message, status=status, retryable=is_retryable_status(status))
        call = response.tool
        if response.code is not None:
            call = ToolCall(f"scripted-{self.position}", PYTHON_EXECUTION, {"code": response.code})
        if call is not None:
            yield ToolCallStarted(call.name)
            await asyncio.sleep(delay)
            yield ToolCallReady(call)
        usage = response.usage
        if usage is None:
            out_chars = len(response.text) + len(response.thinking)
            if call is not None:
                out_chars += len(call.name) + len(json.dumps(call.arguments, ensure_ascii=False))
            usage = estimated_usage(request, out_chars)
        yield UsageUpdate(usage)
        yield ResponseDone("tool_use" if call is not None else "end_turn")
