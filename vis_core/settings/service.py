"""The settings service: saving, ``on_change``, the listeners, and every change one at a time
with the other workspaces' (:mod:`~vis_core.settings.order`), over what
:class:`~vis_core.settings.reading.SettingsReader` reads."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from vis_core.config import file_stamp
from vis_core.extension.context import CallContext
from vis_core.extension.errors import member
from vis_core.extension.settings_decl import Setting, SettingScope
from vis_core.model.channel import Channel
from vis_core.model.extensions import ExtensionStatus
from vis_core.paths import ControlSnapshot, TrustStore, take_snapshot
from vis_core.settings.core import check_value
from vis_core.settings.declaring import DeclaringExtension, ExtensionSet
from vis_core.settings.order import ChangeOrder
from vis_core.settings.owners import SettingOwner
from vis_core.settings.reading import Resolution, SettingsReader
from vis_core.settings.storage import PROJECT_SETTINGS
from vis_core.settings.values import Source
from vis_core.system.redaction import activate, deactivate, short_secret_problem

if TYPE_CHECKING:
    from vis_core.extension.runtime import Runtime
    from vis_core.paths import VisPaths
    from vis_core.store import Store

log = logging.getLogger(__name__)
# (extension, setting, (old, new, scope), context): run the setting's on_change; raise if it fails
OnChangeRunner = Callable[
    [DeclaringExtension, Setting[Any], tuple[Any, Any, str], CallContext], Awaitable[None]
]
SavedListener = Callable[["SaveResult"], Awaitable[None]]
T = TypeVar("T")


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


class SettingsService(SettingsReader):
    """Settings of one running Vis: what :class:`SettingsReader` reads, saved and changed."""

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
        order: ChangeOrder | None = None,
    ) -> None:
        """What :class:`SettingsReader` takes, and ``order``: the other workspaces'
        services of this process (none: a new order)."""
        super().__init__(
            paths=paths,
            store=store,
            project_root=project_root,
            workspace=workspace,
            extensions=extensions,
            toggles=toggles,
            channel=channel,
            snapshot=snapshot,
        )
        # runs an extension setting's on_change where that extension's code runs (its
        # worker); the host sets it. Without it no on_change runs (the host runs none).
        self.on_change_runner: OnChangeRunner | None = None
        self.runtime: Runtime | None = None  # the host's: an on_change call runs in it
        # Awaited after every change of an effective value: a save or reset, a re-read of
        # the files, a session moved into a group (e.g. the Host switches a session's model).
        self.saved_listeners: list[SavedListener] = []
        # one change at a time, from reading the old value to the last listener
        self.order = order or ChangeOrder()
        self.order.services.append(self)
        self._installed = False
        # the project-level values the listeners were told (a re-read tells what differs:
        # also what a save or ``config`` read from an edited file without telling it)
        self._told = self._effective(None)
        # each open session's values as the listeners were told them, and the settings
        # files as last read by a re-read: what :meth:`catch_up` compares with
        self._seen: dict[str, dict[str, Resolution]] = {}
        self._caught = self._file_stamps()

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

    async def set_enabled(self, name: str, enabled: bool) -> None:
        """Switch an extension on or off in config.toml; takes effect at the next reload."""
        await self.edit_files(partial(self.global_file.set_disabled, name, not enabled))

    async def move_to_group(self, session_id: str, group: str | None) -> list[str]:
        """Move the session into ``group`` (None: into none); the effective values that
        change for it (the group's) run their ``on_change`` and reach the listeners as a
        save's do. Why each ``on_change`` that raised failed."""
        store = self.store
        if store is None:
            raise ValueError("moving a session into a group needs the Vis database")
        async with self.order.one():
            before = self._effective(session_id)
            await asyncio.to_thread(store.set_group, session_id, group)
            return await self._tell_changes(before, self._effective(session_id), session_id)

    async def inherit(self, session_id: str, parent_id: str) -> list[str]:
        """Give the child session ``session_id`` its parent's group and session values, in
        place of its own (a fork kept those of the session it copies): the jail, its folders
        and the limits the person set for the parent bound the child's blocks too. The
        values that change for it run their ``on_change`` and reach the listeners as a
        save's do."""
        store = self.store
        if store is None:
            raise ValueError("a child session's settings need the Vis database")

        def copy() -> None:
            store.set_group(session_id, self.session_group(parent_id))
            store.copy_session_overrides(parent_id, session_id)

        async with self.order.one():
            before = self._effective(session_id)
            await asyncio.to_thread(copy)
            return await self._tell_changes(before, self._effective(session_id), session_id)

    async def reread(self) -> list[str]:
        """Read the files again (``/reload``: a person edited them), once the change under
        way ended; the effective values that changed run their ``on_change`` and reach the
        listeners as a save's do. Why each ``on_change`` that raised failed."""
        async with self.order.one():
            return await self._reread()

    async def _reread(self) -> list[str]:
        self._caught = self._file_stamps()  # before the read: a write meanwhile is read later
        await asyncio.to_thread(self.refresh)
        told, self._told = self._told, self._effective(None)
        return await self._tell_changes(told, self._told, None)

    # -- saved by another process ----------------------------------------------------------

    def watch_session(self, session_id: str) -> None:
        """Note the values ``session_id`` opened with: :meth:`catch_up` tells it what another
        process changes of them."""
        self._seen[session_id] = self._effective(session_id)

    def forget_session(self, session_id: str) -> None:
        self._seen.pop(session_id, None)

    async def catch_up(self, session_id: str | None) -> list[str]:
        """Before a request of ``session_id``: what another process saved since (``vis
        settings set`` in a second terminal, another Vis) reaches this one as its own save
        does. Settings files changed on disk are read again, and each value of the session
        saved in the database elsewhere (its group's, its own) runs its ``on_change`` and
        reaches the listeners. Why each ``on_change`` that raised failed."""
        async with self.order.one():
            errors: list[str] = []
            if self._file_stamps() != self._caught:
                errors += await self._reread()
            seen = None if session_id is None else self._seen.get(session_id)
            if session_id is None or seen is None:
                return errors
            now = self._effective(session_id)
            errors += await self._tell_changes(seen, now, session_id, elsewhere=True)
            if session_id in self._seen:  # not closed meanwhile
                self._seen[session_id] = now
            return errors

    def _file_stamps(self) -> tuple[tuple[int, int, int] | None, ...]:
        """When and how each settings file was last written (None: there is none)."""
        files = (
            self.paths.config_file,
            self.paths.secrets_file,
            self.project.settings_file,
            self.project.yml,
        )
        return tuple(file_stamp(path) for path in files)

    def _saw(self, result: SaveResult) -> None:
        """The listeners are told ``result``: the open sessions it concerns have seen it."""
        for session_id, seen in self._seen.items():
            if result.session_id in (None, session_id) and result.setting_id in seen:
                seen[result.setting_id] = self.resolve(result.setting_id, session_id)

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
        *,
        elsewhere: bool = False,
    ) -> list[str]:
        """Each effective value that differs from ``before`` changed: for a session at group
        scope (it moved), or ``elsewhere`` (another process saved it) at session scope where
        its own value changed; else at the level of the file that changed it. Why each
        ``on_change`` that raised failed."""
        errors: list[str] = []
        for sid, was in before.items():
            now = after.get(sid)
            if now is None or now.value == was.value:
                continue
            if session_id is None:
                project = now.layers.get(Source.PROJECT) != was.layers.get(Source.PROJECT)
                scope = SettingScope.PROJECT if project else SettingScope.GLOBAL
            else:
                own = elsewhere and now.layers.get(Source.SESSION) != was.layers.get(Source.SESSION)
                scope = SettingScope.SESSION if own else SettingScope.GROUP
            result = await self._changed(self.owner(sid), scope, was.value, now.value, session_id)
            if result.hook_error is not None:
                errors.append(result.hook_error)
        return errors

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
        self._saw(result)
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
        level = member(SettingScope, scope, "scope")
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
            group = group or self.session_group(session_id)
            if group is None:
                raise ValueError(
                    f"setting {setting_id!r}: this session is in no group; move it into one "
                    "with /group NAME, then save at group scope"
                )
        if level is SettingScope.SESSION and session_id is None:
            raise ValueError(f"setting {setting_id!r}: session scope needs an open session")
        # without a session, a group's value changes for the sessions of the group
        shared = group if level is SettingScope.GROUP and session_id is None else None

        def effective() -> Any:
            within = None if shared is None else self.in_group(shared)
            return self.resolve(setting_id, session_id, within).value

        old = effective()
        self._write(owner, level, value, session_id, group)
        return owner, level, old, effective()

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
        extension, runner = owner.extension, self.on_change_runner
        # Vis's own settings declare no on_change (what they change listens to the saves);
        # without the host's runner (a service built alone) no extension code runs at all
        if owner.setting.on_change is None or extension is None or runner is None:
            return None
        if extension.status is not ExtensionStatus.LOADED:
            return None  # switched off: none of its code runs, its on_change neither
        context = CallContext(
            session_id=session_id,
            workspace_root=self.workspace,
            project_root=self.project_root,
            owner=owner.name,
            channel=self.channel,
            runtime=self.runtime,
        )
        try:
            await runner(extension, owner.setting, (old, new, scope.value), context)
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
