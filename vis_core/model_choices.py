"""What ``/model`` and ``/login`` offer (providers, known and recent models) and what they save."""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import partial
from typing import TYPE_CHECKING

from vis_core.extension.declarations import CommandResult, err, ok
from vis_core.model.choices import ModelEntry, ModelSource, ProviderEntry
from vis_core.model.providers import ProviderKind
from vis_core.providers.base import ModelChoice, ProviderConfigError
from vis_core.providers.factory import (
    DEFAULT_ANTHROPIC_MODEL,
    DEFAULT_KEY_ENV,
    DEFAULT_OPENAI_MODEL,
    default_kind,
)
from vis_core.providers.models import KNOWN_MODELS
from vis_core.system.redaction import hide_credentials, short_secret_problem
from vis_core.welcome import KEY_PREFIX

if TYPE_CHECKING:
    from vis_core.agent.session import AgentSession
    from vis_core.command_host import CommandDeps
    from vis_core.extension.providers import Provider

RECENT_OWNER, RECENT_KEY = "vis.models", "recent"
SERVED_KEY = "served"  # {provider: [model, …]} as each server last listed them
RECENT_LIMIT = 8
DEFAULT_MODELS = {"anthropic": DEFAULT_ANTHROPIC_MODEL, "openai": DEFAULT_OPENAI_MODEL}
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _kind_models(kind: str) -> list[str]:
    if kind == ProviderKind.ANTHROPIC:
        return [name for name in KNOWN_MODELS if name.startswith("claude")]
    if kind == ProviderKind.OPENAI:
        return [name for name in KNOWN_MODELS if not name.startswith("claude")]
    return []


def providers(deps: CommandDeps) -> list[ProviderEntry]:
    """anthropic, openai and every ``[providers.NAME]`` of config.toml (scripted aside)."""
    environ = deps.models.provider_environ()
    tables = deps.models.config.data.get("providers")
    tables = tables if isinstance(tables, Mapping) else {}
    wires = (ProviderKind.ANTHROPIC, ProviderKind.OPENAI)
    names = [*(w.value for w in wires), *(str(n) for n in tables if n not in wires)]
    found = []
    for name in names:
        section = tables.get(name)
        section = section if isinstance(section, Mapping) else {}
        kind = section.get("kind") or default_kind(name, name in tables)
        if kind not in wires:
            continue
        key_env = section.get("api_key_env")
        key_env = DEFAULT_KEY_ENV.get(name, "") if not isinstance(key_env, str) else key_env
        found.append(ProviderEntry(name, str(kind), key_env, bool(environ.get(key_env))))
    return found


def recent_models(deps: CommandDeps) -> list[str]:
    value = deps.store.state_get(RECENT_OWNER, RECENT_KEY, [])
    return [str(item) for item in value] if isinstance(value, list) else []


def remember_model(deps: CommandDeps, label: str) -> None:
    recent = [label, *(item for item in recent_models(deps) if item != label)]
    deps.store.state_set(RECENT_OWNER, RECENT_KEY, recent[:RECENT_LIMIT])


def model_entries(
    deps: CommandDeps, provider: str | None = None, current: str | None = None
) -> list[ModelEntry]:
    """``current``, recently used ones, ``[models."p/m"]`` tables, then the known models of
    providers with a key, then of the others; only ``provider``'s when given."""
    known = {entry.name: entry for entry in providers(deps)}
    declared = extension_providers(deps)
    rows: dict[str, ModelEntry] = {}

    def add(model_id: str, source: ModelSource) -> None:
        name = model_id.partition("/")[0]
        if provider is not None and name != provider:
            return
        if model_id not in rows and "/" in model_id:
            entry = known.get(name)
            ready = entry.ready if entry is not None else name in ("scripted", *declared)
            rows[model_id] = ModelEntry(model_id, source, ready)

    if current:
        add(current, ModelSource.CURRENT)
    for label in recent_models(deps):
        add(label, ModelSource.RECENT)
    configured = deps.models.config.data.get("models")
    for key in configured if isinstance(configured, Mapping) else ():
        add(str(key), ModelSource.CONFIGURED)
    for name, models in served(deps).items():
        for model in models if name in known else ():  # a server still configured
            add(f"{name}/{model}", ModelSource.SERVED)
    for name, (_owner, declaration) in declared.items():
        for model in declaration.models:
            add(f"{name}/{model.name}", ModelSource.EXTENSION)
    for entry in sorted(known.values(), key=lambda entry: not entry.ready):
        # an endpoint of one's own (Ollama, vLLM…) serves its own models, not OpenAI's
        for name in _kind_models(entry.kind) if entry.name == entry.kind else ():
            add(f"{entry.name}/{name}", ModelSource.KNOWN)
    return list(rows.values())


def extension_providers(deps: CommandDeps) -> dict[str, tuple[str, Provider]]:
    """The providers extensions declare that config.toml does not name: name → (extension,
    declaration)."""
    from vis_core.extension_host.provider_stream import declared_providers

    tables = deps.models.config.data.get("providers")
    tables = tables if isinstance(tables, Mapping) else {}
    found = declared_providers(deps.catalog.loaded).items()
    return {name: item for name, item in found if name not in tables}


def served(deps: CommandDeps) -> dict[str, list[str]]:
    """The models each server of one's own listed when last asked (``ask_servers``)."""
    value = deps.store.state_get(RECENT_OWNER, SERVED_KEY, {})
    if not isinstance(value, dict):
        return {}
    return {str(k): [str(m) for m in v] for k, v in value.items() if isinstance(v, list)}


def own_servers(deps: CommandDeps) -> dict[str, tuple[str, str]]:
    """The OpenAI-compatible servers of one's own in config.toml: name → (base_url, key)."""
    environ = deps.models.provider_environ()
    tables = deps.models.config.data.get("providers")
    found = {}
    for entry in providers(deps):
        section = tables.get(entry.name) if isinstance(tables, Mapping) else None
        url = section.get("base_url") if isinstance(section, Mapping) else None
        openai = ProviderKind.OPENAI
        if entry.kind == openai and entry.name != openai and isinstance(url, str) and url:
            found[entry.name] = (url, environ.get(entry.key_env, "") if entry.key_env else "")
    return found


async def ask_servers(deps: CommandDeps, only: str | None = None) -> dict[str, str]:
    """Ask each server of one's own (or ``only`` that one) which models it serves (its
    ``/v1/models``, a few seconds at most) and remember them for ``model_entries``.
    Returns why a server could not say, by provider name."""
    from vis_core.providers.server_limits import served_models

    servers = {n: s for n, s in own_servers(deps).items() if only is None or n == only}
    if not servers:
        return {}
    answers = await served_models(list(servers.values()))
    listed = served(deps)
    problems: dict[str, str] = {}
    for name, answer in zip(servers, answers, strict=True):
        if isinstance(answer, OSError):
            problems[name] = str(answer)
        else:
            listed[name] = answer
            if not answer:
                url = hide_credentials(servers[name][0].rstrip("/"))
                problems[name] = f"{url}/models lists no models"
    deps.store.state_set(RECENT_OWNER, SERVED_KEY, listed)
    return problems


def default_model(entry: ProviderEntry) -> str:
    return f"{entry.name}/{DEFAULT_MODELS.get(entry.kind, '')}"


def check_key(key: str) -> str | None:
    """Why ``key`` cannot be a provider key (None when it can)."""
    if not key.strip():
        return "The key is empty; paste the API key of the provider."
    if any(ord(c) < 32 or ord(c) == 127 or c.isspace() for c in key.strip()):
        return "The key holds spaces or control characters; paste only the key."
    short = short_secret_problem("The key", key.strip())
    return None if short is None else f"{short}; paste the whole API key."


async def save_key(deps: CommandDeps, entry: ProviderEntry, key: str) -> None:
    """Save ``key`` for ``entry`` in the secrets file (0600), where settings secrets live, as
    one change of the settings; stored events and logs of every workspace redact it from now
    on."""
    problem = check_key(key)
    if problem is not None:
        raise ValueError(problem)
    if not _ENV_NAME.fullmatch(entry.key_env):
        raise ValueError(f"provider {entry.name!r} reads no key (api_key_env is empty)")
    secrets = deps.settings.secrets
    await deps.settings.edit_files(partial(secrets.write, KEY_PREFIX + entry.key_env, key.strip()))


def unknown_model(deps: CommandDeps, session: AgentSession, text: str) -> CommandResult | None:
    """Why ``/model text`` is refused: a model of a known provider that Vis does not know
    (not current, recent, in a ``[models]`` table nor a provider's list), often a typo or a
    stale completion. None when it is known, or when :func:`use_model` says what is wrong."""
    name = text.strip()
    provider, _, model = name.partition("/")
    if not model or provider not in {entry.name for entry in providers(deps)}:
        return None  # no provider/model, or a provider Vis cannot build: use_model says so
    current = session.model.label if session.model.provider is not None else None
    ids = [entry.id for entry in model_entries(deps, current=current)]
    if name in ids:
        return None
    from difflib import get_close_matches

    close = get_close_matches(name, ids, n=3, cutoff=0.6)
    guess = f"Did you mean {', '.join(f'`{c}`' for c in close)}? " if close else ""
    return err(
        f"Vis does not know the model {name}",
        f"{guess}It is not a model Vis lists for `{provider}`, one used before, nor a "
        f'`[models."{name}"]` table of config.toml. `/model` opens the list of known models; '
        f'to use this one anyway, add `[models."{name}"]` to config.toml (`vis doctor` prints '
        "where it is). The model is unchanged.",
    )


async def use_model(deps: CommandDeps, session: AgentSession, text: str) -> CommandResult:
    """Switch ``session`` to the model ``text`` (``provider/model``), kept with the session."""
    _ = deps.models.config  # read again: a provider added to config.toml since Vis started counts
    try:
        choice = ModelChoice.parse(text.strip())
    except ValueError as exc:
        return err("Cannot switch the model", str(exc))
    model = deps.models.session_model(choice, session_id=session.id)
    if model.provider is None:
        return err(f"Cannot use {model.label}", model.problem)
    try:
        await deps.settings.set("model", model.label, "session", session_id=session.id)
    except ValueError as exc:
        await model.provider.aclose()
        return err(f"Cannot use {model.label}", str(exc))
    if session.next_model.label == model.label:  # the settings listener switched it already
        await model.provider.aclose()
    else:  # unchanged, or --model decides the saved model: the choice holds for this run
        await session.switch_model(model)
    remember_model(deps, model.label)
    return ok(f"Model: {session.next_model.label}")


async def login(
    deps: CommandDeps, session: AgentSession | None, entry: ProviderEntry, key: str, model: str
) -> CommandResult:
    """``/login``: save the provider's key, make ``model`` the default, use it now."""
    if model.partition("/")[0] != entry.name:
        return err("Cannot log in", f"model {model!r} is not one of {entry.name}'s")
    try:
        if entry.key_env:
            await save_key(deps, entry, key)
        await deps.settings.set("model", model, "global")
    except (ValueError, ProviderConfigError) as exc:
        return err("Cannot log in", str(exc))
    deps.models.refresh()
    if deps.models.problem:
        return err("Cannot log in", deps.models.problem)
    if session is None:
        return ok(f"Model: {deps.models.label}")
    before = session.model.label if session.model.provider is not None else None
    result = await use_model(deps, session, model)
    if not result.ok:
        return result
    where = f"key saved in {deps.paths.secrets_file}; " if entry.key_env else ""
    body = f"Logged in to {entry.name}: {where}default model saved."
    if before is not None and before != session.model.label:
        body += f" This session used {before}; it now uses {session.model.label}."
    return ok(result.title, body)


_PROVIDER_NAME = re.compile(r"^[a-z][a-z0-9_-]{0,31}$")
RESERVED_PROVIDERS = frozenset({"anthropic", "openai", "scripted"})


def check_base_url(url: str) -> str | None:
    """Why ``url`` cannot be an OpenAI-compatible server's base URL (None when it can)."""
    text = url.strip()
    if not re.match(r"^https?://[^\s/]+", text):
        return "Write the server's URL, e.g. http://127.0.0.1:8080/v1 (llama.cpp)."
    return None


def check_server_name(name: str) -> str | None:
    """Why ``name`` cannot name a server of one's own (None when it can; read in lower case)."""
    name = name.strip().lower()
    if name in RESERVED_PROVIDERS:
        return f"{name} is a provider Vis knows already: give the server a name of its own."
    if not _PROVIDER_NAME.fullmatch(name):
        return "Name the server with a letter, then letters, digits, - or _ (up to 32), e.g. local."
    return None


def check_server_key(key: str) -> str | None:
    """Why ``key`` cannot be a server's optional key (None when it can: none is fine)."""
    return check_key(key) if key.strip() else None


async def save_local_server(
    deps: CommandDeps, name: str, base_url: str, key: str = ""
) -> ProviderEntry:
    """``/login`` to an OpenAI-compatible server of one's own (llama.cpp, Ollama, vLLM…):
    ``[providers.NAME]`` with ``kind = "openai"`` and ``base_url`` in config.toml; a key,
    when given, is saved as a secret under ``NAME_API_KEY`` (none: the server needs none)."""
    from vis_core.settings.storage import edit_toml

    problem = check_server_name(name) or check_base_url(base_url) or check_server_key(key)
    if problem is not None:
        raise ValueError(problem)
    name = name.strip().lower()
    key_env = f"{name.upper().replace('-', '_')}_API_KEY" if key.strip() else ""
    entry = ProviderEntry(name, "openai", key_env, bool(key_env))
    if key_env:
        await save_key(deps, entry, key)
    section = {
        "kind": ProviderKind.OPENAI.value,
        "base_url": base_url.strip(),
        "api_key_env": key_env,
    }

    def write() -> None:
        with edit_toml(deps.paths.config_file) as data:
            if "providers" not in data:
                import tomlkit

                data["providers"] = tomlkit.table(is_super_table=True)
            data["providers"][name] = section

    await deps.settings.edit_files(write)
    _ = deps.models.config  # read again: config.toml as just written
    return entry


def entry_named(deps: CommandDeps, name: str) -> ProviderEntry | None:
    return next((entry for entry in providers(deps) if entry.name == name), None)
