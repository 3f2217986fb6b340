"""What /model offers: known models only for the providers that serve them."""

from __future__ import annotations

from pathlib import Path

from vis_core.host import Host, HostOptions
from vis_core.model_choices import model_entries, providers


async def test_an_endpoint_of_ones_own_lists_its_configured_models_not_openais(
    workspace: Path, vis_home: Path
) -> None:
    (vis_home / "config.toml").write_text(
        '[providers.ollama]\nkind = "openai"\nbase_url = "http://127.0.0.1:9/v1"\n'
        'api_key_env = ""\n[models."ollama/qwen3"]\ninput_limit = 32768\n',
        encoding="utf-8",
    )
    host = await Host.open(HostOptions(workspace=workspace))
    try:
        ollama = next(p for p in providers(host.command_deps) if p.name == "ollama")
        assert ollama.kind == "openai" and ollama.ready  # needs no key
        ids = [entry.id for entry in model_entries(host.command_deps, "ollama")]
        assert ids == ["ollama/qwen3"]
        everything = [entry.id for entry in model_entries(host.command_deps)]
        assert "openai/gpt-5" in everything and "ollama/gpt-5" not in everything
    finally:
        await host.close()


async def test_the_models_a_server_of_ones_own_serves_are_offered_while_it_is_configured(
    workspace: Path, vis_home: Path
) -> None:
    from providers.llama_server import LlamaServer

    from vis_core.model_choices import ModelSource, ask_servers

    config = vis_home / "config.toml"
    with LlamaServer(alias="smol-135m") as llama:
        config.write_text(f'[providers.local]\nbase_url = "{llama.base_url}"\n', encoding="utf-8")
        host = await Host.open(HostOptions(workspace=workspace))
        try:
            assert await ask_servers(host.command_deps) == {}
            rows = [(e.id, e.source) for e in model_entries(host.command_deps, "local")]
            assert rows == [("local/smol-135m", ModelSource.SERVED)]
            config.write_text("", encoding="utf-8")  # the server is no longer configured
            assert model_entries(host.command_deps, "local") == []
        finally:
            await host.close()
