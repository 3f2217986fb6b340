"""What slash commands and model choices use of the running Vis: its services, narrowly."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from vis_core.agent.deps import SessionModel
    from vis_core.config import UserConfig
    from vis_core.extension_host.loaded import LoadedExtensions
    from vis_core.host_options import HostOptions
    from vis_core.mcp.host import HostMcp
    from vis_core.paths import VisPaths
    from vis_core.providers.base import ModelChoice
    from vis_core.settings.service import SettingsService
    from vis_core.store import Store


class Space(Protocol):
    """The workspace and its project's trust (the host's ``Workspace``)."""

    root: Path
    project_root: Path

    @property
    def trusted(self) -> bool: ...
    def jail_mode(self, session_id: str | None = None) -> tuple[bool, str]: ...


class Catalog(Protocol):
    """The loaded extensions and their declarations (the host's ``ExtensionCatalog``)."""

    loaded: LoadedExtensions

    def commands(self) -> list[tuple[str, Any]]: ...


class Models(Protocol):
    """The project's model and ``config.toml`` (the host's ``ModelResolver``)."""

    label: str
    problem: str | None

    @property
    def config(self) -> UserConfig: ...  # read again when it changed on disk
    def provider_environ(self) -> dict[str, str]: ...
    def refresh(self) -> None: ...
    def session_model(
        self,
        choice: ModelChoice | None = None,
        *,
        script: Path | None = None,
        session_id: str | None = None,
    ) -> SessionModel: ...


class ExtensionCall(Protocol):
    """Run slash command ``command`` of extension ``owner`` in its worker, as a call of
    ``owner`` in session ``session_id``."""

    def __call__(
        self, owner: str, command: str, *args: Any, session_id: str | None = None
    ) -> Awaitable[Any]: ...


@dataclass(frozen=True)
class CommandDeps:
    """The services commands and model choices use (the composition root builds it)."""

    options: HostOptions
    paths: VisPaths
    store: Store
    settings: SettingsService
    space: Space
    catalog: Catalog
    models: Models
    mcp: HostMcp
    reload: Callable[[], Awaitable[str]]  # every extension read again, off the loop
    call_extension: ExtensionCall
