"""Choose the model (``--model`` > ``VIS_MODEL`` > ``config.toml``) and build its provider.

The model is written ``provider/model``. Configuration in ``config.toml``::

    model = "anthropic/claude-sonnet-4-6"   # the default model

    [providers.anthropic]          # optional: api_key_env, base_url, stall_timeout,
    [providers.openai]             # max_response_bytes
    [providers.ollama]             # any other name = an OpenAI-compatible endpoint
    kind = "openai"                # "openai" (the default) or "anthropic" wire format
    base_url = "http://127.0.0.1:11434/v1"
    api_key_env = ""               # empty: no key needed
    [providers.openrouter]
    kind = "openai"
    base_url = "https://openrouter.ai/api/v1"
    api_key_env = "OPENROUTER_API_KEY"

    [models."ollama/qwen3"]        # optional per-model overrides
    input_limit = 32768            # when the server does not say (llama.cpp /props does);
                                   # also input_price, output_price, cache_read_price,
                                   # cache_write_price ($ per Mtok), thinking_budget
    reasoning_effort = "high"      # none, minimal, low, medium, high, xhigh
    tool_choice = "auto"           # auto, required, none, or a tool's name: forced on the
                                   # first request of each turn

``stall_timeout`` (seconds, default 120; 0 = never) ends a response that sends not a byte for
that long (the read timeout of its connection: SSE keep-alive comments count).
``max_response_bytes`` (default: 512 bytes of streamed events per token of the request's
output limit; 0 = no cap) ends a response that sends more (an endless stream).

``anthropic`` reads its key from ``ANTHROPIC_API_KEY`` and ``openai`` from ``OPENAI_API_KEY``
unless ``api_key_env`` names another variable; other providers need no key unless
``api_key_env`` names one. ``scripted/<anything>`` replays ``--script FILE``.
With no model chosen anywhere, a set ``ANTHROPIC_API_KEY`` (else ``OPENAI_API_KEY``) picks
that provider's default model.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from vis_core.model.providers import NO_MODEL, ProviderKind
from vis_core.paths import VisPaths
from vis_core.providers.base import ModelChoice, Provider, ProviderConfigError
from vis_core.providers.common import ANTHROPIC_KEY_ENV, OPENAI_KEY_ENV

DEFAULT_ANTHROPIC_MODEL = "claude-sonnet-4-6"
DEFAULT_OPENAI_MODEL = "gpt-5"
KINDS = tuple(ProviderKind)
DEFAULT_KEY_ENV: dict[str, str] = {
    ProviderKind.ANTHROPIC: ANTHROPIC_KEY_ENV,
    ProviderKind.OPENAI: OPENAI_KEY_ENV,
}

# each line fits an 80-column terminal (the app's message area is 76 wide), and each command
# stands on a line of its own, to be copied whole
NO_MODEL_HELP = (
    NO_MODEL
    + """ Pick one of:
  1. Set an API key; Vis uses that provider's default model:
       export ANTHROPIC_API_KEY=...    (anthropic/{anthropic_default})
       export OPENAI_API_KEY=...       (openai/{openai_default})
  2. Choose the model for one run:
       vis --model anthropic/claude-sonnet-4-6
     or for every run in this shell:
       export VIS_MODEL=openai/gpt-5
  3. Save it in {config_file}:
       model = "anthropic/claude-sonnet-4-6"
     A local OpenAI-compatible server (Ollama, llama.cpp, vLLM,
     LM Studio) also works:
       model = "ollama/qwen3"
       [providers.ollama]
       kind = "openai"
       base_url = "http://127.0.0.1:11434/v1"
       api_key_env = ""
"""
)


class ModelChoiceError(ProviderConfigError, ValueError):
    """A model name that is not ``provider/model`` (also a ValueError, like ModelChoice.parse)."""


def config_file_of(environ: Mapping[str, str]) -> Path:
    return VisPaths.from_env(dict(environ)).config_file


def no_model_help(environ: Mapping[str, str]) -> str:
    """:data:`NO_MODEL_HELP` with the real ``config.toml`` path filled in."""
    return NO_MODEL_HELP.format(
        config_file=config_file_of(environ),
        anthropic_default=DEFAULT_ANTHROPIC_MODEL,
        openai_default=DEFAULT_OPENAI_MODEL,
    )


def _table(config: Mapping[str, Any], key: str, where: str) -> Mapping[str, Any]:
    value = config.get(key, {})
    if not isinstance(value, Mapping):
        raise ProviderConfigError(f"{where}: [{key}] must be a table, not {value!r}")
    return value


def _model_overrides(config: Mapping[str, Any], provider: str, where: str) -> dict[str, Any]:
    """``[models."provider/model"]`` tables of ``provider``, keyed by the bare model name."""
    found: dict[str, Any] = {}
    for key, value in _table(config, "models", where).items():
        name, sep, model = str(key).partition("/")
        if not sep or name != provider:
            continue
        if not isinstance(value, Mapping):
            raise ProviderConfigError(f'{where}: [models."{key}"] must be a table, not {value!r}')
        found[model] = dict(value)
    return found


def resolve_model(
    cli_model: str | None, config: Mapping[str, Any], environ: Mapping[str, str]
) -> ModelChoice | None:
    """The chosen model: ``--model`` > ``VIS_MODEL`` > config ``model`` > a key's default."""
    where = str(config_file_of(environ))
    for text, source in (
        (cli_model, "--model"),
        (environ.get("VIS_MODEL"), "the environment variable VIS_MODEL"),
        (config.get("model"), f"`model` in {where}"),
    ):
        if text is None or text == "":
            continue
        if not isinstance(text, str):
            raise ModelChoiceError(f"{source} must be a string like anthropic/claude-sonnet-4-6")
        text = text.strip()
        if text == "scripted":
            choice = ModelChoice("scripted", "scripted")
        else:
            try:
                choice = ModelChoice.parse(text)
            except ValueError as exc:
                raise ModelChoiceError(f"{source}: {exc}") from exc
        overrides = _model_overrides(config, choice.provider, where).get(choice.model)
        return ModelChoice(choice.provider, choice.model, dict(overrides or {}))
    if environ.get(ANTHROPIC_KEY_ENV):
        return ModelChoice("anthropic", DEFAULT_ANTHROPIC_MODEL)
    if environ.get(OPENAI_KEY_ENV):
        return ModelChoice("openai", DEFAULT_OPENAI_MODEL)
    return None


def default_kind(name: str, has_table: bool) -> ProviderKind | None:
    """The wire format of a provider whose table names no ``kind``: its own for anthropic,
    openai and scripted; an OpenAI-compatible endpoint for any other name with a table."""
    if name in KINDS:
        return ProviderKind(name)
    return ProviderKind.OPENAI if has_table else None


def _setting(section: Mapping[str, Any], key: str, where: str) -> str | None:
    value = section.get(key)
    if value is not None and not isinstance(value, str):
        raise ProviderConfigError(f"{where}: {key} must be a string, not {value!r}")
    return value


def create_provider(
    choice: ModelChoice,
    config: Mapping[str, Any],
    environ: Mapping[str, str],
    *,
    script: Path | None = None,
) -> Provider:
    """The provider for ``choice``; raises ProviderConfigError naming what to fix."""
    config_file = config_file_of(environ)
    name = choice.provider
    where = f"[providers.{name}] in {config_file}"
    tables = _table(config, "providers", str(config_file))
    section = _table(tables, name, str(config_file))
    kind = _setting(section, "kind", where) or default_kind(name, name in tables)
    if kind is None:
        raise ProviderConfigError(
            f"unknown provider {name!r} (model {name}/{choice.model}): {config_file} has no "
            f"[providers.{name}]. Use anthropic/..., openai/... or scripted, or add "
            f'[providers.{name}] with base_url = "http://.../v1" (an OpenAI-compatible server '
            "such as llama.cpp, Ollama or vLLM), or run /login in the app"
        )
    if kind not in KINDS:
        raise ProviderConfigError(f"{where}: kind must be one of {', '.join(KINDS)}, not {kind!r}")
    wire = ProviderKind(kind)
    overrides = _model_overrides(config, name, str(config_file))
    if choice.options:
        overrides[choice.model] = {**overrides.get(choice.model, {}), **choice.options}
    if wire is ProviderKind.SCRIPTED:
        if script is None:
            raise ProviderConfigError(
                "the scripted provider replays a script file: pass --script FILE"
            )
        from vis_core.providers.scripted import ScriptedProvider  # YAML: only for scripts

        return ScriptedProvider(script, name=name, model_overrides=overrides)

    base_url = _base_url(_setting(section, "base_url", where) or None, where)
    key_env = _setting(section, "api_key_env", where)
    if key_env is None:
        key_env = DEFAULT_KEY_ENV.get(name, "")
    api_key = environ.get(key_env, "") if key_env else ""
    if key_env and not api_key:
        from vis_core.providers.errors import missing_key_error

        raise missing_key_error(name, key_env, config_file)
    if wire is ProviderKind.OPENAI and name != ProviderKind.OPENAI and base_url is None:
        raise ProviderConfigError(f'{where}: set base_url = "http://.../v1" for this endpoint')
    stall_timeout = _stall_timeout(section, where)
    max_response_bytes = _max_response_bytes(section, where)
    # the SDK itself is imported on the first request
    if wire is ProviderKind.ANTHROPIC:
        from vis_core.providers.anthropic_provider import AnthropicProvider as provider_class
    else:
        from vis_core.providers.openai_provider import OpenAIProvider as provider_class
    return provider_class(
        api_key=api_key,
        name=name,
        base_url=base_url,
        key_env=key_env,
        config_file=config_file,
        model_overrides=overrides,
        stall_timeout=stall_timeout,
        max_response_bytes=max_response_bytes,
    )


def _base_url(url: str | None, where: str) -> str | None:
    """``url`` when the SDKs can send requests under it: http or https, a host, and no query
    or fragment (the SDK adds the endpoint's path after it: ``…/v1?key=K`` became
    ``…/v1?key=K/chat/completions``)."""
    if url is None:
        return None
    from urllib.parse import urlsplit

    from vis_core.system.redaction import hide_credentials

    try:
        parts = urlsplit(url)
    except ValueError:
        parts = None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
        raise ProviderConfigError(
            f'{where}: base_url must be an http(s) address such as "http://127.0.0.1:8080/v1", '
            f"not {hide_credentials(url)!r}"
        )
    if parts.query or parts.fragment:
        raise ProviderConfigError(
            f"{where}: base_url {hide_credentials(url)!r} holds a query or fragment, which "
            "requests cannot carry (the endpoint's path is added after it); give the key "
            "with api_key_env, and the address alone"
        )
    return url


def _max_response_bytes(section: Mapping[str, Any], where: str) -> int | None:
    value = section.get("max_response_bytes")
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
        raise ProviderConfigError(
            f"{where}: max_response_bytes must be a whole number of bytes >= 0 (0 = no cap), "
            f"not {value!r}"
        )
    return value


def _stall_timeout(section: Mapping[str, Any], where: str) -> float:
    from vis_core.providers.sdk_provider import DEFAULT_STALL_TIMEOUT

    value = section.get("stall_timeout", DEFAULT_STALL_TIMEOUT)
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise ProviderConfigError(
            f"{where}: stall_timeout must be a number of seconds >= 0 (0 = never), not {value!r}"
        )
    return float(value)
