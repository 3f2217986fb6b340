"""What /model offers: known models only for the providers that serve them."""

from __future__ import annotations

from pathlib import Path

from processes import fresh_python

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


# A fresh process: a session on the scripted model switched to openai's, and no request yet.
SWITCHED = """
import asyncio, sys
from pathlib import Path
from vis_core.frontend import Frontend
from vis_core.host import HostOptions

async def main() -> None:
    core = await Frontend.open(HostOptions(workspace=Path(sys.argv[1]), provider="scripted"))
    try:
        session = await core.new_session()
        before = "openai" in sys.modules
        result = await core.use_model(session, "openai/gpt-5")
        for _ in range(3000):
            if "openai.types" in sys.modules:
                break
            await asyncio.sleep(0.02)
        print(result.ok, "at start:", before, "prepared:", "openai.types" in sys.modules)
    finally:
        await core.close()

asyncio.run(main())
"""


def test_a_model_switched_to_has_its_sdk_imported_before_the_next_request(
    workspace: Path, vis_home: Path
) -> None:
    """``/model`` to another provider's model: its SDK (1-3 s of CPU) is imported in a
    thread as the switch is made, not when the next request is sent."""
    done = fresh_python(
        SWITCHED, str(workspace), vis_home=vis_home, env={"OPENAI_API_KEY": "sk-test"}
    )
    assert done.stdout.strip() == "True at start: False prepared: True", done.stderr[-2000:]
