"""What the loader produced: each extension with its source, status, error and declaration."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vis_core.extension.declarations import Extension, Setting, SlashCommand
from vis_core.extension_host.discovery import Candidate
from vis_core.extension_host.entry import LoadError
from vis_core.model.extensions import ExtensionSource, ExtensionStatus
from vis_core.tools.registry import HostTool

DEFAULT_LOAD_TIMEOUT = 10.0  # seconds one entry file may take to load (extension_load_timeout)

if TYPE_CHECKING:
    from vis_core.paths import ControlSnapshot, VisPaths
    from vis_core.tools.discovery import Guide


@dataclass(frozen=True, eq=False)
class LoadedExtension:
    """One discovered extension: where it came from, how it loaded, what it declares.

    Every extension, Vis's bundled ones included, was loaded in the registration worker
    only: its ``declaration`` is rebuilt from the data it reported there (kept between starts
    for the bundled ones), with markers in place of its functions, which run in the session's
    worker. The host holds no module of any extension.
    """

    name: str
    source: ExtensionSource
    path: Path
    status: ExtensionStatus
    candidate: Candidate  # its entry file, for the session worker to load it
    declaration: Extension | None = None
    error: LoadError | None = None
    tools: tuple[HostTool, ...] = ()
    overridden_by: Path | None = None

    @property
    def alias(self) -> str | None:
        return None if self.declaration is None else self.declaration.alias

    @property
    def tag(self) -> str:
        """``project`` for a project extension, else ``global``."""
        return "project" if self.source is ExtensionSource.PROJECT else "global"

    @property
    def enabled(self) -> bool:
        return self.status is ExtensionStatus.LOADED

    @property
    def settings(self) -> tuple[Setting[Any], ...]:
        return () if self.declaration is None else tuple(self.declaration.settings)

    def guides(self) -> list[Guide]:
        """The guides and skills shipped in its folder (read from disk each time)."""
        from vis_core.extension_host.guides import guides_of

        return guides_of(self)


@dataclass(frozen=True)
class LoadOptions:
    """How a load was asked for, so ``reload()`` can repeat it."""

    paths: VisPaths
    project_root: Path | None
    trusted: bool
    bundled: Path | None
    include_packages: bool
    disabled: frozenset[str]
    environment: Mapping[str, str]
    load_timeout: float = DEFAULT_LOAD_TIMEOUT  # seconds an entry file may take in the worker
    # the project's control files as the trust check read them: project extensions load
    # from these bytes (read anew at each load without it)
    snapshot: ControlSnapshot | None = None
    # trusted once, its control files changed since: each project extension is listed as
    # failed, saying so, and never run
    lapsed: bool = False


@dataclass(frozen=True)
class LoadedExtensions:
    """Every discovered extension, in load order, with the effective (enabled) ones marked.

    Immutable: a load or ``/reload`` makes a new one, so what is derived from its extensions
    (the enabled ones, by name) is computed once, on first use (each tool call looks its
    extension up here).
    """

    extensions: tuple[LoadedExtension, ...]
    options: LoadOptions

    @property
    def errors(self) -> tuple[LoadError, ...]:
        return tuple(e.error for e in self.extensions if e.error is not None)

    @cached_property
    def enabled(self) -> tuple[LoadedExtension, ...]:
        return tuple(e for e in self.extensions if e.enabled)

    @cached_property
    def _by_name(self) -> dict[str, LoadedExtension]:
        by_name: dict[str, LoadedExtension] = {}
        for ext in self.enabled:
            by_name.setdefault(ext.name, ext)  # the first, as a search in load order finds
        return by_name

    def get(self, name: str) -> LoadedExtension | None:
        """The enabled extension called ``name``."""
        return self._by_name.get(name)

    def host_tools(self) -> list[HostTool]:
        """Every enabled extension's tools, as named for the sandbox (``alias.name``)."""
        return [tool for ext in self.enabled for tool in ext.tools]

    def slash_commands(self) -> list[tuple[str, SlashCommand]]:
        """``(owner name, declaration)`` of every enabled extension's slash commands."""
        return [
            (ext.name, command)
            for ext in self.enabled
            if ext.declaration is not None
            for command in ext.declaration.slash_commands
        ]

    def settings(self) -> list[tuple[LoadedExtension, Setting[Any]]]:
        """Every enabled extension's settings with their owner, in declaration order."""
        return [(ext, s) for ext in self.enabled for s in ext.settings]

    def reload(self) -> LoadedExtensions:
        """Re-read every extension as this load read them (fresh reports of the registration
        worker; the bundled ones' kept reports while their files are unchanged); those loaded
        keep what they hold from a newcomer."""
        from vis_core.extension_host.loader import load

        return load(self.options, self)
