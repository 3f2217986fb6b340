"""The model resolver: which model the project and each session use, and their providers."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from vis_core.agent.deps import SessionModel
from vis_core.config import ConfigFile, UserConfig
from vis_core.extension_host.session_workers import SessionWorkers
from vis_core.extension_host.worker_client import WorkerPlace
from vis_core.host.extensions import ExtensionCatalog
from vis_core.host.workspace import Workspace
from vis_core.host_options import HostOptions
from vis_core.providers.base import ModelChoice, ProviderConfigError, ProviderError
from vis_core.settings.service import SettingsService
from vis_core.welcome import choose_model, model_state, provider_environ, saved_keys


@dataclass(eq=False)
class ModelResolver:
    """``config.toml``, the model it and the settings choose, and a provider per session
    (an extension's provider streams in the session's extension worker). ``workers``: the
    extension worker of an open session, if it has one; ``place``: the host's, where a
    provider's worker started for one call runs."""

    options: HostOptions
    config_file: ConfigFile
    settings: SettingsService
    catalog: ExtensionCatalog
    workspace: Workspace
    workers: Callable[[str], SessionWorkers | None]
    place: WorkerPlace
    choice: ModelChoice | None = field(init=False, default=None)
    label: str = field(init=False, default="no model")
    problem: str | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        self.refresh()

    @property
    def config(self) -> UserConfig:
        """``config.toml`` as it is now. When it changed on disk since it was read, it is
        read again, and with it the settings it holds (the ``model``, the key variables
        to redact) and the project's model: a provider added while Vis runs counts. Not
        while a change of the settings is under way (it may be writing the file): then at
        the next read after it."""
        if not self.settings.order.busy and self.config_file.reread():
            self.settings.refresh()
            self.refresh()
        return self.config_file.current()

    def model_for(self, session_id: str | None = None) -> ModelChoice | None:
        """The model of ``session_id`` (the project's without one): ``--provider``/``--model`` >
        ``VIS_MODEL`` > the ``model`` setting (``--toggles`` > session > group > project >
        global) > a key's default. Raises ``ValueError``/``ProviderConfigError`` naming the
        source of a bad value."""
        return choose_model(
            provider=self.options.provider,
            model=self.options.model,
            config=self.config.data,
            settings=self.settings,
            environ=self.provider_environ(),
            session_id=session_id,
        )

    def provider_environ(self) -> dict[str, str]:
        """Where provider keys are read: the environment, else keys saved by ``/login``."""
        return provider_environ(saved_keys(self.settings), os.environ)

    def refresh(self) -> None:
        """Resolve the project's model again (after ``/login`` saved a key and a model)."""
        state = model_state(lambda: self.model_for(None))
        self.choice, self.label, self.problem = state.choice, state.label, state.problem

    def session_model(
        self,
        choice: ModelChoice | None = None,
        *,
        script: Path | None = None,
        session_id: str | None = None,
    ) -> SessionModel:
        """A fresh provider for one session (scripted scripts are consumed per session;
        ``script`` replaces the one Vis was started with). A provider an extension declares
        streams in ``session_id``'s extension worker (without one, in a worker of its own)."""
        from vis_core.providers.factory import create_provider

        choice = choice or self.choice
        if choice is None:
            return SessionModel(None, "", "no model", self.problem)
        label = f"{choice.provider}/{choice.model}"
        declared = self._extension_provider(choice, session_id)
        if declared is not None:
            return declared
        try:
            provider = create_provider(
                choice,
                self.config.data,
                self.provider_environ(),
                script=script or self.options.script,
            )
        except (ValueError, ProviderConfigError) as exc:
            return SessionModel(None, choice.model, label, str(exc))
        return SessionModel(provider, choice.model, label)

    def label_of(self, session_id: str) -> str:
        """``provider/model`` of the session's effective model ("no model" without one)."""
        return model_state(lambda: self.model_for(session_id)).label

    def model_of_session(self, session_id: str) -> SessionModel:
        """A provider for the session's effective model (its own, group's or project's)."""
        try:
            choice = self.model_for(session_id)
        except (ValueError, ProviderConfigError) as exc:
            return SessionModel(None, "", "no model", str(exc), session_id)
        return replace(self.session_model(choice, session_id=session_id), chosen_for=session_id)

    def _extension_provider(
        self, choice: ModelChoice, session_id: str | None
    ) -> SessionModel | None:
        """The model ``choice`` of a provider an extension declares (``vis.Provider``); None
        when no extension declares it, or config.toml has a ``[providers.NAME]`` of its own."""
        extensions = self.catalog.loaded
        if not any(e.declaration and e.declaration.providers for e in extensions.enabled):
            return None  # none declares a provider (most starts): nothing more to import
        from vis_core.extension_host.provider_stream import ExtensionProvider, declared_providers

        tables = self.config.data.get("providers")
        if isinstance(tables, Mapping) and choice.provider in tables:
            return None
        found = declared_providers(extensions).get(choice.provider)
        if found is None:
            return None
        owner, declaration = found
        place = replace(self.place, session_id=session_id)
        values = self.workspace.project_values
        provider = ExtensionProvider(
            owner,
            declaration,
            lambda: self.workers(session_id) if session_id else None,
            lambda: SessionWorkers(self.catalog.current, place, values()),
            overrides=choice.options,
        )
        label = f"{choice.provider}/{choice.model}"
        try:
            provider.model_info(choice.model)  # a model it declares, with valid overrides
        except ProviderError as exc:
            return SessionModel(None, choice.model, label, str(exc))
        return SessionModel(provider, choice.model, label)
