"""The extension catalog: the loaded extensions of one Vis, what they declare, and reloading."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from vis_core.extension_host.environment import extension_environment
from vis_core.extension_host.loaded import LoadedExtension, LoadedExtensions
from vis_core.model.extensions import ExtensionSource, ExtensionStatus
from vis_core.settings.service import SettingsService
from vis_core.settings.storage import disabled_extensions


class ExtensionCatalog:
    """The extensions as last loaded (``loaded``, replaced by :meth:`read_again`) and what
    they declare: slash commands, per-extension locks, load failures."""

    def __init__(self, loaded: LoadedExtensions) -> None:
        self.loaded = loaded

    def current(self) -> LoadedExtensions:
        """The extensions now (a reload replaces them): what settings and workers follow."""
        return self.loaded

    def commands(self) -> list[tuple[str, Any]]:
        return [
            (ext.name, command)
            for ext in self.loaded.enabled
            if ext.declaration is not None
            for command in ext.declaration.slash_commands
        ]

    def skipped(self) -> list[LoadedExtension]:
        """The project's extensions listed as failed, not run, because the project's trust
        lapsed (its control files changed since `vis trust`; the trust notice says so)."""
        return [
            ext
            for ext in self.loaded.extensions
            if ext.source is ExtensionSource.PROJECT and self.loaded.options.lapsed
        ]

    def load_warning(self, then: str) -> str | None:
        """One notice for the extensions that failed to load: each with its cause, then
        ``vis doctor`` and ``then`` said once (what loads them again where the notice is
        read: the app reloads, `vis run` and `vis acp` only start again); None when all
        loaded (a project skipped for its lapsed trust has a notice of its own)."""
        failed = [
            (
                ext.name,
                str(ext.error).splitlines()[0] if ext.error is not None else "no cause given",
            )
            for ext in self.loaded.extensions
            if ext.status is ExtensionStatus.FAILED and ext not in self.skipped()
        ]
        if not failed:
            return None
        files = "file" if len(failed) == 1 else "files"
        hint = f"Run `vis doctor` for every extension's status; fix the {files}, then {then}."
        if len(failed) == 1:
            ((name, cause),) = failed
            return (
                f"Extension {name} failed to load, so its tools, commands and settings are "
                f"missing: {_sentence(cause)} {hint}"
            )
        causes = "".join(f"- {name}: {cause}\n" for name, cause in failed)
        return (
            f"{len(failed)} extensions failed to load, so their tools, commands and settings "
            f"are missing:\n{causes}{hint}"
        )

    def read_again(self, settings: SettingsService) -> None:
        """Load every extension again (the registration worker's time, up to the load time
        limit) from the project's control files as ``settings`` read them again and checked
        them against the trust list (:meth:`SettingsService.reread`); a change since the
        person trusted them needs `vis trust` (each project extension fails, saying so)."""
        snapshot, trusted = settings.snapshot, settings.trusted
        options = replace(
            self.loaded.options,
            disabled=disabled_extensions(settings.global_file.path),  # the switches saved now
            load_timeout=float(settings.value("extension_load_timeout")),
            trusted=trusted,
            lapsed=settings.trust_lapsed,
            snapshot=snapshot if trusted else None,
            environment=extension_environment(
                settings.project_root, trusted=trusted, snapshot=snapshot
            ),
        )
        self.loaded = replace(self.loaded, options=options).reload()

    def summary(self) -> str:
        """How many loaded and which failed, as ``/reload`` says it."""
        from vis_core.extension_host.doctor import describe

        failed = [row for row in describe(self.loaded) if row.failed]
        text = f"{len(self.loaded.enabled)} loaded, {len(failed)} failed."
        return text + "".join(f"\n- {row.name}: {row.error}" for row in failed)


def _sentence(text: str) -> str:
    """``text`` ending as a sentence does (a cause may end in '.' or '?' already)."""
    return text if text.endswith((".", "?", "!")) else f"{text}."
