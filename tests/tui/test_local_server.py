"""A local llama.cpp server in the app: ``/login`` and ``/model`` list the models it serves,
a provider added to config.toml while Vis runs counts at once, and the status bar measures
the context against the size the server reports."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from pilot_keys import type_keys
from providers.llama_server import LlamaServer
from providers.wire_servers import openai_reply

from vis_tui.app import VisApp
from vis_tui.screens.form import FormScreen
from vis_tui.screens.picker import PickerScreen

from .support import on_top, started, until, vis_app


@pytest.fixture
def llama() -> Iterator[LlamaServer]:
    with LlamaServer(n_ctx=8192, alias="smol-135m") as server:
        yield server


def shown_ids(app: VisApp) -> list[str]:
    screen = app.screen
    assert isinstance(screen, PickerScreen)
    return [item.id for item in screen.shown]


def model_label(app: VisApp) -> str:
    return app.session.model.label if app.session is not None else ""


def listed(app: object) -> list[str]:
    listing = app.screen.query_one("#picker-list")  # type: ignore[attr-defined]
    return [str(option.prompt) for option in listing.options]


async def test_login_to_a_local_server_offers_the_models_it_serves(
    workspace: Path, vis_home: Path, llama: LlamaServer
) -> None:
    from textual.widgets import Input

    # 40 % of the soft budget (90 % of the server's 8,192 tokens: 7,372)
    llama.reply(openai_reply(text="served", usage=(2949, 5, 0)))
    app = vis_app(workspace)
    async with app.run_test(size=(110, 40)) as pilot:
        await started(app, pilot)
        await type_keys(pilot, *"/login", "enter")
        await on_top(pilot, PickerScreen)
        await type_keys(pilot, *"local", "enter")
        await on_top(pilot, FormScreen)
        base_url = app.screen.query(Input)[1]
        base_url.value = llama.base_url
        await pilot.press("ctrl+s")
        await on_top(pilot, PickerScreen)  # filled as it mounted: the server was asked first
        assert shown_ids(app) == ["local/smol-135m"], listed(app)  # or why the server was not
        assert "served" in str(listed(app)[0])
        await pilot.press("enter")
        await until(pilot, lambda: model_label(app) == "local/smol-135m")
        await type_keys(pilot, *"hello", "enter")
        await until(pilot, lambda: app.main.transcript.last_answer == "served")
        await until(pilot, lambda: app.main.status_bar.context_limit == 7372)
        assert app.main.status_bar.context_tokens == 2949
        assert "40% context" in str(app.main.status_bar.render())


async def test_a_server_that_lists_nothing_says_what_to_type(
    workspace: Path, vis_home: Path
) -> None:
    from textual.widgets import Input

    app = vis_app(workspace)
    async with app.run_test(size=(110, 40)) as pilot:
        await started(app, pilot)
        await type_keys(pilot, *"/login", "enter")
        await on_top(pilot, PickerScreen)
        await type_keys(pilot, *"local", "enter")
        await on_top(pilot, FormScreen)
        app.screen.query(Input)[1].value = "http://127.0.0.1:9/v1"  # nothing listens there
        await pilot.press("ctrl+s")
        await on_top(pilot, PickerScreen)
        shown = listed(app)
        assert len(shown) == 1 and "Nothing matches" not in shown[0]
        assert "127.0.0.1:9/v1/models did not answer" in shown[0]
        assert "Type the name of the model" in shown[0]


async def test_a_provider_added_to_config_toml_while_vis_runs_is_offered_and_used(
    workspace: Path, vis_home: Path, llama: LlamaServer
) -> None:
    llama.reply(openai_reply(text="from the new block"))
    app = vis_app(workspace)
    async with app.run_test(size=(110, 40)) as pilot:
        await started(app, pilot)
        (vis_home / "config.toml").write_text(
            f'[providers.local]\nbase_url = "{llama.base_url}"\n', encoding="utf-8"
        )
        await type_keys(pilot, *"/model", "enter")
        await on_top(pilot, PickerScreen)
        assert "local/smol-135m" in shown_ids(app)
        await type_keys(pilot, *"local/smol", "enter")
        await until(pilot, lambda: model_label(app) == "local/smol-135m")
        await type_keys(pilot, *"hello", "enter")
        await until(pilot, lambda: app.main.transcript.last_answer == "from the new block")


async def test_a_model_and_key_variable_set_in_config_toml_while_vis_runs_count(
    workspace: Path, vis_home: Path, llama: LlamaServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The settings the file holds are read again with it: a new session uses the model it
    names now, and the key its provider reads is redacted like any other."""
    from vis_core.host import Host, HostOptions

    monkeypatch.setenv("LLAMA_AUTH", "tok-0123456789-local")
    host = await Host.open(HostOptions(workspace=workspace))
    try:
        assert host.models.choice is None
        (vis_home / "config.toml").write_text(
            f'model = "local/smol-135m"\n[providers.local]\nbase_url = "{llama.base_url}"\n'
            'api_key_env = "LLAMA_AUTH"\n',
            encoding="utf-8",
        )
        session = await host.new_session()
        assert session.model.label == "local/smol-135m"
        assert host.settings.redactor.text("sent tok-0123456789-local") == "sent [REDACTED]"
    finally:
        await host.close()
