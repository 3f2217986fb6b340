"""The model and jail mode a workspace resolves to, and what a new session's welcome header
says, read from the files alone (no store, no extensions): the app paints it before the Host."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vis_core.model.channel import Channel
from vis_core.model.welcome import WelcomeFacts
from vis_core.paths import (
    ControlSnapshot,
    TrustStore,
    VisPaths,
    find_project_root,
    take_snapshot,
    vis_folders,
)
from vis_core.providers.base import ModelChoice, ProviderConfigError
from vis_core.settings.reading import SettingsReader
from vis_core.settings.values import Source
from vis_core.system import jail_check
from vis_core.system.jail import jail_refusal
from vis_core.system.jail_paths import ReadPaths, hidden_path_entries, home_relative, read_paths

LOGIN_HINT = "  4. In the app: /login chooses a provider, saves its key and picks\n     a model.\n"
# A provider key saved by /login is kept in the secrets file under its environment variable's
# name with this prefix (setting ids are lower-case snake_case, so the two never collide).
KEY_PREFIX = "env:"


@dataclass(frozen=True)
class ModelState:
    """The project's model: the choice, its label and, when there is none, why."""

    choice: ModelChoice | None
    label: str = "no model"
    problem: str | None = None


def saved_keys(settings: SettingsReader) -> dict[str, str]:
    """Provider keys saved by ``/login``, by environment variable name (unreadable file: none)."""
    try:
        values = settings.secrets.values()
    except ValueError:
        return {}
    return {k[len(KEY_PREFIX) :]: v for k, v in values.items() if k.startswith(KEY_PREFIX)}


def provider_environ(saved: Mapping[str, str], environ: Mapping[str, str]) -> dict[str, str]:
    """The variables providers read their keys from: saved keys, overridden by the real
    environment (a key exported in the shell wins, as ``--model`` wins over config)."""
    return {**saved, **environ}


def choose_model(
    *,
    provider: str | None,
    model: str | None,
    config: Mapping[str, Any],
    settings: SettingsReader,
    environ: Mapping[str, str],
    session_id: str | None = None,
) -> ModelChoice | None:
    """The model of ``session_id`` (the project's without one): ``--provider``/``--model`` >
    ``VIS_MODEL`` > the ``model`` setting (``--toggles`` > session > group > project >
    global) > a key's default. Raises ``ValueError``/``ProviderConfigError`` naming the
    source of a bad value."""
    from vis_core.providers.factory import resolve_model

    if provider == "scripted":
        return ModelChoice("scripted", "script")
    if provider:
        if not model:
            raise ValueError(f"--provider {provider} needs --model MODEL")
        if "/" not in model:
            model = f"{provider}/{model}"
        return ModelChoice.parse(model)
    config = dict(config)  # [providers] and [models] stay as config.toml has them
    resolution = settings.resolve("model", session_id)  # read again with the file
    if resolution.source is not Source.DEFAULT:
        config["model"] = resolution.value
        chosen_here = not model and not os.environ.get("VIS_MODEL")
        if chosen_here and resolution.source is not Source.GLOBAL:
            _check_model_value(resolution.value, resolution.source.value)
    elif not resolution.ignored:  # reset in Settings since startup
        config.pop("model", None)
    # A config.toml value the settings ignore stays, so resolve_model explains it.
    return resolve_model(model, config, environ)


def model_state(choose: Any) -> ModelState:
    """The project's model as ``choose()`` (:func:`choose_model` bound) finds it, its label,
    and the help to show when there is none."""
    from vis_core.providers.factory import no_model_help

    try:
        choice = choose()
    except (ValueError, ProviderConfigError) as exc:
        return ModelState(None, problem=str(exc))
    if choice is None:
        return ModelState(None, problem=no_model_help(os.environ) + LOGIN_HINT)
    return ModelState(choice, f"{choice.provider}/{choice.model}")


def jail_policy(settings: SettingsReader, session_id: str | None = None) -> tuple[bool, str | None]:
    """Whether the jail is on for ``session_id``, and why nothing may run (fail closed):
    when the ``jail`` setting cannot be read, blocks and shell commands are refused."""
    problem = settings.unreadable("jail", session_id)
    if problem is not None:
        return True, jail_refusal(problem)
    try:
        on = settings.value("jail", session_id)
    except KeyError:
        on = False
    return bool(on), None


def jail_mode(
    settings: SettingsReader, workspace: Path, session_id: str | None = None
) -> tuple[bool, str]:
    """Whether blocks and shell commands of ``session_id`` run jailed, and one line that
    says so: the mode, why, and what to install where the jail cannot run."""
    on, refusal = jail_policy(settings, session_id)
    if refusal is not None:
        return True, refusal
    problem = jail_check.jail_problem()
    if on and problem is None and Path(workspace).resolve() == Path("/"):
        problem = "the workspace is the root folder /; start Vis in a project folder"
    if on and problem is None:
        return True, (
            "jailed: blocks and shell commands see only the workspace and cannot change "
            "Vis or the project's control files (bubblewrap)"
        ) + _jail_view(settings, workspace, session_id)
    if on:
        return True, (
            f"the jail is on but cannot run here, so no block or shell command runs: {problem}"
        )
    source = settings.resolve("jail", session_id).source.value
    if source == "default":
        why = f"the jail cannot run here: {problem}"
    else:
        why = f"the jail setting is false ({source} setting); set jail = true to confine them"
    return False, f"not jailed: blocks and shell commands run with your permissions; {why}"


def jail_read_paths(settings: SettingsReader, session_id: str | None = None) -> ReadPaths:
    """The folders the ``jail_read_paths`` setting shows read-only in the jail, and the
    entries it leaves out (a hand-edited config can hold any text; a value that cannot be
    read shows none)."""
    try:
        value = str(settings.get("jail_read_paths", "", session_id) or "")
    except ValueError:
        value = ""
    return read_paths(value, vis_folders())


def _jail_view(settings: SettingsReader, workspace: Path, session_id: str | None) -> str:
    """What the jail shows beyond the workspace, when the person should know: the folders of
    ``jail_read_paths`` it leaves out, and the folders of their PATH it hides."""
    view = jail_read_paths(settings, session_id)
    said = [f"; jail_read_paths leaves out {why}" for why in view.left_out]
    hidden = hidden_path_entries(os.environ, workspace, view.shown)
    if hidden:
        names = ", ".join(home_relative(p) for p in hidden)
        said.append(
            f"; commands in {names} (on your PATH) are not found there: the setting "
            "jail_read_paths shows folders read-only (F2 or /settings in the app, "
            "vis settings set from a shell)"
        )
    return "".join(said)


def verified(paths: VisPaths, project_root: Path) -> tuple[ControlSnapshot, bool]:
    """The project's control files read once, and whether the person trusted exactly these
    (an unreadable trust list trusts nothing; the settings report it)."""
    try:
        return TrustStore(paths).verified(project_root)
    except RuntimeError:
        return take_snapshot(project_root, hashed=False), False


def welcome_facts(
    workspace: Path,
    *,
    provider: str | None = None,
    model: str | None = None,
    toggles: tuple[str, ...] = (),
    channel: Channel = Channel.TUI,
) -> WelcomeFacts:
    """What the welcome header of a new session in ``workspace`` says, as the Host would
    find it, read from ``config.toml``, the settings files, the trust list and the
    environment (Vis's own settings: extensions' are not needed for it)."""
    from vis_core.config import load_config

    paths = VisPaths.from_env()
    workspace = workspace.resolve()
    project_root = find_project_root(workspace)
    snapshot, _ = verified(paths, project_root)
    settings = SettingsReader(
        paths=paths,
        store=None,
        project_root=project_root,
        workspace=workspace,
        extensions=lambda: None,
        toggles=toggles,
        channel=channel,
        snapshot=snapshot,
    )
    config = load_config(paths.config_file).data
    environ = provider_environ(saved_keys(settings), os.environ)
    state = model_state(
        lambda: choose_model(
            provider=provider, model=model, config=config, settings=settings, environ=environ
        )
    )
    return WelcomeFacts(
        model=state.label if state.problem is None else "",
        trusted=settings.trusted,
        jail=jail_mode(settings, workspace),
        lapsed=settings.trust_lapsed,
    )


def _check_model_value(value: object, source: str) -> None:
    """A ``model`` setting saved outside config.toml must read ``provider/model``."""
    text = str(value).strip()
    if not text or text == "scripted":
        return
    try:
        ModelChoice.parse(text)
    except ValueError as exc:
        raise ValueError(
            f"the {source} value of setting 'model' ({text!r}) is not usable: {exc}; "
            "change or reset it in /settings"
        ) from None
