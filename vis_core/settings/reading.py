"""What the settings of one running Vis are: each level's values as read from the files and
the database, resolved; and what does not count, with why."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vis_core.extension.context import current_call
from vis_core.extension.settings_decl import Setting, SettingScope
from vis_core.model.channel import Channel
from vis_core.model.extensions import ExtensionStatus
from vis_core.paths import ControlSnapshot, TrustStore, take_snapshot, trust_command
from vis_core.settings.core import CORE_SETTINGS, GUARDED, default_value
from vis_core.settings.declaring import ExtensionSet
from vis_core.settings.owners import SettingOwner, declared
from vis_core.settings.redact import Redactor
from vis_core.settings.storage import GlobalFile, ProjectFiles, ProjectValues, SecretsFile
from vis_core.settings.toggles import Toggles
from vis_core.settings.values import SCOPE_ORDER, Source, parse_text, read_stored, scope_list
from vis_core.system.redaction import environment_secrets, short_secret_problem

if TYPE_CHECKING:
    from vis_core.paths import VisPaths
    from vis_core.store import Store

log = logging.getLogger(__name__)
Overrides = dict[SettingScope, dict[str, Any]]


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


class SettingsReader:
    """Settings of one running Vis as read: every level, resolved, and ``Setting.value()``'s
    answer. :class:`~vis_core.settings.service.SettingsService` changes them."""

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
        snapshot: ControlSnapshot | None = None,
    ) -> None:
        """``snapshot``: the project's control files as the caller read them (and checked
        against the trust list at each :meth:`refresh`; every value an untrusted project's
        files set is ignored); the values are read from it, not from the files again."""
        self.paths = paths
        self.store = store
        self.project_root = project_root
        self.workspace = workspace or project_root
        self.channel = channel
        self._extensions = extensions
        self.global_file = GlobalFile(paths.config_file)
        self.project = ProjectFiles(project_root)
        self.secrets = SecretsFile(paths.secrets_file)
        self.toggles = Toggles(toggles)
        self.trusted = False
        # trusted once, but the control files as last read changed since: skipped until
        # `vis trust`; and the fingerprint of the control files the person trusted
        self.trust_lapsed = False
        self.trust_granted: str | None = None
        self._owners_key: object = None
        self._owners: dict[str, SettingOwner] = {}
        self.problems: list[str] = []
        self._global: dict[str, Any] = {}
        self._global_unknown: list[str] = []  # config.toml's keys Vis does not read
        self._global_problem: str | None = None
        self._project_values = ProjectValues()
        self._secret_values: dict[str, str] = {}
        self._environment_keys: list[str] = []  # keys Vis reads from the environment
        self.redactor = Redactor(lambda: [*self._secret_values.values(), *self._environment_keys])
        self.snapshot: ControlSnapshot
        self.refresh(snapshot)

    # -- the files -------------------------------------------------------------------------

    def refresh(self, snapshot: ControlSnapshot | None = None) -> None:
        """Re-read config.toml, the project's files and the secrets (what ``/reload`` does);
        the project's files as ``snapshot`` holds them (read again without one), trusted
        only when the trust list holds that very snapshot."""
        problems: list[str] = []
        trust = TrustStore(self.paths)
        try:
            if snapshot is None:
                snapshot, self.trusted = trust.verified(self.project_root)
            else:
                self.trusted = trust.holds(snapshot)
            self.trust_lapsed = trust.changed(snapshot)
            self.trust_granted = trust.granted(self.project_root)
        except RuntimeError as exc:  # an unreadable trust list trusts nothing
            self.trusted, self.trust_lapsed, self.trust_granted = False, False, None
            problems.append(str(exc))
        if snapshot is None:
            snapshot = take_snapshot(self.project_root, hashed=self.trusted)
        self.snapshot = snapshot
        self._global_problem = None
        try:
            self._global, self._global_unknown = self.global_file.read()
        except ValueError as exc:
            self._global, self._global_unknown = {}, []
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
        for problem in problems:  # the person is told in the start notes (or the refusal)
            log.info("settings: %s", problem)

    def _short_secrets(self) -> list[str]:
        """A warning per saved secret too short to redact safely (saved before Vis refused)."""
        return [
            f"{problem}: Vis redacts it only where it stands alone; save a longer one, or "
            f"remove it from {self.paths.secrets_file}"
            for sid, value in sorted(self._secret_values.items())
            if (problem := short_secret_problem(f"the saved secret {sid!r}", value)) is not None
        ]

    # -- declarations ----------------------------------------------------------------------

    @property
    def extensions(self) -> ExtensionSet | None:
        return self._extensions()

    def owners(self) -> dict[str, SettingOwner]:
        """Every declared setting by id (see :func:`~vis_core.settings.owners.declared`)."""
        loaded = self.extensions
        if loaded is not self._owners_key or not self._owners:
            self._owners, self._owners_key = declared(loaded), loaded
        return self._owners

    def owner(self, setting_id: str) -> SettingOwner:
        found = self.owners().get(setting_id)
        if found is None:
            failed = self._failed_declarer(setting_id)
            why = f" (extension {failed!r}, which declares it, did not load)" if failed else ""
            raise KeyError(
                f"no setting {setting_id!r}{why}; `vis settings list` shows the settings Vis knows"
            )
        return found

    def _failed_declarer(self, setting_id: str) -> str | None:
        """The extension that declares ``setting_id`` but failed to load, if one does."""
        loaded = self.extensions
        for ext in () if loaded is None else loaded.extensions:
            if ext.status is ExtensionStatus.FAILED and any(
                s.id == setting_id for s in ext.settings
            ):
                return ext.name
        return None

    def allowed(self, owner: SettingOwner, scope: SettingScope) -> tuple[bool, str | None]:
        """Whether a person may save ``owner``'s setting at ``scope``, and if not, why."""
        setting = owner.setting
        where = f"setting {setting.id!r}"
        if setting.is_secret and owner.is_project:
            return False, f"{where} is a secret of a project extension; Vis does not save it"
        if scope not in setting.scopes:
            return False, f"{where} can be saved only at {scope_list(setting.scopes)} scope"
        if scope is SettingScope.PROJECT and not self.trusted:
            return False, (
                f"setting {setting.id!r} is ignored at project scope until you trust this "
                f"project: run `{trust_command(self.project_root)}`"
            )
        return True, None

    def skipped_settings(self) -> dict[str, str]:
        """The ids each project file of an untrusted project sets (none of them counts until
        the person trusts the project), listed for a message, by the file's name in the
        project (the start's note on what was skipped names them)."""
        if self.trusted:
            return {}
        found = [
            (self.project.yml, sorted(self._project_values.toggles)),
            (self.project.settings_file, sorted(self._project_values.saved)),
        ]
        return {
            path.relative_to(self.project_root).as_posix(): _id_list(ids)
            for path, ids in found
            if ids
        }

    # -- reading ---------------------------------------------------------------------------

    def session_group(self, session_id: str | None) -> str | None:
        if session_id is None or self.store is None:
            return None
        row = self.store.get_session(session_id)
        return None if row is None else row.group

    def preload(self, session_id: str | None) -> Overrides:
        """The session's group and session values in two queries (pass them to
        :meth:`resolve` when resolving many rows; it reads them itself without)."""
        values: Overrides = {SettingScope.GROUP: {}, SettingScope.SESSION: {}}
        if self.store is None or session_id is None:
            return values
        group = self.session_group(session_id)
        if group is not None:
            values[SettingScope.GROUP] = self.store.list_overrides("group", group)
        values[SettingScope.SESSION] = self.store.list_overrides("session", session_id)
        return values

    def in_group(self, group: str) -> Overrides:
        """What a session of ``group`` with no value of its own reads, for :meth:`resolve`."""
        assert self.store is not None, "group values need the store"
        return {
            SettingScope.GROUP: self.store.list_overrides("group", group),
            SettingScope.SESSION: {},
        }

    def _stored(
        self, owner: SettingOwner, scope: SettingScope, preloaded: Overrides
    ) -> tuple[bool, Any]:
        sid = owner.setting.id
        if owner.is_project and scope in (SettingScope.GLOBAL, SettingScope.PROJECT):
            # for a project extension, global means the whole project: the project's files
            # are its one place for both, whose value is read once, at one of them
            if scope is not _project_file_scope(owner.setting):
                return False, None
            return self._project_values.get(sid)
        if scope is SettingScope.GLOBAL:
            return (sid in self._global), self._global.get(sid)
        if scope is SettingScope.PROJECT:
            return self._project_values.get(sid)
        held = preloaded.get(scope, {})
        return (sid in held), held.get(sid)

    def resolve(
        self, setting_id: str, session_id: str | None = None, preloaded: Overrides | None = None
    ) -> Resolution:
        """The effective value for ``session_id`` (or at project level without a session);
        ``preloaded`` is :meth:`preload` of the same session (or :meth:`in_group`)."""
        owner = self.owner(setting_id)
        setting = owner.setting
        if preloaded is None:
            preloaded = self.preload(session_id)
        if setting.is_secret:
            saved = "" if owner.is_project else self._secret_values.get(setting.id, "")
            layers = {Source.GLOBAL: saved} if saved else {}
            where = (
                "a project extension's secret is never saved"
                if owner.is_project
                else (
                    f"a secret is read only from Vis's secrets file: save it in Settings or with "
                    f"`vis settings set {setting.id}`"
                )
            )
            written = [
                f"the {scope.value} value of secret setting {setting.id!r} is ignored: {where}"
                for scope in SCOPE_ORDER
                if self._stored(owner, scope, preloaded)[0]
            ]
            value = saved or setting.default
            return Resolution(setting, value, _top(layers), layers, tuple(written))
        layers: dict[Source, Any] = {}
        ignored: list[str] = []
        invalid: list[str] = []
        for scope in SCOPE_ORDER:
            present, raw = self._stored(owner, scope, preloaded)
            if not present:
                continue
            if scope is SettingScope.PROJECT and not self.trusted:
                ignored.append(
                    f"the project value of setting {setting.id!r} is ignored: the project is "
                    f"not trusted; run `{trust_command(self.project_root)}` to apply it"
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
                then = "; no turn runs until it is fixed" if setting.id in GUARDED else ""
                ignored.append(f"the {scope.value} value is ignored: {problem}{then}")
        if setting.id in self.toggles.texts:
            try:
                layers[Source.COMMAND_LINE] = parse_text(setting, self.toggles.texts[setting.id])
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

    def secret_saved(self, setting_id: str) -> bool:
        return bool(self._secret_values.get(setting_id))

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

    # -- what cannot be used --------------------------------------------------------------

    def invalid_notes(self) -> list[str]:
        """One note per saved value of Vis's own settings that has the wrong type: the file,
        the setting and what it takes (the default is used; the file is left as it is). Those
        of settings that bound what runs stop every turn instead: :meth:`refusal` says them."""
        notes: list[str] = []
        for setting in CORE_SETTINGS:
            if setting.id in GUARDED:
                continue
            for problem in self.resolve(setting.id).invalid:
                notes.append(f"{problem}; Vis uses the default until it is fixed")
        return notes

    def unknown_notes(self) -> list[str]:
        """One note per settings file holding keys Vis ignores without reading them: a name
        no setting has (a typo), or a setting where Vis does not look for it. A trusted
        project's files only (an untrusted one's values are all said as ignored); an id an
        extension that failed to load declares is said with that failure."""
        owners = self.owners()

        def unknown(ids: Iterable[str]) -> list[str]:
            return sorted(i for i in ids if i not in owners and not self._failed_declarer(i))

        notes: list[str] = []
        if self._global_unknown:
            notes.append(
                f"{self.global_file.path}: Vis ignores {_id_list(self._global_unknown)} (no "
                "setting of Vis has that name; an extension's setting goes under "
                "[extensions.settings]); `vis settings list` shows the settings"
            )
        if not self.trusted:
            return notes
        project = self._project_values
        if project.outside:
            notes.append(
                f"{self.project.settings_file}: Vis ignores {_id_list(list(project.outside))}: "
                "a project's settings (Vis's own and extensions') go in its [settings] table"
            )
        for path, ids in (
            (self.project.settings_file, unknown(project.saved)),
            (self.project.yml, unknown(project.toggles)),
        ):
            if ids:
                notes.append(
                    f"{path}: Vis ignores {_id_list(ids)}: no setting has that name; "
                    "`vis settings list` shows the settings"
                )
        return notes

    def unreadable(self, setting_id: str, session_id: str | None = None) -> str | None:
        """Why the value of ``setting_id`` cannot be known for sure, or None when it can: a
        settings file that could not be read (config.toml; the project's files when the
        project is trusted), or a saved value of the wrong type."""
        if self._global_problem is not None:
            return self._global_problem
        if self._project_values.problems and self.trusted:
            return "; ".join(self._project_values.problems)
        toggle = self.toggles.problem(setting_id, self.owners())
        if toggle is not None:
            return toggle
        invalid = self.resolve(setting_id, session_id).invalid
        return "; ".join(invalid) if invalid else None

    def refusal(self, session_id: str | None = None) -> str | None:
        """Why no turn may run (fail closed), or None: a ``--toggles`` entry Vis cannot read,
        or a value it cannot read of a setting that bounds what a block may do (the jail,
        the memory, process and time limits, the iterations per turn)."""
        toggles = self.toggles.problems(self.owners())
        problems = list(toggles)
        for setting_id in GUARDED:
            problem = self.unreadable(setting_id, session_id)
            if problem is not None and problem not in problems:
                problems.append(problem)
        if not problems:
            return None
        fix = (  # a file is read again before each turn; the command line only at a start
            "Fix it on the command line (or leave that --toggles out), then start again"
            if len(problems) == len(toggles)
            else "Fix the value where it is set (or remove it), then try again"
        )
        return (
            "Vis runs nothing while a setting it cannot read may decide what runs: "
            + "; ".join(problem.rstrip(".") for problem in problems)
            + f". {fix}."
        )


def _id_list(ids: list[str]) -> str:
    """Setting ids from a file for a message: names as they are, any other key (markup,
    control characters, a page of text) only counted."""
    import re

    names = [i for i in ids if re.fullmatch(r"[A-Za-z0-9_.-]{1,100}", i)]
    others = len(ids) - len(names)
    return ", ".join([*names, *([f"{others} other key(s)"] if others else [])])


def _project_file_scope(setting: Setting[Any]) -> SettingScope:
    """The scope a project extension's value in the project's files counts at: global when
    the setting takes global and not project values, else project."""
    scopes = setting.scopes
    only_global = SettingScope.GLOBAL in scopes and SettingScope.PROJECT not in scopes
    return SettingScope.GLOBAL if only_global else SettingScope.PROJECT


def _top(layers: Mapping[Source, Any]) -> Source:
    order = list(Source)
    return max(layers, key=order.index) if layers else Source.DEFAULT
