"""``/model`` and ``/login`` in the app: the model picker, and provider → key → model setup."""

from __future__ import annotations

from typing import TYPE_CHECKING

from vis_core.frontend import (
    Form,
    ModelSource,
    ProviderEntry,
    check_base_url,
    check_key,
    check_server_key,
    check_server_name,
    default_model,
    err,
    paragraph,
    password,
    plaintext,
)
from vis_tui.screens.form import FormScreen
from vis_tui.screens.picker import PickerScreen, PickItem

if TYPE_CHECKING:
    from vis_core.frontend import CommandResult
    from vis_tui.app import VisApp

LOGIN = "\x00login"  # the picker row that starts /login (no model id holds a NUL)
LOCAL = "\x00local"  # the /login row of a server of one's own (no provider name holds a NUL)
_NOTES = {
    ModelSource.CURRENT: "current",
    ModelSource.RECENT: "recent",
    ModelSource.CONFIGURED: "configured",
    ModelSource.SERVED: "served",
    ModelSource.KNOWN: "",
    ModelSource.EXTENSION: "extension",
}


def model_items(app: VisApp, provider: str | None = None, *, keyed: bool = False) -> list[PickItem]:
    """The picker's rows: the current model, recent ones, configured ones, known ones.
    ``keyed``: the person just gave ``provider``'s key (saved with the model chosen)."""
    assert app.core is not None
    session = app.session
    current = session.model.label if session is not None and session.model.provider else None
    items = []
    for entry in app.core.model_entries(provider, current):
        notes = [_NOTES[entry.source]]
        if not entry.ready and not keyed:
            notes.append("needs a key: /login")
        items.append(PickItem(entry.id, entry.id, " · ".join(n for n in notes if n)))
    return items


async def choose_model(app: VisApp) -> None:
    """``/model``: pick one of the models (or start ``/login``) and switch the session to it."""
    if app.core is None or app.session is None:
        return
    app.core.reread_config()  # a provider added to config.toml since Vis started counts
    await app.core.ask_servers()
    items = [*model_items(app), PickItem(LOGIN, "Log in to a provider…", "save a key")]
    current = app.session.model.label
    picker = PickerScreen(
        "Model for this session",
        items,
        placeholder="provider/model — type to filter, or a model the list does not know",
        free_text=True,
        highlight=current,
    )
    chosen = await app.push_screen(picker, wait_for_dismiss=True)
    if chosen == LOGIN:
        await log_in(app)
    elif chosen:
        show_result(app, await app.core.use_model(app.session, chosen))


async def log_in(app: VisApp) -> None:
    """``/login``: choose a provider, paste its key in a secret form, pick a model."""
    core = app.core
    if core is None:
        return
    core.reread_config()
    rows = [PickItem(e.name, e.name, _provider_note(e)) for e in core.providers()]
    rows.append(
        PickItem(
            LOCAL, "Local OpenAI-compatible server…", "llama.cpp, Ollama, vLLM · URL, key optional"
        )
    )
    title = "Log in: choose a provider"
    session = app.session
    if session is not None and session.model.label.startswith("scripted/"):
        title += f" (this session uses {session.model.label}: logging in switches it)"
    name = await app.push_screen(PickerScreen(title, rows), wait_for_dismiss=True)
    key = ""
    if name == LOCAL:
        local = await _local_server(app)
        if local is None:
            return
        entry, key = local
    else:
        entry = core.provider_named(name) if name else None
    if entry is None:
        return cancelled(app)
    if entry.key_env and not key:
        form = Form(
            f"{entry.name} API key",
            (
                paragraph(f"Saved in {core.secrets_file} (only you can read it)."),
                password("key", entry.key_env, is_required=True, validate=(check_key,)),
            ),
            submit_label="Save key",
        )
        values = await app.push_screen(FormScreen(form), wait_for_dismiss=True)
        if values is None:
            return cancelled(app)
        key = str(values.get("key", ""))
    problem = (await core.ask_servers(entry.name)).get(entry.name)
    model = await app.push_screen(
        PickerScreen(
            f"Log in: choose a model from {entry.name}",  # not "a anthropic model"
            model_items(app, entry.name, keyed=bool(key)),
            placeholder=f"{entry.name}/model — type to filter or to name another",
            free_text=True,
            highlight=default_model(entry),
            empty=(
                f"No model to offer: {problem}. Type the name of the model the server "
                "serves and press Enter."
                if problem
                else "No model to offer: type the model's name and press Enter."
            ),
        ),
        wait_for_dismiss=True,
    )
    if not model:
        return cancelled(app)
    if "/" not in model:
        model = f"{entry.name}/{model}"
    result = await core.login(app.session, entry, key, model)
    if result.ok:
        app.main.forget_model_problem()
    show_result(app, result)


async def _local_server(app: VisApp) -> tuple[ProviderEntry, str] | None:
    """The server's name, base URL and optional key, saved to config.toml (None: cancelled
    or refused, and said so). The form checks each field and stays open until they do."""
    assert app.core is not None
    form = Form(
        "Local OpenAI-compatible server",
        (
            paragraph(
                "A server of your own that speaks the OpenAI API: llama.cpp's llama-server, "
                "Ollama, vLLM, LM Studio. Saved as [providers.NAME] in "
                f"{app.core.config_file}."
            ),
            plaintext(
                "name",
                "Name (the provider/ part of its models)",
                default="local",
                is_required=True,
                validate=(check_server_name,),
            ),
            plaintext(
                "base_url",
                "Base URL",
                default="http://127.0.0.1:8080/v1",
                is_required=True,
                validate=(check_base_url,),
            ),
            password(
                "key",
                "API key (leave empty when the server needs none)",
                validate=(check_server_key,),
            ),
        ),
        submit_label="Save server",
    )
    values = await app.push_screen(FormScreen(form), wait_for_dismiss=True)
    if values is None:
        cancelled(app)
        return None
    key = str(values.get("key") or "")
    try:
        entry = await app.core.save_local_server(
            str(values.get("name") or ""), str(values.get("base_url") or ""), key
        )
    except ValueError as exc:
        show_result(app, err("Cannot add the server", str(exc)))
        return None
    return entry, key


def _provider_note(entry: ProviderEntry) -> str:
    """``openai wire · key OPENAI_API_KEY``: how the provider talks and where its key is."""
    wire = f"{entry.kind} wire · " if entry.kind != entry.name else ""
    if not entry.key_env:
        return wire + "no key needed"
    return wire + ("key set" if entry.has_key else f"needs {entry.key_env}")


def cancelled(app: VisApp) -> None:
    app.main.transcript.add_message("Login cancelled; nothing was saved.", classes="warning")


def show_result(app: VisApp, result: CommandResult) -> None:
    text = result.title + (f"\n{result.body}" if result.body else "")
    app.main.transcript.add_message(text, classes="" if result.ok else "error", plain=True)
    if app.session is not None:
        app.main.status_bar.model = app.session.model.label
