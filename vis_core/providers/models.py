"""Known models: input limits and prices in dollars per million tokens, with config overrides."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import fields, replace
from typing import Any

from vis_core.providers.base import ModelInfo, ProviderConfigError

# Usage.input is the *uncached* input; cache reads and writes are priced separately.
DEFAULT_MODEL_INFO = ModelInfo(input_limit=128_000)

_CLAUDE_200K = 200_000
_GPT5_INPUT = 272_000  # 400k context minus 128k reserved for output

KNOWN_MODELS: dict[str, ModelInfo] = {
    # Anthropic (cache write = 5-minute cache write price)
    "claude-opus-4-6": ModelInfo(_CLAUDE_200K, 5.0, 25.0, 0.50, 6.25, images=True),
    "claude-opus-4-5": ModelInfo(_CLAUDE_200K, 5.0, 25.0, 0.50, 6.25, images=True),
    "claude-opus-4-1": ModelInfo(_CLAUDE_200K, 15.0, 75.0, 1.50, 18.75, images=True),
    "claude-opus-4-0": ModelInfo(_CLAUDE_200K, 15.0, 75.0, 1.50, 18.75, images=True),
    "claude-opus-4": ModelInfo(_CLAUDE_200K, 15.0, 75.0, 1.50, 18.75, images=True),
    "claude-sonnet-4-6": ModelInfo(_CLAUDE_200K, 3.0, 15.0, 0.30, 3.75, images=True),
    "claude-sonnet-4-5": ModelInfo(_CLAUDE_200K, 3.0, 15.0, 0.30, 3.75, images=True),
    "claude-sonnet-4-0": ModelInfo(_CLAUDE_200K, 3.0, 15.0, 0.30, 3.75, images=True),
    "claude-sonnet-4": ModelInfo(_CLAUDE_200K, 3.0, 15.0, 0.30, 3.75, images=True),
    "claude-haiku-4-5": ModelInfo(_CLAUDE_200K, 1.0, 5.0, 0.10, 1.25, images=True),
    "claude-3-7-sonnet": ModelInfo(_CLAUDE_200K, 3.0, 15.0, 0.30, 3.75, images=True),
    "claude-3-5-haiku": ModelInfo(_CLAUDE_200K, 0.80, 4.0, 0.08, 1.0, images=True),
    # OpenAI (no charge for cache writes)
    "gpt-5.2": ModelInfo(_GPT5_INPUT, 1.75, 14.0, 0.175, images=True),
    "gpt-5.1": ModelInfo(_GPT5_INPUT, 1.25, 10.0, 0.125, images=True),
    "gpt-5.1-codex": ModelInfo(_GPT5_INPUT, 1.25, 10.0, 0.125, images=True),
    "gpt-5.1-codex-mini": ModelInfo(_GPT5_INPUT, 0.25, 2.0, 0.025, images=True),
    "gpt-5": ModelInfo(_GPT5_INPUT, 1.25, 10.0, 0.125, images=True),
    "gpt-5-codex": ModelInfo(_GPT5_INPUT, 1.25, 10.0, 0.125, images=True),
    "gpt-5-mini": ModelInfo(_GPT5_INPUT, 0.25, 2.0, 0.025, images=True),
    "gpt-5-nano": ModelInfo(_GPT5_INPUT, 0.05, 0.40, 0.005, images=True),
    "gpt-5-chat-latest": ModelInfo(128_000, 1.25, 10.0, 0.125, images=True),
    "gpt-4.1": ModelInfo(1_047_576, 2.0, 8.0, 0.50, images=True),
    "gpt-4.1-mini": ModelInfo(1_047_576, 0.40, 1.60, 0.10, images=True),
    "gpt-4.1-nano": ModelInfo(1_047_576, 0.10, 0.40, 0.025, images=True),
    "gpt-4o": ModelInfo(128_000, 2.50, 10.0, 1.25, images=True),
    "gpt-4o-mini": ModelInfo(128_000, 0.15, 0.60, 0.075, images=True),
    "o3": ModelInfo(200_000, 2.0, 8.0, 0.50, images=True),
    "o3-mini": ModelInfo(200_000, 1.10, 4.40, 0.55),
    "o4-mini": ModelInfo(200_000, 1.10, 4.40, 0.275, images=True),
    "o1": ModelInfo(200_000, 15.0, 60.0, 7.50, images=True),
}

# A dated snapshot (``-20250929``, ``-2025-08-07``) or ``-latest`` prices like its base model.
_SNAPSHOT_SUFFIX = re.compile(r"-(\d{8}|\d{4}-\d{2}-\d{2}|latest)$")
_OVERRIDE_KEYS = frozenset(f.name for f in fields(ModelInfo))
_INT_KEYS = frozenset({"input_limit", "thinking_budget"})
_BOOL_KEYS = frozenset({"images"})
# Options that shape the request rather than describe the model: name → allowed values
# (None: any non-empty string). ``tool_choice``: auto, required, none or a tool's name.
REASONING_EFFORTS = ("none", "minimal", "low", "medium", "high", "xhigh")
REQUEST_OPTIONS: dict[str, tuple[str, ...] | None] = {
    "reasoning_effort": REASONING_EFFORTS,
    "tool_choice": None,
    "api": ("chat", "responses"),
}


def _known(model: str) -> ModelInfo | None:
    name = model.strip().lower()
    candidates = [name, name.rsplit("/", 1)[-1]]  # OpenRouter-style "anthropic/claude-..."
    for candidate in list(candidates):
        candidates.append(
            candidate.replace(".", "-") if candidate.startswith("claude") else candidate
        )
    for candidate in candidates:
        if candidate in KNOWN_MODELS:
            return KNOWN_MODELS[candidate]
        base = _SNAPSHOT_SUFFIX.sub("", candidate)
        if base in KNOWN_MODELS:
            return KNOWN_MODELS[base]
    return None


def apply_overrides(info: ModelInfo, overrides: Mapping[str, Any], *, where: str) -> ModelInfo:
    """``info`` with ``input_limit`` / ``*_price`` / ``thinking_budget`` / ``images`` replaced
    from a config table named ``where``."""
    changes: dict[str, Any] = {}
    for key, value in overrides.items():
        if key in REQUEST_OPTIONS:
            _check_option(key, value, where)
            continue
        if key not in _OVERRIDE_KEYS:
            allowed = ", ".join(sorted(_OVERRIDE_KEYS | REQUEST_OPTIONS.keys()))
            raise ProviderConfigError(f"{where}: unknown setting {key!r}; allowed: {allowed}")
        if key in _BOOL_KEYS:
            if not isinstance(value, bool):
                raise ProviderConfigError(f"{where}: {key} must be true or false, not {value!r}")
            changes[key] = value
            continue
        if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
            raise ProviderConfigError(f"{where}: {key} must be a number >= 0, not {value!r}")
        changes[key] = int(value) if key in _INT_KEYS else float(value)
    return replace(info, **changes)


def _check_option(key: str, value: Any, where: str) -> str:
    allowed = REQUEST_OPTIONS[key]
    if not isinstance(value, str) or not value.strip():
        raise ProviderConfigError(f"{where}: {key} must be a non-empty string, not {value!r}")
    if allowed is not None and value not in allowed:
        raise ProviderConfigError(
            f"{where}: {key} must be one of {', '.join(allowed)}, not {value!r}"
        )
    return value


def request_options(overrides: Mapping[str, Any] | None, *, where: str) -> dict[str, str]:
    """The request-shaping options (``reasoning_effort``, ``tool_choice``, ``api``) set in a
    model's config table, checked."""
    found: dict[str, str] = {}
    for key, value in (overrides or {}).items():
        if key in REQUEST_OPTIONS:
            found[key] = _check_option(key, value, where)
    return found


def lookup_model(
    model: str, overrides: Mapping[str, Any] | None = None, *, where: str = "model settings"
) -> ModelInfo:
    """The known limits and prices of ``model`` (unknown: 128k input, free), then ``overrides``."""
    info = _known(model) or DEFAULT_MODEL_INFO
    if overrides:
        info = apply_overrides(info, overrides, where=where)
    return info


def is_known_model(model: str) -> bool:
    return _known(model) is not None
