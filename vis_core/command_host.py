"""What slash commands and model choices use of the running Vis (``vis_core.host.Host``)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from vis_core.extension_host.host_port import HostPort

if TYPE_CHECKING:
    from vis_core.agent.deps import SessionModel
    from vis_core.config import UserConfig
    from vis_core.extension_host.loaded import LoadedExtensions
    from vis_core.host_options import HostOptions
    from vis_core.mcp.host import HostMcp
    from vis_core.paths import VisPaths
    from vis_core.providers.base import ModelChoice
    from vis_core.settings import SettingsService
    from vis_core.store import Store


class Catalog(Protocol):
    """The loaded extensions' declarations (the host's ``ExtensionCatalog``)."""

    def commands(self) -> list[tuple[str, Any]]: ...


class Models(Protocol):
    """The host's ``ModelResolver``, as model choices use it."""

    def provider_environ(self) -> dict[str, str]: ...
    def refresh(self) -> None: ...


class CommandHost(HostPort, Protocol):
    """The host as commands and model choices see it (and what ``/fork`` hands on to the
    SDK's host side); the Host provides it."""

    @property
    def options(self) -> HostOptions: ...
    @property
    def paths(self) -> VisPaths: ...
    @property
    def store(self) -> Store: ...
    @property
    def settings(self) -> SettingsService: ...
    @property
    def extensions(self) -> LoadedExtensions: ...
    @property
    def mcp(self) -> HostMcp: ...
    @property
    def catalog(self) -> Catalog: ...
    @property
    def models(self) -> Models: ...

    @property
    def config(self) -> UserConfig: ...

    @property
    def workspace(self) -> Path: ...
    @property
    def project_root(self) -> Path: ...
    @property
    def trusted(self) -> bool: ...
    @property
    def model_label(self) -> str: ...
    @property
    def model_problem(self) -> str | None: ...

    def reread_config(self) -> None: ...
    def session_model(
        self,
        choice: ModelChoice | None = None,
        *,
        script: Path | None = None,
        session_id: str | None = None,
    ) -> SessionModel: ...
    def jail_mode(self, session_id: str | None = None) -> tuple[bool, str]: ...
    async def reload_async(self) -> str: ...
    async def call_extension(
        self,
        owner: str,
        fn: Callable[..., Any],
        *args: Any,
        session_id: str | None = None,
        command: str | None = None,
    ) -> Any: ...
