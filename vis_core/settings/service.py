"""The settings service: effective values per scope, saving, ``on_change``, secrets, resolver."""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from vis_core.extension.context import CallContext, calling, current_call
from vis_core.extension.settings_decl import (
    CORE_OWNER,
    Setting,
    SettingScope,
)
from vis_core.model.channel import Channel
from vis_core.model.extensions import ExtensionSource, ExtensionStatus
from vis_core.paths import ControlSnapshot, TrustStore, take_snapshot
from vis_core.settings.core import CORE_SETTINGS, GUARDED, check_value, default_value
from vis_core.settings.declaring import DeclaringExtension, ExtensionSet
from vis_core.settings.order import ChangeOrder
from vis_core.settings.redact import Redactor
from vis_core.settings.storage import (
    PROJECT_SETTINGS,
    GlobalFile,
    ProjectFiles,
    ProjectValues,
    SecretsFile,
)
from vis_core.settings.values import SCOPE_ORDER, Source, parse_text, read_stored, scope_list
from vis_core.system.redaction import (
    activate,
    deactivate,
    environment_secrets,
    short_secret_problem,
)

if TYPE_CHECKING:
    from vis_core.extension.runtime import Runtime
    from vis_core.paths import VisPaths
    from vis_core.store import Store

log = logging.getLogger(__name__)
Overrides = dict[SettingScope, dict[str, Any]]
# (extension, setting, (old, new, scope), context): run the setting's on_change; raise if it fails
OnChangeRunner = Callable[
    [DeclaringExtension, Setting[Any], tuple[Any, Any, str], CallContext], Awaitable[None]
]
SavedListener = Callable[["SaveResult"], Awaitable[None]]
T = TypeVar("T")


@dataclass(frozen=True)
class SettingOwner:
    """A declared setting and who declared it (Vis itself, or an extension)."""

    setting: Setting[Any]
    name: str = CORE_OWNER
    extension: DeclaringExtension | None = None

    @property
    def is_core(self) -> bool:
        return self.extension is None

    @property
    def is_project(self) -> bool:
        return self.extension is not None and self.extension.source is ExtensionSource.PROJECT


@dataclass(frozen=True)
class Resolution:
    """A setting's effective value, the level that decided it, and every level's value."""

    setting: Setting[Any]
    value: Any
    source: Source
    layers: Mapping[Source, Any]
    ignored: tuple[str, ...] = ()
    invalid: tuple[str, ...] = ()  # saved values of the wrong type (file and why)

    def has(self, source: Source) -> bool:
        return source in self.layers


@dataclass(frozen=True)
class SaveResult:
    """What a save or reset did; ``hook_error`` when ``on_change`` raised (the value stays)."""

    setting_id: str
    scope: SettingScope
    old: Any
    new: Any
    changed: bool
    hook_error: str | None = None
    session_id: str | None = None


def parse_toggles(toggles: Iterable[str]) -> tuple[dict[str, str], list[str]]:
    """``id=value`` strings of ``--toggles`` → ({id: text}, problems)."""
    values: dict[str, str] = {}
    problems: list[str] = []
    for item in toggles:
        sid, sep, text = item.partition("=")
        if not sep or not sid.strip():
            problems.append(f"--toggles {item!r} is not ID=VALUE, such as report_details=true")
            continue
        values[sid.strip()] = text
    return values, problems


class SettingsService:
    """Settings of one running Vis: reads every level, saves, and answers ``Setting.value()``."""

    def __init__(
        self,
        *,
        paths: VisPaths,
        store: Store | None,
        project_root: Path,
        workspace: Path | None = None,
        extensions: Callable[[], ExtensionSet | None] = lambda: None,
        toggles: Iterable[str] = (),
        channel: Channel = Channel.TUI,
        trusted: bool | None = None,
        snapshot: ControlSnapshot | None = None,
        order: ChangeOrder | None = None,
    ) -> None:
        """``trusted``: whether the project is trusted (``None``: ask the trust list at each
        :meth:`refresh`); every value an untrusted project's files set is ignored.
        ``snapshot``: the project's control files as the caller read them (and checked
        against the trust list); the values are read from it, not from the files again.
        ``order``: the other workspaces' services of this process (none: a new order)."""
        self.paths = paths
        self.store = store
        self.project_root = project_root
        self.workspace = workspace or project_root
        self.channel = channel
        self._extensions = extensions
        # runs an extension setting's on_change where that extension's code runs (its
        # worker); the host sets it. Without it the callback runs here, under its lock.
        self.on_change_runner: OnChangeRunner | None = None
        self.runtime: Runtime | None = None  # the host's: an on_change call runs in it
        self.global_file = GlobalFile(paths.config_file)
        self.project = ProjectFiles(project_root)
        self.secrets = SecretsFile(paths.secrets_file)
        self._toggles, self._toggle_problems = parse_toggles(toggles)
        self._trust_fixed = trusted
        self.trusted = bool(trusted)
        self._owners_key: object = None
        self._owners: dict[str, SettingOwner] = {}
        self.problems: list[str] = []
        self._global: dict[str, Any] = {}
        self._global_problem: str | None = None
        self._project_values = ProjectValues()
        self._secret_values: dict[str, str] = {}
        self._environment_keys: list[str] = []  # keys Vis reads from the environment
        self.redactor = Redactor(lambda: [*self._secret_values.values(), *self._environment_keys])
        # Awaited after every change of an effective value: a save or reset, a re-read of
        # the files, a session moved into a group (e.g. the Host switches a session's model).
        self.saved_listeners: list[SavedListener] = []
        # one change at a time, from reading the old value to the last listener
        self.order = order or ChangeOrder()
        self.order.services.append(self)
        self._installed = False
        self.snapshot: ControlSnapshot
        self.refresh(snapshot)
        # the project-level values the listeners were told (a re-read tells what differs:
        # also what a save or ``config`` read from an edited file without telling it)
        self._told = self._effective(None)

    # -- lifecycle -------------------------------------------------------------------------

    def refresh(self, snapshot: ControlSnapshot | None = None) -> None:
        """Re-read config.toml, the project's files and the secrets (what ``/reload`` does);
        the project's files as ``snapshot`` holds them (read again without one), trusted
        only when the trust list holds that very snapshot."""
        problems: list[str] = []
        if self._trust_fixed is None:
            trust = TrustStore(self.paths)
            try:
                if snapshot is None:
                    snapshot, self.trusted = trust.verified(self.project_root)
                else:
                    self.trusted = trust.holds(snapshot)
            except RuntimeError as exc:  # an unreadable trust list trusts nothing
                self.trusted = False
                problems.append(str(exc))
        else:
            self.trusted = self._trust_fixed
        if snapshot is None:
            snapshot = take_snapshot(self.project_root, hashed=self.trusted)
        self.snapshot = snapshot
        self._global_problem = None
        try:
            self._global = self.global_file.values()
        except ValueError as exc:
            self._global = {}
            self._global_problem = str(exc)
            problems.append(str(exc))
        self._project_values = self.project.read(snapshot)
        problems.extend(self._project_values.problems)
        try:
            self._secret_values = self.secrets.values()
        except ValueError as exc:
            self._secret_values = {}
            problems.append(str(exc))
        problems.extend(self._short_secrets())
        self._environment_keys = environment_secrets(os.environ, self.global_file.key_variables())
        self.redactor.refresh()
        self.problems = problems
        for problem in problems:
            log.warning("settings: %s", problem)

    def _short_secrets(self) -> list[str]:
        """A warning per saved secret too short to redact safely (saved before Vis refused)."""
        return [
            f"{problem}: Vis redacts it only where it stands alone; save a longer one, or "
            f"remove it from {self.paths.secrets_file}"
            for sid, value in sorted(self._secret_values.items())
            if (problem := short_secret_problem(f"the saved secret {sid!r}", value)) is not None
        ]

    def install(self) -> None:
        """Redact stored events and log lines with this service's secrets."""
        if self._installed:
            return
        if self.store is not None and hasattr(self.store, "redactor"):
            self.store.redactor = self.redactor.event
            self.store.text_redactor = self.redactor.text
        activate(self.redactor)
        self._installed = True

    def uninstall(self) -> None:
        """Undo :meth:`install`, stop writing the log file through this redactor and hearing
        the other services' saves (the workspace closes)."""
        from vis_core.settings.logfile import detach_log_file

        if self in self.order.services:
            self.order.services.remove(self)
        detach_log_file(self.redactor)
        if not self._installed:
            return
        deactivate(self.redactor)
        if self.store is not None and getattr(self.store, "redactor", None) is not None:
            self.store.redactor = None
            self.store.text_redactor = None
        self._installed = False

    # -- declarations ----------------------------------------------------------------------

    @property
    def extensions(self) -> ExtensionSet | None:
        return self._extensions()

    def owners(self) -> dict[str, SettingOwner]:
        """Every declared setting by id: Vis's own, then loaded and switched-off extensions'."""
        loaded = self.extensions
        if loaded is self._owners_key and self._owners:
            return self._owners
        owners = {s.id: SettingOwner(s) for s in CORE_SETTINGS}
        if loaded is not None:
            ranked = sorted(
                (e for e in loaded.extensions if e.declaration is not None),
                key=lambda e: e.status is not ExtensionStatus.LOADED,
            )
            for ext in ranked:
                if ext.status not in (ExtensionStatus.LOADED, ExtensionStatus.DISABLED):
                    continue
                for setting in ext.settings:
                    owners.setdefault(setting.id, SettingOwner(setting, ext.name, ext))
        self._owners, self._owners_key = owners, loaded
        return owners

    def owner(self, setting_id: str) -> SettingOwner:
        found = self.owners().get(setting_id)
        if found is None:
            raise KeyError(
                f"no setting {setting_id!r}; `vis settings list` shows the settings Vis knows"
            )
        return found

    def allowed(self, owner: SettingOwner, scope: SettingScope) -> tuple[bool, str | None]:
        """Whether a person may save ``owner``'s setting at ``scope``, and if not, why."""
        setting = owner.setting
        where = f"setting {setting.id!r}"
        if setting.is_secret and owner.is_project:
            return False, f"{where} is a secret of a project extension; Vis does not save it"
        if scope not in setting.scopes:
            return False, f"{where} can be saved only at {scope_list(setting.scopes)} scope"
        if scope is SettingScope.PROJECT and not self.trusted:
            return False, self.untrusted_reason(setting.id)
        return True, None

    def untrusted_reason(self, setting_id: str) -> str:
        """Why a project value has no effect (untrusted project)."""
        return (
            f"setting {setting_id!r} is ignored at project scope until you trust this "
            f"project: run `vis trust {self.project_root}`"
        )

    def skipped_project_values(self) -> list[tuple[Path, list[str]]]:
        """The project files of an untrusted project that set values, each with the ids it
        sets (none of them counts until the person trusts the project)."""
        if self.trusted:
            return []
        found = [
            (self.project.yml, sorted(self._project_values.toggles)),
            (self.project.settings_file, sorted(self._project_values.saved)),
        ]
        return [(path, ids) for path, ids in found if ids]

    def untrusted_notes(self) -> list[str]:
        """One startup note per project file whose values were skipped (untrusted project)."""
        return [
            f"project {self.project_root} is not trusted, so the settings {path} sets are "
            f"ignored: {_id_list(ids)}; run `vis trust {self.project_root}` to apply them"
            for path, ids in self.skipped_project_values()
        ]

    # -- reading ---------------------------------------------------------------------------

    def _session_group(self, session_id: str | None) -> str | None:
        if session_id is None or self.store is None:
            return None
        row = self.store.get_session(session_id)
        return None if row is None else row.group

    def preload(self, session_id: str | None) -> Overrides:
        """The session's group and session values in two queries, for resolving many rows."""
        values: Overrides = {SettingScope.GROUP: {}, SettingScope.SESSION: {}}
        if self.store is None or session_id is None:
            return values
        group = self._session_group(session_id)
        if group is not None:
            values[SettingScope.GROUP] = self.store.list_overrides("group", group)
        values[SettingScope.SESSION] = self.store.list_overrides("session", session_id)
        return values

    def _stored(
        self,
        owner: SettingOwner,
        scope: SettingScope,
        session_id: str | None,
        preloaded: Overrides | None = None,
    ) -> tuple[bool, Any]:
        sid = owner.setting.id
        if scope is SettingScope.GLOBAL:
            if owner.is_project:  # for a project extension, global means the whole project
                return self._project_values.get(sid)
            return (sid in self._global), self._global.get(sid)
        if scope is SettingScope.PROJECT:
            return self._project_values.get(sid)
        if self.store is None or session_id is None:
            return False, None
        if preloaded is not None:
            held = preloaded.get(scope, {})
            return (sid in held), held.get(sid)
        if scope is SettingScope.GROUP:
            group = self._session_group(session_id)
            if group is None:
                return False, None
            row = self.store.get_override("group", group, sid)
        else:
            row = self.store.get_override("session", session_id, sid)
        return (False, None) if row is None else (True, row.value)

    def resolve(
        self, setting_id: str, session_id: str | None = None, preloaded: Overrides | None = None
    ) -> Resolution:
        """The effective value for ``session_id`` (or at project level without a session);
        ``preloaded`` is :meth:`preload` of the same session."""
        owner = self.owner(setting_id)
        setting = owner.setting
        if setting.is_secret:
            saved = "" if owner.is_project else self._secret_values.get(setting.id, "")
            layers = {Source.GLOBAL: saved} if saved else {}
            return Resolution(setting, saved or setting.default, _top(layers), layers)
        layers: dict[Source, Any] = {}
        ignored: list[str] = []
        invalid: list[str] = []
        for scope in SCOPE_ORDER:
            present, raw = self._stored(owner, scope, session_id, preloaded)
            if not present:
                continue
            if scope is SettingScope.PROJECT and not self.trusted:
                ignored.append(
                    f"the project value of setting {setting.id!r} is ignored: the project is "
                    f"not trusted; run `vis trust {self.project_root}` to apply it"
                )
                continue
            if scope not in setting.scopes:
                ignored.append(
                    f"the {scope.value} value of setting {setting.id!r} is ignored: it can be "
                    f"set only at {scope_list(setting.scopes)} scope"
                )
                continue
            try:
                layers[Source(scope.value)] = read_stored(setting, raw)
            except ValueError as exc:
                problem = f"{self._where(scope, session_id)}: {exc}"
                invalid.append(problem)
                ignored.append(f"the {scope.value} value is ignored: {problem}")
        if setting.id in self._toggles:
            try:
                layers[Source.COMMAND_LINE] = parse_text(setting, self._toggles[setting.id])
            except ValueError as exc:  # and every turn stops: refusal()
                ignored.append(f"--toggles cannot be used: {exc}")
        source = _top(layers)
        value = default_value(setting) if source is Source.DEFAULT else layers[source]
        return Resolution(setting, value, source, layers, tuple(ignored), tuple(invalid))

    def _where(self, scope: SettingScope, session_id: str | None) -> str:
        """Where a value of ``scope`` is saved, for messages."""
        if scope is SettingScope.GLOBAL:
            return str(self.global_file.path)
        if scope is SettingScope.PROJECT:
            return f"{self.project.settings_file} or {self.project.yml}"
        return f"the {scope.value} value of session {session_id}"

    def value(self, setting_id: str, session_id: str | None = None) -> Any:
        return self.resolve(setting_id, session_id).value

    def get(self, setting_id: str, default: Any, session_id: str | None = None) -> Any:
        """The effective value for ``session_id`` (project level without one); ``default``
        when no loaded code declares ``setting_id``."""
        try:
            return self.value(setting_id, session_id)
        except KeyError:
            return default

    def invalid_notes(self) -> list[str]:
        """One note per saved value of Vis's own settings that has the wrong type: the file,
        the setting and what it takes (the default is used; the file is left as it is)."""
        notes: list[str] = []
        for setting in CORE_SETTINGS:
            then = "no turn runs" if setting.id in GUARDED else "Vis uses the default"
            for problem in self.resolve(setting.id).invalid:
                notes.append(f"{problem}; {then} until it is fixed")
        return notes

    def unreadable(self, setting_id: str, session_id: str | None = None) -> str | None:
        """Why the value of ``setting_id`` cannot be known for sure, or None when it can: a
        settings file that could not be read (config.toml; the project's files when the
        project is trusted), or a saved value of the wrong type."""
        if self._global_problem is not None:
            return self._global_problem
        if self._project_values.problems and self.trusted:
            return "; ".join(self._project_values.problems)
        toggle = self._toggle_problem(setting_id)
        if toggle is not None:
            return toggle
        invalid = self.resolve(setting_id, session_id).invalid
        return "; ".join(invalid) if invalid else None

    def _toggle_problem(self, setting_id: str) -> str | None:
        """Why the ``--toggles`` value of ``setting_id`` cannot be used, or None."""
        if setting_id not in self._toggles:
            return None
        owner = self.owners().get(setting_id)
        text = self._toggles[setting_id]
        if owner is None:
            return (
                f"--toggles {setting_id}={text!r}: there is no setting {setting_id!r}; "
                "`vis settings list` shows the settings Vis knows"
            )
        if owner.setting.is_secret:
            return (
                f"--toggles refuses secret setting {setting_id!r}, because other programs can "
                f"read a command line; save it in Settings or with `vis settings set {setting_id}`"
            )
        try:
            parse_text(owner.setting, text)
        except ValueError as exc:
            return f"--toggles {setting_id}={text!r}: {exc}"
        return None

    def refusal(self, session_id: str | None = None) -> str | None:
        """Why no turn may run (fail closed), or None: a ``--toggles`` entry Vis cannot read,
        or a value it cannot read of a setting that bounds what a block may do (the jail,
        the memory, process and time limits, the iterations per turn)."""
        problems = self.toggle_problems()
        for setting_id in GUARDED:
            problem = self.unreadable(setting_id, session_id)
            if problem is not None and problem not in problems:
                problems.append(problem)
        if not problems:
            return None
        return (
            "Vis runs nothing while a setting it cannot read may decide what runs: "
            + "; ".join(problem.rstrip(".") for problem in problems)
            + ". Fix the value (or remove it), then start again."
        )

    def value_for_callback(self, setting_id: str, default: Any) -> Any:
        """``Setting.value()`` of the declared setting ``setting_id`` (``default`` when none
        is declared): the effective value for the session of the running callback, project
        level outside one; a secret only in a callback of the extension that declares it."""
        owner = self.owners().get(setting_id)
        if owner is None or type(owner.setting.default) is not type(default):
            return default  # not declared, or declared as another kind of value
        setting = owner.setting
        context = current_call()
        if setting.is_secret:
            if context is None or context.owner != owner.name or owner.is_project:
                return setting.default
            return self._secret_values.get(setting.id, setting.default)
        session_id = context.session_id if context is not None else None
        try:
            return self.resolve(setting.id, session_id).value
        except Exception:  # reading a value never breaks a callback
            log.exception("cannot resolve setting %r; using its default", setting.id)
            return setting.default

    def toggle_problems(self) -> list[str]:
        """What is wrong with ``--toggles``: malformed, unknown ids, secrets, bad values; any
        of them stops every turn (:meth:`refusal`)."""
        problems = list(self._toggle_problems)
        for setting_id in self._toggles:
            problem = self._toggle_problem(setting_id)
            if problem is not None:
                problems.append(problem)
        return problems

    def secret_saved(self, setting_id: str) -> bool:
        return bool(self._secret_values.get(setting_id))

    # -- saving ----------------------------------------------------------------------------

    async def set(
        self,
        setting_id: str,
        value: Any,
        scope: SettingScope | str,
        *,
        session_id: str | None = None,
        group: str | None = None,
    ) -> SaveResult:
        """Validate and save ``value`` at ``scope``; await ``on_change`` if the effective value
        changed. Raises ``ValueError`` naming the setting when the value or scope is refused."""
        return await self._save(setting_id, value, scope, session_id, group)

    async def reset(
        self,
        setting_id: str,
        scope: SettingScope | str,
        *,
        session_id: str | None = None,
        group: str | None = None,
    ) -> SaveResult:
        """Remove the value saved at ``scope`` so the row inherits again."""
        return await self._save(setting_id, None, scope, session_id, group)

    async def _save(
        self,
        setting_id: str,
        value: Any,
        scope: SettingScope | str,
        session_id: str | None,
        group: str | None,
    ) -> SaveResult:
        """One change after another: the files are written in a thread, then ``on_change``
        and the listeners are awaited here, on the caller's loop, before the next change reads
        its old value (so each sees old → new in the order the saves were made). A saved
        file reaches the other workspaces' services (what they read of it changes for them)."""
        async with self.order.one():
            owner, level, old, new = await asyncio.to_thread(
                self._store_value, setting_id, value, scope, session_id, group
            )
            if not owner.setting.is_secret:
                self._told[setting_id] = self.resolve(setting_id)
            result = await self._changed(owner, level, old, new, session_id)
            if owner.setting.is_secret or level in (SettingScope.GLOBAL, SettingScope.PROJECT):
                await self._spread()
            elif result.changed:  # a group's or a session's value: the same database
                for other in self._others():
                    await other._tell(result)
            return result

    async def edit_files(self, write: Callable[[], T]) -> T:
        """Run ``write``, which changes the user's files other than by saving a setting
        (``[providers]`` or the switched-off extensions of config.toml, a provider's key), in
        a thread as one change; then every workspace's service reads the files again."""
        async with self.order.one():
            done = await asyncio.to_thread(write)
            await self._reread()
            await self._spread()
            return done

    async def reread(self) -> None:
        """Read the files again (``/reload``: a person edited them), once the change under
        way ended; the effective values that changed run their ``on_change`` and reach the
        listeners as a save's do."""
        async with self.order.one():
            await self._reread()

    async def _reread(self) -> None:
        await asyncio.to_thread(self.refresh)
        told, self._told = self._told, self._effective(None)
        await self._tell_changes(told, self._told, None)

    def _others(self) -> list[SettingsService]:
        return [other for other in self.order.services if other is not self]

    async def _spread(self) -> None:
        """The other workspaces' services read the user's files again (this one wrote them):
        a value that changed for one runs its ``on_change`` there (its own extension
        workers) and reaches its sessions."""
        for other in self._others():
            await other._reread()

    def _effective(self, session_id: str | None) -> dict[str, Resolution]:
        """Every setting's effective value for ``session_id`` (project level without one),
        secrets left out."""
        preloaded = self.preload(session_id)
        return {
            sid: self.resolve(sid, session_id, preloaded)
            for sid, owner in self.owners().items()
            if not owner.setting.is_secret
        }

    async def _tell_changes(
        self,
        before: Mapping[str, Resolution],
        after: Mapping[str, Resolution],
        session_id: str | None,
    ) -> None:
        """Each effective value that differs from ``before`` changed: at group scope for a
        session (it moved), else at the level of the file that changed it."""
        for sid, was in before.items():
            now = after.get(sid)
            if now is None or now.value == was.value:
                continue
            if session_id is not None:
                scope = SettingScope.GROUP
            elif now.layers.get(Source.PROJECT) != was.layers.get(Source.PROJECT):
                scope = SettingScope.PROJECT
            else:
                scope = SettingScope.GLOBAL
            await self._changed(self.owner(sid), scope, was.value, now.value, session_id)

    async def _changed(
        self,
        owner: SettingOwner,
        scope: SettingScope,
        old: Any,
        new: Any,
        session_id: str | None,
    ) -> SaveResult:
        """``owner``'s effective value went from ``old`` to ``new``: its ``on_change`` runs
        (when it differs), then the listeners hear it."""
        changed = old != new
        error = await self._run_hook(owner, old, new, scope, session_id) if changed else None
        result = SaveResult(owner.setting.id, scope, old, new, changed, error, session_id)
        await self._tell(result)
        return result

    async def _tell(self, result: SaveResult) -> None:
        for listener in list(self.saved_listeners):
            try:
                await listener(result)
            except Exception:  # the value is saved; a listener's failure is only logged
                log.exception("after setting %r changed, a listener failed", result.setting_id)

    def _store_value(
        self,
        setting_id: str,
        value: Any,
        scope: SettingScope | str,
        session_id: str | None,
        group: str | None,
    ) -> tuple[SettingOwner, SettingScope, Any, Any]:
        """Check and write ``value`` (None: remove it); the effective value before and after."""
        owner = self.owner(setting_id)
        setting = owner.setting
        try:
            level = SettingScope(scope)
        except ValueError:
            raise ValueError(
                f"scope {scope!r} is unknown; use 'global', 'project', 'group' or 'session'"
            ) from None
        ok, why = self.allowed(owner, level)
        if not ok:
            raise ValueError(why)
        if value is not None:
            value = setting.coerce(value)
            if owner.is_core:
                check_value(setting_id, value)
        if setting.is_secret and isinstance(value, str):
            problem = short_secret_problem(f"the secret {setting_id!r}", value)
            if problem is not None:
                raise ValueError(f"{problem}; save a longer one (nothing was saved)")
        known = self.store is None or session_id is None or self.store.get_session(session_id)
        if not known:
            raise ValueError(f"setting {setting_id!r}: there is no session {session_id!r}")
        if level is SettingScope.GROUP:
            group = group or self._session_group(session_id)
            if group is None:
                raise ValueError(
                    f"setting {setting_id!r}: this session is in no group; move it into one "
                    "with /group NAME, then save at group scope"
                )
        if level is SettingScope.SESSION and session_id is None:
            raise ValueError(f"setting {setting_id!r}: session scope needs an open session")
        old = self.resolve(setting_id, session_id).value
        self._write(owner, level, value, session_id, group)
        return owner, level, old, self.resolve(setting_id, session_id).value

    def _write_project(self, setting_id: str, value: Any) -> None:
        """Save into ``.vis/settings.toml``; the person's own save keeps the project trusted
        (only when it was trusted with its files as they were just before, and nothing but
        that file changed since)."""
        trust = TrustStore(self.paths)
        before = self.snapshot
        try:
            kept = self.trusted and trust.holds(before)
        except RuntimeError:
            kept = False
        self.project.write(setting_id, value)
        after = take_snapshot(self.project_root)
        if kept and before.same_but(after, PROJECT_SETTINGS.as_posix()):
            trust.trust(self.project_root, after)
        self.refresh(after)

    def _write(
        self,
        owner: SettingOwner,
        scope: SettingScope,
        value: Any,
        session_id: str | None,
        group: str | None,
    ) -> None:
        sid = owner.setting.id
        if owner.setting.is_secret:
            self.secrets.write(sid, value)
            self._secret_values = self.secrets.values()
            self.redactor.refresh()
        elif scope is SettingScope.GLOBAL and not owner.is_project:
            self.global_file.write(sid, value)
            self._global = self.global_file.values()
        elif scope in (SettingScope.GLOBAL, SettingScope.PROJECT):
            self._write_project(sid, value)
        else:
            assert self.store is not None, "group and session values need the store"
            key = group if scope is SettingScope.GROUP else session_id
            assert key is not None
            if value is None:
                self.store.delete_override(scope.value, key, sid)
            else:
                self.store.set_override(scope.value, key, sid, value)

    async def _run_hook(
        self,
        owner: SettingOwner,
        old: Any,
        new: Any,
        scope: SettingScope,
        session_id: str | None,
    ) -> str | None:
        hook = owner.setting.on_change
        if hook is None:
            return None
        context = CallContext(
            session_id=session_id,
            workspace_root=self.workspace,
            project_root=self.project_root,
            owner=owner.name,
            channel=self.channel,
            runtime=self.runtime,
        )
        change = (old, new, scope.value)
        try:
            if owner.extension is not None and self.on_change_runner is not None:
                await self.on_change_runner(owner.extension, owner.setting, change, context)
            else:
                await asyncio.to_thread(_call_hook, owner, hook, change, context)
        except Exception as exc:
            log.exception(
                "on_change of setting %r (%s) failed; the value stays saved",
                owner.setting.id,
                owner.name,
            )
            return (
                f"on_change of setting {owner.setting.id!r} ({owner.name}) failed: "
                f"{type(exc).__name__}: {exc}. The value stays saved."
            )
        return None

    # -- extensions and groups -------------------------------------------------------------

    def disabled_extensions(self) -> frozenset[str]:
        try:
            return self.global_file.disabled()
        except ValueError as exc:
            log.warning("settings: %s", exc)
            return frozenset()

    async def set_enabled(self, name: str, enabled: bool) -> None:
        """Switch an extension on or off in config.toml; takes effect at the next reload."""
        await self.edit_files(partial(self.global_file.set_disabled, name, not enabled))

    async def move_to_group(self, session_id: str, group: str | None) -> None:
        """Move the session into ``group`` (None: into none); the effective values that
        change for it (the group's) run their ``on_change`` and reach the listeners as a
        save's do."""
        store = self.store
        if store is None:
            raise ValueError("moving a session into a group needs the Vis database")
        async with self.order.one():
            before = self._effective(session_id)
            await asyncio.to_thread(store.set_group, session_id, group)
            await self._tell_changes(before, self._effective(session_id), session_id)

    def session_group(self, session_id: str | None) -> str | None:
        return self._session_group(session_id)


def _call_hook(
    owner: SettingOwner,
    hook: Callable[..., Any],
    change: tuple[Any, Any, str],
    context: CallContext,
) -> None:
    """Run ``on_change`` here (Vis's own, or an extension with no worker to run it in)."""
    with calling(context):
        if owner.extension is not None:
            owner.extension.call(hook, *change)
        else:
            hook(*change)


def _id_list(ids: list[str]) -> str:
    """Setting ids from a file for a message: names as they are, any other key (markup,
    control characters, a page of text) only counted."""
    import re

    names = [i for i in ids if re.fullmatch(r"[A-Za-z0-9_.-]{1,100}", i)]
    others = len(ids) - len(names)
    return ", ".join([*names, *([f"{others} other key(s)"] if others else [])])


def _top(layers: Mapping[Source, Any]) -> Source:
    order = list(Source)
    return max(layers, key=order.index) if layers else Source.DEFAULT
