"""Choosing the model and building providers from the command line, env and config.toml."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from vis_core.model.conversation import TextDelta
from vis_core.paths import VisPaths
from vis_core.providers.anthropic_provider import AnthropicProvider
from vis_core.providers.base import ModelChoice, ProviderConfigError
from vis_core.providers.factory import (
    DEFAULT_ANTHROPIC_MODEL,
    DEFAULT_OPENAI_MODEL,
    NO_MODEL_HELP,
    create_provider,
    no_model_help,
    resolve_model,
)
from vis_core.providers.openai_provider import OpenAIProvider
from vis_core.providers.scripted import ScriptedProvider

from .samples import simple_request
from .wire_servers import WireServer, anthropic_reply, openai_reply

# the provider SDKs are imported in the test process (anthropic ~2 s of CPU): on one worker
pytestmark = pytest.mark.xdist_group("sdk-imports")


@pytest.fixture
def env(vis_home: Path) -> dict[str, str]:
    return {"VIS_HOME": str(vis_home)}


@pytest.fixture
async def built() -> AsyncIterator[list[Any]]:
    """Providers a test built; closed afterwards."""
    made: list[Any] = []
    yield made
    for provider in made:
        await provider.aclose()


def test_cli_beats_env_beats_config(env: dict[str, str]) -> None:
    config = {"model": "openai/gpt-4o"}
    assert resolve_model(None, config, env) == ModelChoice("openai", "gpt-4o")
    env["VIS_MODEL"] = "anthropic/claude-haiku-4-5"
    assert resolve_model(None, config, env) == ModelChoice("anthropic", "claude-haiku-4-5")
    assert resolve_model("ollama/qwen3:8b", config, env) == ModelChoice("ollama", "qwen3:8b")


def test_key_alone_picks_that_providers_default(env: dict[str, str]) -> None:
    assert resolve_model(None, {}, env) is None
    assert resolve_model(None, {}, {**env, "OPENAI_API_KEY": "k"}) == ModelChoice(
        "openai", DEFAULT_OPENAI_MODEL
    )
    both = {**env, "OPENAI_API_KEY": "k", "ANTHROPIC_API_KEY": "k"}
    assert resolve_model(None, {}, both) == ModelChoice("anthropic", DEFAULT_ANTHROPIC_MODEL)


def test_model_overrides_ride_along_as_options(env: dict[str, str]) -> None:
    config = {"model": "ollama/qwen3", "models": {"ollama/qwen3": {"input_limit": 32768}}}
    assert resolve_model(None, config, env) == ModelChoice(
        "ollama", "qwen3", {"input_limit": 32768}
    )


def test_bare_scripted_is_accepted(env: dict[str, str]) -> None:
    assert resolve_model("scripted", {}, env) == ModelChoice("scripted", "scripted")


@pytest.mark.parametrize(
    ("cli", "environ", "config", "source"),
    [
        ("gpt-5", {}, {}, "--model"),
        (None, {"VIS_MODEL": "claude"}, {}, "VIS_MODEL"),
        (None, {}, {"model": "/x"}, "`model` in "),
        (None, {}, {"model": 5}, "`model` in "),
    ],
)
def test_malformed_model_names_its_source(
    env: dict[str, str], cli: str | None, environ: dict, config: dict, source: str
) -> None:
    with pytest.raises(ProviderConfigError) as failure:
        resolve_model(cli, config, {**env, **environ})
    assert source in str(failure.value)
    assert isinstance(failure.value, ValueError)  # callers may catch either


def test_no_model_help_names_keys_flags_and_the_config_path(env: dict[str, str]) -> None:
    text = no_model_help(env)
    config_file = VisPaths.from_env(env).config_file
    for needle in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "--model", "VIS_MODEL", "model = "):
        assert needle in text
    assert str(config_file) in text
    assert "{config_file}" in NO_MODEL_HELP


async def test_anthropic_needs_its_key(env: dict[str, str], built: list[Any]) -> None:
    choice = ModelChoice("anthropic", "claude-sonnet-4-6")
    with pytest.raises(ProviderConfigError) as failure:
        create_provider(choice, {}, env)
    message = str(failure.value)
    assert "ANTHROPIC_API_KEY" in message
    assert str(VisPaths.from_env(env).config_file) in message
    provider = create_provider(choice, {}, {**env, "ANTHROPIC_API_KEY": "sk-ant"})
    built.append(provider)
    assert isinstance(provider, AnthropicProvider)
    assert provider.name == "anthropic"


async def test_custom_key_env_is_named(env: dict[str, str], built: list[Any]) -> None:
    config = {"providers": {"openai": {"api_key_env": "WORK_OPENAI_KEY"}}}
    choice = ModelChoice("openai", "gpt-5")
    with pytest.raises(ProviderConfigError, match="WORK_OPENAI_KEY"):
        create_provider(choice, config, {**env, "OPENAI_API_KEY": "ignored"})
    provider = create_provider(choice, config, {**env, "WORK_OPENAI_KEY": "k"})
    built.append(provider)
    assert isinstance(provider, OpenAIProvider)


async def test_openai_compatible_endpoint_streams_without_a_key(
    env: dict[str, str], wire_server: WireServer, built: list[Any]
) -> None:
    config = {
        "model": "ollama/qwen3",
        "providers": {
            "ollama": {"kind": "openai", "base_url": wire_server.openai_base_url, "api_key_env": ""}
        },
        "models": {"ollama/qwen3": {"input_limit": 32768}},
    }
    choice = resolve_model(None, config, env)
    assert choice is not None
    provider = create_provider(choice, config, env)
    built.append(provider)
    assert provider.name == "ollama"
    assert provider.model_info("qwen3").input_limit == 32768

    wire_server.reply(openai_reply("local model says hi"))
    events = [e async for e in provider.stream(simple_request("qwen3"))]
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "local model says hi"
    assert wire_server.requests[0].body["model"] == "qwen3"


async def test_anthropic_kind_proxy_uses_its_base_url(
    env: dict[str, str], wire_server: WireServer, built: list[Any]
) -> None:
    config = {
        "providers": {
            "proxy": {
                "kind": "anthropic",
                "base_url": wire_server.anthropic_base_url,
                "api_key_env": "PROXY_KEY",
            }
        }
    }
    provider = create_provider(
        ModelChoice("proxy", "claude-haiku-4-5"), config, {**env, "PROXY_KEY": "pk"}
    )
    built.append(provider)
    wire_server.reply(anthropic_reply("via proxy"))
    events = [e async for e in provider.stream(simple_request("claude-haiku-4-5"))]
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "via proxy"
    assert wire_server.requests[0].headers["authorization"] == "Bearer pk"


@pytest.mark.parametrize(
    ("provider", "config", "message"),
    [
        ("mystery", {}, "has no [providers.mystery]"),
        ("ollama", {"providers": {"ollama": {"kind": "openai"}}}, "set base_url"),
        ("ollama", {"providers": {"ollama": {}}}, "set base_url"),  # the block is there
        ("x", {"providers": {"x": {"kind": "gemini"}}}, "kind must be one of"),
        ("x", {"providers": {"x": {"kind": "openai", "base_url": 5}}}, "base_url must be a string"),
        ("x", {"providers": "nope"}, "[providers] must be a table"),
    ],
)
def test_bad_provider_settings_name_the_config_file(
    env: dict[str, str], provider: str, config: dict, message: str
) -> None:
    with pytest.raises(ProviderConfigError) as failure:
        create_provider(ModelChoice(provider, "m"), config, env)
    assert message in str(failure.value)
    assert str(VisPaths.from_env(env).config_file) in str(failure.value)


def test_a_provider_block_without_kind_is_an_openai_compatible_server(
    env: dict[str, str],
) -> None:
    config = {"providers": {"local": {"base_url": "http://127.0.0.1:9/v1"}}}
    provider = create_provider(ModelChoice("local", "smol"), config, env)
    assert provider.base_url == "http://127.0.0.1:9/v1"  # type: ignore[attr-defined]


def test_scripted_needs_a_script(env: dict[str, str], tmp_path: Path) -> None:
    choice = ModelChoice("scripted", "demo")
    with pytest.raises(ProviderConfigError, match="--script FILE"):
        create_provider(choice, {}, env)
    script = tmp_path / "demo.yaml"
    script.write_text("- text: hi\n", encoding="utf-8")
    provider = create_provider(
        choice, {"models": {"scripted/demo": {"input_limit": 5000}}}, env, script=script
    )
    assert isinstance(provider, ScriptedProvider)
    assert provider.model_info("demo").input_limit == 5000


def test_building_a_provider_imports_no_sdk(tmp_path: Path) -> None:
    """``vis doctor`` and the app's start build the provider; the SDK loads on first use."""
    code = textwrap.dedent(
        """
        import sys
        from vis_core.providers.base import ModelChoice
        from vis_core.providers.factory import create_provider
        import vis_core.providers.errors
        config = {"providers": {"local": {"kind": "openai", "base_url": "http://127.0.0.1:9/v1",
                                           "api_key_env": ""}}}
        env = {"VIS_HOME": sys.argv[1], "ANTHROPIC_API_KEY": "k"}
        create_provider(ModelChoice("local", "m"), config, env)
        create_provider(ModelChoice("anthropic", "claude-sonnet-4-6"), config, env)
        print(sorted(m for m in ("openai", "anthropic", "httpx2") if m in sys.modules))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "[]"


def test_no_model_help_fits_80_columns_with_each_command_on_its_own_line(
    env: dict[str, str],
) -> None:
    """The first screen of a newcomer with no key: a wrapped line put ``vis --model`` at the
    end of one line and its model at the start of the next, in the app's 76 columns."""
    from vis_core.welcome import LOGIN_HINT

    lines = (no_model_help(env) + LOGIN_HINT).splitlines()
    config_file = str(VisPaths.from_env(env).config_file)
    assert all(len(line) <= 72 for line in lines if config_file not in line)
    for command in ("vis --model anthropic/", "export VIS_MODEL=", "export ANTHROPIC_API_KEY="):
        (line,) = [line for line in lines if command in line]
        assert line.lstrip().startswith(command)


@pytest.mark.parametrize(
    ("url", "said"),
    [
        ("http://127.0.0.1:8080/v1?key=sk-secret", "holds a query or fragment"),
        ("https://proxy.example/openai#frag", "holds a query or fragment"),
        ("127.0.0.1:8080/v1", "must be an http(s) address"),
        ("ftp://host/v1", "must be an http(s) address"),
    ],
)
def test_a_base_url_requests_cannot_go_under_is_refused_by_name(
    env: dict[str, str], url: str, said: str
) -> None:
    """The SDK adds the endpoint's path after ``base_url``: with a query, every request went
    to ``…/v1?key=K/chat/completions`` (noticed by the provider-errors helper)."""
    config = {"providers": {"local": {"kind": "openai", "base_url": url, "api_key_env": ""}}}
    with pytest.raises(ProviderConfigError) as failure:
        create_provider(ModelChoice("local", "m"), config, env)
    assert said in str(failure.value) and "sk-secret" not in str(failure.value)
