"""``/model``: a picker and ``/model `` completion that switch the session's model; ``/login``:
provider, key in a secret form, model, and the app works at once (a real OpenAI-wire server)."""

from __future__ import annotations

import json
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from pilot_keys import type_keys
from providers.wire_servers import WireServer, openai_reply

from vis_core.host import HostOptions
from vis_core.providers.base import ModelChoice
from vis_tui.app import VisApp
from vis_tui.screens.form import FormScreen
from vis_tui.screens.picker import PickerScreen
from vis_tui.widgets.system_message import SystemMessage
from vis_tui.widgets.transcript import PlainMessage

from .support import on_top, started, until, vis_app


@pytest.fixture
def server() -> Iterator[WireServer]:
    with WireServer() as wire:
        yield wire


def _config(vis_home: Path, server: WireServer) -> None:
    (vis_home / "config.toml").write_text(
        f'[providers.openai]\nbase_url = "{server.openai_base_url}"\n', encoding="utf-8"
    )


def _notes(app: object) -> list[str]:
    found = app.main.transcript.query(f"{PlainMessage.__name__}, {SystemMessage.__name__}")  # type: ignore[attr-defined]
    return [m.source for m in found]


async def _answered(app: object, pilot: object, text: str) -> None:
    await type_keys(pilot, *text, "enter")  # type: ignore[arg-type]
    await until(
        pilot,  # type: ignore[arg-type]
        lambda: any(
            t.status
            for t in app.main.transcript.turns.values()  # type: ignore[attr-defined]
        ),
    )


async def test_the_model_picker_switches_the_session_and_lists_recent_models_first(
    workspace: Path, vis_home: Path, server: WireServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    _config(vis_home, server)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    server.reply(openai_reply(text="small model here"))
    app = vis_app(workspace)
    async with app.run_test(size=(100, 40)) as pilot:
        await started(app, pilot)
        assert app.session.model.label == "openai/gpt-5"
        await type_keys(pilot, *"/model", "enter")
        await on_top(pilot, PickerScreen)
        picker = app.screen
        assert picker.shown[0].id == "openai/gpt-5" and "current" in picker.shown[0].note
        assert any(item.id.startswith("anthropic/") for item in picker.shown)
        await type_keys(pilot, *"openai/gpt-4.1-mi", "enter")
        await until(pilot, lambda: app.session.model.label == "openai/gpt-4.1-mini")
        assert app.main.status_bar.model == "openai/gpt-4.1-mini"
        assert "Model: openai/gpt-4.1-mini" in _notes(app)[-1]
        await _answered(app, pilot, "hello")
        assert server.bodies[-1]["model"] == "gpt-4.1-mini"
        await type_keys(pilot, *"/model", "enter")
        await on_top(pilot, PickerScreen)
        first = app.screen.shown[0]
        assert first.id == "openai/gpt-4.1-mini" and "current" in first.note
        await pilot.press("escape")
        overrides = app.core._host.store.list_overrides("session", app.session.id)
        assert overrides["model"] == "openai/gpt-4.1-mini"  # the session keeps it on resume


async def test_model_completion_after_slash_model(
    workspace: Path, vis_home: Path, server: WireServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    _config(vis_home, server)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    app = vis_app(workspace)
    async with app.run_test(size=(100, 40)) as pilot:
        await started(app, pilot)
        await type_keys(pilot, *"/model 4.1nano")
        menu = app.main.completion
        assert menu.display and menu.selected_choice is not None
        assert menu.selected_choice.label == "openai/gpt-4.1-nano"
        await pilot.press("tab")
        assert app.main.prompt.text == "/model openai/gpt-4.1-nano"
        await pilot.press("enter")
        await until(pilot, lambda: app.session.model.label == "openai/gpt-4.1-nano")
        await until(pilot, lambda: app.main.status_bar.model == "openai/gpt-4.1-nano")
        await type_keys(pilot, *"/model nonsense-without-a-slash", "enter")
        await until(pilot, lambda: "Cannot switch the model" in _notes(app)[-1])
        assert app.session.model.label == "openai/gpt-4.1-nano"


async def test_login_saves_the_key_as_a_secret_and_the_app_works_without_restart(
    workspace: Path, vis_home: Path, server: WireServer
) -> None:
    _config(vis_home, server)
    server.reply(openai_reply(text="logged in and answering"))
    app = vis_app(workspace)
    async with app.run_test(size=(100, 40)) as pilot:
        await started(app, pilot)
        assert app.session.model.provider is None and "/login" in _notes(app)[0]
        await type_keys(pilot, *"/login", "enter")
        await on_top(pilot, PickerScreen)
        assert [item.id for item in app.screen.shown][:2] == ["anthropic", "openai"]
        assert app.screen.shown[2].label.startswith("Local OpenAI-compatible server")
        await type_keys(pilot, *"openai", "enter")
        await on_top(pilot, FormScreen)
        await pilot.press("ctrl+s")  # an empty key is refused in the form
        assert isinstance(app.screen, FormScreen) and app.screen.errors
        await type_keys(pilot, *"sk-test-key-123", "ctrl+s")
        await on_top(pilot, PickerScreen)
        assert app.screen.title_text == "Log in: choose a model from openai"
        assert app.screen.shown[app.screen.query_one("#picker-list").highlighted].id == (
            "openai/gpt-5"  # the provider's default model is offered first
        )
        assert not any("needs a key" in item.note for item in app.screen.shown)  # it was given
        await type_keys(pilot, *"openai/gpt-5-mini", "enter")
        await until(pilot, lambda: app.session.model.label == "openai/gpt-5-mini")
        await until(pilot, lambda: app.main.status_bar.model == "openai/gpt-5-mini")
        # the note's removal is awaited after the status bar shows the model (a later message)
        await until(pilot, lambda: not app.main.transcript.query(".no-model"))
        await _answered(app, pilot, "hello")
        assert app.main.transcript.last_answer == "logged in and answering"
    request = server.requests[-1]
    assert request.headers.get("authorization") == "Bearer sk-test-key-123"
    secrets = vis_home / "secrets"
    assert json.loads(secrets.read_text())["env:OPENAI_API_KEY"] == "sk-test-key-123"
    assert stat.S_IMODE(secrets.stat().st_mode) == 0o600
    assert 'model = "openai/gpt-5-mini"' in (vis_home / "config.toml").read_text()
    assert b"sk-test-key-123" not in (vis_home / "vis.db").read_bytes()


async def test_a_cancelled_login_saves_nothing(workspace: Path, vis_home: Path) -> None:
    app = vis_app(workspace)
    async with app.run_test(size=(100, 40)) as pilot:
        await started(app, pilot)
        await type_keys(pilot, *"/login", "enter")
        await on_top(pilot, PickerScreen)
        await type_keys(pilot, *"anthropic", "enter")
        await on_top(pilot, FormScreen)
        await type_keys(pilot, *"sk-typed-then-cancelled", "escape")
        await until(pilot, lambda: "Login cancelled" in _notes(app)[-1])
        assert app.session.model.provider is None
    assert not (vis_home / "secrets").exists()


async def test_a_model_name_that_only_shares_letters_is_a_candidate_never_the_choice(
    workspace: Path, vis_home: Path, server: WireServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    _config(vis_home, server)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    app = vis_app(workspace)
    async with app.run_test(size=(100, 40)) as pilot:
        await started(app, pilot)
        await type_keys(pilot, *"/model opus-5")
        menu = app.main.completion
        assert menu.display and menu.choices[0].label == "anthropic/claude-opus-4-5"
        assert menu.selected_choice is None  # shown, not taken by Tab
        await pilot.press("tab")
        assert app.main.prompt.text == "/model opus-5"
        await pilot.press("down")
        assert menu.selected_choice is not None
        assert menu.selected_choice.label == "anthropic/claude-opus-4-5"
        app.main.prompt.text = ""
        await type_keys(pilot, *"/model", "enter")
        await on_top(pilot, PickerScreen)
        picker = app.screen
        await type_keys(pilot, *"anthropic/claude-opus-5")
        listing = picker.query_one("#picker-list")
        listed = [str(option.prompt) for option in listing.options]  # type: ignore[attr-defined]
        assert "Nothing is named 'anthropic/claude-opus-5'" in listed[0]
        assert "anthropic/claude-opus-4-5" in listed[1]
        assert picker._chosen(listing.highlighted) is None  # type: ignore[attr-defined]
        await pilot.press("enter")  # what was typed, not the candidate
        await until(pilot, lambda: "Cannot use" in _notes(app)[-1])
        assert "anthropic/claude-opus-5" in _notes(app)[-1]
        # no key: the way the picker's "needs a key: /login" named is said too
        assert _notes(app)[-1].endswith("config.toml, or run /login in the app")
        assert app.session.model.label == "openai/gpt-5"


async def test_login_to_a_local_server_from_a_scripted_session_says_what_it_switches(
    workspace: Path, vis_home: Path, server: WireServer, tmp_path: Path
) -> None:
    from textual.widgets import Input

    from .support import write_script

    server.reply(openai_reply(text="local model here"))
    app = vis_app(workspace, write_script(tmp_path, [{"text": "scripted answer"}]))
    async with app.run_test(size=(110, 40)) as pilot:
        await started(app, pilot)
        assert app.session.model.label.startswith("scripted/")
        await type_keys(pilot, *"/login", "enter")
        await on_top(pilot, PickerScreen)
        rows = app.screen.shown
        assert rows[-1].label.startswith("Local OpenAI-compatible server")
        assert "uses scripted/script: logging in switches it" in app.screen.title_text
        await type_keys(pilot, *"local", "enter")
        await on_top(pilot, FormScreen)
        name, base_url, key = app.screen.query(Input)
        assert name.value == "local" and key.value == ""  # the key is optional
        base_url.value = "not a url"
        await pilot.press("ctrl+s")
        assert isinstance(app.screen, FormScreen) and app.screen.errors
        base_url.value = server.openai_base_url
        await pilot.press("ctrl+s")
        await on_top(pilot, PickerScreen)
        await type_keys(pilot, *"qwen3", "enter")
        await until(pilot, lambda: app.session.model.label == "local/qwen3")
        said = _notes(app)[-1]
        assert "This session used scripted/" in said and "it now uses local/qwen3" in said
        await _answered(app, pilot, "hello")
        assert app.main.transcript.last_answer == "local model here"
    assert server.bodies[-1]["model"] == "qwen3"
    assert server.requests[-1].headers.get("authorization") == "Bearer no-key-needed"
    config = (vis_home / "config.toml").read_text()
    assert "[providers.local]" in config and server.openai_base_url in config
    assert 'model = "local/qwen3"' in config and 'api_key_env = ""' in config


async def test_a_bad_name_or_short_key_keeps_the_local_server_form_open(
    workspace: Path, vis_home: Path, server: WireServer, tmp_path: Path
) -> None:
    """A cleared Name, a name Vis's own provider has or a 3-character key closed the form, and
    what was typed was lost ('Cannot add the server …' in the transcript): each is now said
    under its field, the form stays open with what was typed, and saves once they are right."""
    from textual.widgets import Input

    from .support import write_script

    app = vis_app(workspace, write_script(tmp_path, [{"text": "scripted answer"}]))
    async with app.run_test(size=(110, 40)) as pilot:
        await started(app, pilot)
        await type_keys(pilot, *"/login", "enter")
        await on_top(pilot, PickerScreen)
        await type_keys(pilot, *"local", "enter")
        await on_top(pilot, FormScreen)
        form = app.screen
        name, base_url, key = form.query(Input)
        base_url.value = server.openai_base_url
        for typed, said in (
            ("", "Required"),
            ("openai", "openai is a provider Vis knows already"),
            ("my box", "Name the server with a letter, then letters, digits, - or _"),
        ):
            name.value = typed
            await pilot.press("ctrl+s")
            assert app.screen is form and said in form.errors["name"], form.errors
        name.value, key.value = "box", "abc"
        await pilot.press("ctrl+s")
        assert app.screen is form and list(form.errors) == ["key"]
        assert "The key is 3 characters long" in form.errors["key"]
        assert base_url.value == server.openai_base_url and key.value == "abc"
        key.value = ""
        await pilot.press("ctrl+s")
        await on_top(pilot, PickerScreen)  # the server's models: saved
        assert not any("Cannot add the server" in note for note in _notes(app))
    assert "[providers.box]" in (vis_home / "config.toml").read_text()


def _scripted_first(vis_home: Path, workspace: Path, tmp_path: Path) -> VisApp:
    """The app with ``scripted/first`` as the saved default model (no command-line model, so
    the settings choose it) and a two-answer script."""
    (vis_home / "config.toml").write_text('model = "scripted/first"\n', encoding="utf-8")
    script = tmp_path / "script.yaml"
    script.write_text('- text: "one"\n- text: "two"\n', encoding="utf-8")
    return VisApp(HostOptions(workspace=workspace, script=script), frozen=True)


async def test_a_model_saved_in_settings_shows_in_the_status_bar_and_answers_next(
    workspace: Path, vis_home: Path, tmp_path: Path
) -> None:
    """The person changes the default model in Settings (F2) while a session is open: back
    on the main screen the status bar names the new model, and it answers the next request."""
    from vis_tui.screens.settings import SettingsScreen

    app = _scripted_first(vis_home, workspace, tmp_path)
    async with app.run_test(size=(100, 40)) as pilot:
        await started(app, pilot)
        await _answered(app, pilot, "hi")
        assert app.main.status_bar.model == "scripted/first"
        await pilot.press("f2")
        await on_top(pilot, SettingsScreen)
        await pilot.press("enter")  # the first row: the default model
        await type_keys(pilot, "ctrl+u", *"scripted/second", "enter")
        await until(pilot, lambda: app.session.model.label == "scripted/second")
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, SettingsScreen))
        assert app.main.status_bar.model == "scripted/second"
        await type_keys(pilot, *"again", "enter")
        await until(pilot, lambda: len(app.main.transcript.turns) == 2)
        await until(pilot, lambda: all(t.status for t in app.main.transcript.turns.values()))
        assert app.main.status_bar.model == "scripted/second"


async def test_the_status_bar_names_the_model_that_answered(
    workspace: Path, vis_home: Path, tmp_path: Path
) -> None:
    """A switch made outside the app's own commands (an extension's ``vis.session.set_model``,
    a saved setting while a turn runs) shows once the new model answers."""
    app = _scripted_first(vis_home, workspace, tmp_path)
    async with app.run_test(size=(100, 40)) as pilot:
        await started(app, pilot)
        await _answered(app, pilot, "hi")
        assert app.main.status_bar.model == "scripted/first"
        other = app.core._host.models.session_model(ModelChoice.parse("scripted/other"))
        await app.session.switch_model(other)  # the app is not told
        assert app.main.status_bar.model == "scripted/first"
        await type_keys(pilot, *"again", "enter")
        await until(pilot, lambda: app.main.status_bar.model == "scripted/other")
