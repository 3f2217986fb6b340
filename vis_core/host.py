"""The composition root: one workspace's store, config, model, extensions, tools and sessions."""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vis_core.agent.deps import DirectTool, SessionModel
from vis_core.agent.session import HISTORY_EVENTS, AgentSession
from vis_core.commands import CommandRegistry
from vis_core.config import ConfigFile, UserConfig, load_config
from vis_core.drafts import Drafts
from vis_core.events import (
    Event,
    SessionCreated,
    TurnEnded,
)
from vis_core.extension.metadata import build_metadata
from vis_core.extension.runtime import install, uninstall
from vis_core.extension_host.callbacks import on_change_runner
from vis_core.extension_host.environment import extension_environment, project_environment
from vis_core.extension_host.loaded import ExtensionLock, LoadedExtensions
from vis_core.extension_host.loader import load_extensions
from vis_core.extension_host.runtime import HostRuntime, StoreRuntime
from vis_core.extension_host.session_workers import SessionWorkers
from vis_core.extension_host.worker_client import WorkerPlace, runs_in_worker
from vis_core.host_options import HostOptions
from vis_core.interaction import Interaction
from vis_core.model.turn import TurnStatus
from vis_core.paths import (
    ControlSnapshot,
    TrustStore,
    VisPaths,
    control_files_changed,
    find_project_root,
    project_fingerprint,
)
from vis_core.providers.base import ModelChoice, ProviderConfigError, ProviderError
from vis_core.settings import SaveResult, SettingsService, attach_log_file, disabled_extensions
from vis_core.settings.core import extension_load_timeout
from vis_core.store import Store
from vis_core.store.session_lock import SessionLocks
from vis_core.system import jail_check
from vis_core.system.jail import home_warning
from vis_core.system.lifetime import ChildLimits
from vis_core.system.loops import on_loop
from vis_core.tools.registry import HostTool
from vis_core.welcome import (
    choose_model,
    jail_mode,
    jail_policy,
    model_state,
    provider_environ,
    saved_keys,
    verified,
)

if TYPE_CHECKING:
    from vis_core.session_tools import SessionTools

INTERRUPTED = (
    "interrupted: Vis stopped (it was killed or crashed) before this turn finished; what it "
    "showed until then is kept"
)
RELOADED = "the extensions were reloaded (/reload)"


class Host:
    """Everything one running Vis shares between its sessions."""

    def __init__(
        self,
        options: HostOptions,
        paths: VisPaths,
        config: UserConfig,
        store: Store,
        extensions: LoadedExtensions | None = None,
        snapshot: ControlSnapshot | None = None,
    ):
        """``snapshot``: the project's control files as :meth:`open` read them and checked
        them against the trust list (``extensions`` were loaded from it); read here without
        one. Settings, environment and MCP servers are read from it, not from the files."""
        self.options = options
        self.paths = paths
        self._config_file = ConfigFile(config.path, config)
        self.store = store
        self.workspace = options.workspace.resolve()
        self.project_root = find_project_root(self.workspace)
        if snapshot is None or snapshot.root != self.project_root:
            snapshot = verified(paths, self.project_root)[0]
        self.trust_changed = _trust_changed(paths, snapshot)
        self._told_changed: str | None = None  # the fingerprint the notice was given for
        self.build = build_metadata()
        self.session_locks = SessionLocks(paths.data_dir / "sessions")
        self.settings = SettingsService(
            paths=paths,
            store=store,
            project_root=self.project_root,
            workspace=self.workspace,
            extensions=lambda: getattr(self, "extensions", None),
            toggles=options.toggles,
            channel=options.channel,
            snapshot=snapshot,  # checked against the trust list there, at each refresh too
        )
        # control files that do not exist yet: made during the session, they are told about
        # (the jail cannot reserve a name without leaving an empty file or folder behind)
        code = [".vis/extensions", ".vis/mcp.json", "vis.yml"]  # what loads or configures
        watched = [".git"] if self.trusted else [".git", *code]
        self._absent = {
            folder / name
            for folder in {self.workspace, self.project_root}
            for name in watched
            if not os.path.lexists(folder / name)
        }
        self.runtime = HostRuntime(self)  # the SDK's calls in this process reach the host here
        install(self.runtime)
        self.extensions = extensions or load_extensions(
            project_root=self.project_root,
            trusted=self.trusted,
            paths=paths,
            disabled=self.settings.disabled_extensions(),
            environment=extension_environment(
                self.project_root, trusted=self.trusted, snapshot=snapshot
            ),
            load_timeout=extension_load_timeout(config.data),
            snapshot=snapshot,
        )
        self.settings.install()  # secret redaction answers from here
        self.settings.saved_listeners.append(self._setting_saved)
        attach_log_file(paths, self.settings.redactor)
        self.commands = CommandRegistry(self)
        self.interaction = Interaction()  # vis.ask / vis.live reach the front end here
        self.drafts = Drafts(store, paths.data_dir)  # the sessions' isolated working copies
        from vis_core.subagents import Subagents

        self.subagents = Subagents(self)  # child sessions: run_session, consult, vis.council
        self.sessions: list[AgentSession] = []
        self.direct_tools: list[DirectTool] = []  # tools declared to the model directly (MCP)
        self.session_tools: dict[str, SessionTools] = {}  # by open session
        self.extension_workers: dict[str, SessionWorkers] = {}  # by open session
        # a setting's on_change runs in an extension worker, as the extension's other code
        self.settings.on_change_runner = on_change_runner(
            lambda: self.extensions,
            lambda: dict(self.extension_workers),
            WorkerPlace(None, self.workspace, self.project_root, options.channel),
            self.project_values,
        )
        from vis_core.mcp.host import host_mcp

        self.mcp = host_mcp(self)  # MCP servers: connected when the first session starts
        # the Vis of each other root vis.sessions.create(root=...) started a session in
        self._other_roots: dict[Path, Host] = {}
        self._other_roots_lock = asyncio.Lock()
        self.model_choice: ModelChoice | None = None
        self.model_label = "no model"
        self.model_problem: str | None = None
        self._resolve_model()
        try:
            self.runtime.loop = asyncio.get_running_loop()
        except RuntimeError:  # built outside an event loop: threads reach it for reads only
            pass

    @classmethod
    async def open(cls, options: HostOptions) -> Host:
        paths = VisPaths.from_env().ensure()
        # the jail check (a jailed `true`, once per process) runs while the rest starts
        jail_check.check_in_background()
        config = load_config(paths.config_file)
        store = await asyncio.to_thread(Store, paths.db_file)
        loading = StoreRuntime(store)  # vis.state while entry files load
        install(loading)
        project_root = find_project_root(options.workspace.resolve())
        # The control files are read once: what is checked against the trust list is what
        # loads (extension code, settings, environment, MCP servers), never read again.
        snapshot, trusted = await asyncio.to_thread(verified, paths, project_root)
        try:
            extensions = await asyncio.to_thread(
                load_extensions,
                project_root=project_root,
                disabled=disabled_extensions(paths.config_file),
                trusted=trusted,
                paths=paths,
                environment=extension_environment(project_root, trusted=trusted, snapshot=snapshot),
                load_timeout=extension_load_timeout(config.data),
                snapshot=snapshot if trusted else None,
            )
        finally:
            uninstall(loading)
        from vis_core.tools.edit import remove_stale_temps

        # Interrupted writes' temp files go in the background: a large workspace's walk must
        # not hold up the first prompt (only files older than a minute are removed).
        threading.Thread(
            target=remove_stale_temps,
            args=(options.workspace,),
            name="vis-stale-temps",
            daemon=True,
        ).start()
        return cls(options, paths, config, store, extensions, snapshot)

    @property
    def config(self) -> UserConfig:
        """``config.toml`` as it is now. When it changed on disk since it was read, it is
        read again, and with it the settings it holds (the ``model``, the key variables
        to redact) and the project's model: a provider added while Vis runs counts."""
        if self._config_file.reread():
            settings = getattr(self, "settings", None)
            if settings is not None:  # None while the Host is being built
                settings.refresh()
            if hasattr(self, "model_choice"):
                self.refresh_model()
        return self._config_file.current()

    @config.setter
    def config(self, config: UserConfig) -> None:
        self._config_file.replace(config)

    def reread_config(self) -> None:
        """Read ``config.toml`` again if it changed (``/model``, ``/login`` call this)."""
        _ = self.config

    # -- model ------------------------------------------------------------------------------

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

    def refresh_model(self) -> None:
        """Resolve the project's model again (after ``/login`` saved a key and a model)."""
        self.model_choice, self.model_label, self.model_problem = None, "no model", None
        self._resolve_model()

    def _resolve_model(self) -> None:
        state = model_state(lambda: self.model_for(None))
        self.model_choice, self.model_label, self.model_problem = (
            state.choice,
            state.label,
            state.problem,
        )

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

        choice = choice or self.model_choice
        if choice is None:
            return SessionModel(None, "", "no model", self.model_problem)
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

    def model_of_session(self, session_id: str) -> SessionModel:
        """A provider for the session's effective model (its own, group's or project's)."""
        try:
            choice = self.model_for(session_id)
        except (ValueError, ProviderConfigError) as exc:
            return SessionModel(None, "", "no model", str(exc))
        return self.session_model(choice, session_id=session_id)

    def _extension_provider(
        self, choice: ModelChoice, session_id: str | None
    ) -> SessionModel | None:
        """The model ``choice`` of a provider an extension declares (``vis.Provider``); None
        when no extension declares it, or config.toml has a ``[providers.NAME]`` of its own."""
        if not any(e.declaration and e.declaration.providers for e in self.extensions.enabled):
            return None  # none declares a provider (most starts): nothing more to import
        from vis_core.extension_host.provider_stream import ExtensionProvider
        from vis_core.model_choices import extension_providers

        found = extension_providers(self).get(choice.provider)
        if found is None:
            return None
        owner, declaration = found
        place = WorkerPlace(session_id, self.workspace, self.project_root, self.options.channel)
        provider = ExtensionProvider(
            owner,
            declaration,
            lambda: self.extension_workers.get(session_id) if session_id else None,
            lambda: SessionWorkers(lambda: self.extensions, place, self.project_values()),
            overrides=choice.options,
        )
        label = f"{choice.provider}/{choice.model}"
        try:
            provider.model_info(choice.model)  # a model it declares, with valid overrides
        except ProviderError as exc:
            return SessionModel(None, choice.model, label, str(exc))
        return SessionModel(provider, choice.model, label)

    def _setting_saved(self, result: SaveResult) -> None:
        """Apply a saved change on the host's loop, between requests (a save may come from a
        thread: an extension's call, a setting's on_change): ``model`` switches sessions,
        ``introspection`` tools."""
        if not result.changed:
            return
        loop = self.runtime.loop
        if loop is not None and not loop.is_closed() and not on_loop(loop):
            loop.call_soon_threadsafe(self._apply_saved, result)
            return
        self._apply_saved(result)

    def _apply_saved(self, result: SaveResult) -> None:
        if result.setting_id == "introspection":
            self.reset_session_tools()
        if result.setting_id == "model" and result.session_id is not None:
            for session in self.sessions:
                if session.id == result.session_id:
                    session.model = self.model_of_session(session.id)

    def startup_notes(self) -> list[str]:
        """What a person should know before the first turn (e.g. skipped project code)."""
        notes = []
        project_code = (self.project_root / ".vis" / "extensions").is_dir() or (
            self.project_root / ".vis" / "mcp.json"
        ).is_file()
        if project_code and not self.trusted:
            notes.append(
                f"project {self.project_root} is not trusted, so its extensions and MCP servers "
                f"were skipped; run `vis trust {self.project_root}` to allow them"
            )
        if self.trust_changed:
            notes.append(control_files_changed(self.project_root))
        linked = self.settings.snapshot.linked_folders
        if linked and self.trusted:
            notes.append(
                f"project {self.project_root}: {', '.join(linked)} is a link to a folder; Vis "
                "does not follow linked folders inside .vis/ (what they point to can change "
                "after you trusted the project), so nothing under it loads. Copy the folder "
                "into .vis/ instead, then run `vis trust` again."
            )
        refusal = self.jail_policy()[1]
        if refusal is not None:
            notes.append(refusal)
        home = self.home_notice()
        if home is not None:
            notes.append(home)
        notes.extend(self.settings.untrusted_notes())
        notes.extend(self.settings.problems)
        notes.extend(self.settings.invalid_notes())
        notes.extend(self.settings.toggle_problems())
        notes.extend(self.commands.file_problems())
        return notes

    def extension_warnings(self) -> list[str]:
        """One warning per extension that failed to load, naming it and ``vis doctor``."""
        from vis_core.model.extensions import ExtensionStatus

        warnings = []
        for ext in self.extensions.extensions:
            if ext.status is not ExtensionStatus.FAILED:
                continue
            cause = str(ext.error).splitlines()[0] if ext.error is not None else "no cause given"
            warnings.append(
                f"Extension {ext.name} failed to load, so its tools, commands and settings are "
                f"missing: {cause}. Run `vis doctor` for every extension's status; fix the file "
                "and Reload in Settings (F2)."
            )
        return warnings

    # -- extensions ---------------------------------------------------------------------------

    def extension_tools(self) -> list[HostTool]:
        return self.extensions.host_tools()

    def extension_commands(self) -> list[tuple[str, Any]]:
        return [
            (ext.name, command)
            for ext in self.extensions.enabled
            if ext.declaration is not None
            for command in ext.declaration.slash_commands
        ]

    def extension_lock(self, owner: str) -> ExtensionLock | None:
        ext = self.extensions.get(owner)
        return None if ext is None else ext.lock

    async def call_extension(
        self,
        owner: str,
        fn: Callable[..., Any],
        *args: Any,
        session_id: str | None = None,
        command: str | None = None,
    ) -> Any:
        """Run an extension callback in a worker thread, serialized per extension, as a call
        of ``owner`` in session ``session_id`` (``vis.state``, ``vis.notify`` … work in it)."""
        from vis_core.extension.context import CallContext, calling

        lock = self.extension_lock(owner)
        session = self.live_session(session_id) if session_id else None
        context = CallContext(
            session_id=session_id,
            workspace_root=self.workspace,
            project_root=self.project_root,
            owner=owner,
            channel=self.options.channel,
            runtime=self.runtime,
            loop=asyncio.get_running_loop(),
            # vis.tools works as in a tool call of that session
            activities=session.invoker if session is not None else None,
        )

        ext = self.extensions.get(owner)
        if command is not None and runs_in_worker(ext):
            worker = self.extension_workers.get(session_id) if session_id else None
            # with no session, a worker of no session started for this command alone
            temporary = None
            if worker is None:
                place = WorkerPlace(None, self.workspace, self.project_root, self.options.channel)
                worker = temporary = SessionWorkers(
                    lambda: self.extensions, place, self.project_values()
                )

            def in_worker() -> Any:  # the command runs in an extension worker, not here
                from vis_core.ipc.messages import TargetKind

                try:
                    with calling(context):
                        return worker.call_sync(TargetKind.COMMAND, owner, command, args)
                finally:
                    if temporary is not None:
                        temporary.stop()

            return await asyncio.to_thread(in_worker)

        def run() -> Any:
            with calling(context):
                if lock is None:
                    return fn(*args)
                with lock:
                    return fn(*args)

        return await asyncio.to_thread(run)

    def reload(self) -> str:
        """Re-read every extension; sessions see the new tools from their next block."""
        self._read_extensions()
        return self._apply_reload()

    async def reload_async(self) -> str:
        """``reload`` with the reading (the registration worker's time, up to the load time
        limit) in a thread, so the loop stays free; what starts servers and workers runs on
        the loop, as ``reload`` on the loop does."""
        await asyncio.to_thread(self._read_extensions)
        return self._apply_reload()

    def _read_extensions(self) -> None:
        # the settings files and the project's control files, read again (once) and checked
        # against the trust list again: a change since the start needs `vis trust` first
        self.settings.refresh()
        snapshot, trusted = self.settings.snapshot, self.settings.trusted
        options = replace(
            self.extensions.options,
            disabled=self.settings.disabled_extensions(),  # the on/off switches as saved now
            load_timeout=float(self.settings.value("extension_load_timeout")),
            trusted=trusted,
            snapshot=snapshot if trusted else None,
            environment=extension_environment(
                self.project_root, trusted=trusted, snapshot=snapshot
            ),
        )
        self.extensions = replace(self.extensions, options=options).reload()

    def _apply_reload(self) -> str:
        self.mcp.reload_soon()  # mcp.json and extension servers, read again
        from vis_core.extension_host.session_kit import called_per_request

        again = called_per_request(self.extensions)
        for worker in self.extension_workers.values():  # the next call starts a new one
            worker.stop(RELOADED)
            if again:  # the next request calls into it: start it now, in the background
                worker.prestart()
        self.reset_session_tools()
        from vis_core.extension_host.doctor import describe

        rows = describe(self.extensions)
        failed = [row for row in rows if row.failed]
        text = f"{len(self.extensions.enabled)} loaded, {len(failed)} failed."
        return text + "".join(f"\n- {row.name}: {row.error}" for row in failed)

    # -- sessions -------------------------------------------------------------------------

    def latest_session_id(self) -> str | None:
        row = self.store.latest_session(self.workspace)
        return row.id if row else None

    async def new_session(self) -> AgentSession:
        row = self.store.create_session(self.workspace, self.project_root)
        self.store.append(SessionCreated(row.id, title=row.title, workspace=str(self.workspace)))
        self.mcp.start()
        return self._session(row.id, row.title, history=[])

    async def open_session(self, session_id: str) -> AgentSession:
        row = self.store.get_session(session_id)
        if row is None:
            raise LookupError(f"no session {session_id!r}; `vis sessions` lists them")

        def restore() -> AgentSession:  # a long session reads for seconds; keep the loop free
            if not open_here:  # no live session of this process runs these turns
                self._end_interrupted_turns(row.id)
            stored = self.store.events(row.id, types=HISTORY_EVENTS)
            history = [event.event for event in stored]
            return self._session(row.id, row.title, history=history)

        open_here = self.session_locks.holds(row.id)
        self.session_locks.acquire(row.id)  # refuse before reading a long history
        try:
            self.mcp.start()
            return await asyncio.to_thread(restore)
        finally:
            self.session_locks.release(row.id)

    def _end_interrupted_turns(self, session_id: str) -> None:
        """A turn still ``running`` when nobody holds the session was cut off (Vis was killed):
        it ends as cancelled, saying so, before the session is shown again."""
        for turn_id in self.store.running_turns(session_id):
            self.store.append(
                TurnEnded(
                    session_id,
                    turn_id=turn_id,
                    status=TurnStatus.CANCELLED,
                    error=INTERRUPTED,
                )
            )

    def _session(self, session_id: str, title: str, history: list[Event]) -> AgentSession:
        self.session_locks.acquire(session_id)  # SessionInUse when another Vis has it open
        from vis_core.session_factory import build_session

        try:
            session = build_session(self, session_id, title, history)
        except BaseException:
            self.session_locks.release(session_id)
            raise
        self.sessions.append(session)
        self.interaction.attach(session)
        return session

    async def close_session(self, session: AgentSession) -> None:
        """Close one open session and forget it (a child session whose turn ended)."""
        try:
            await session.close()
        finally:
            self.interaction.detach(session.id)
            if session in self.sessions:
                self.sessions.remove(session)

    def live_session(self, session_id: str) -> AgentSession | None:
        """The open session ``session_id`` of this workspace (a call's session is found here)."""
        return next((s for s in self.sessions if s.id == session_id), None)

    def keep_session_parts(
        self, session_id: str, worker: SessionWorkers, tools: SessionTools
    ) -> None:
        """What an open session runs on that the workspace reaches: its extension worker
        (stopped by /reload) and its tool set (rebuilt after /reload or a setting change)."""
        self.extension_workers[session_id] = worker
        self.session_tools[session_id] = tools

    def drop_session_parts(
        self, session_id: str, worker: SessionWorkers, tools: SessionTools
    ) -> None:
        """The session closed: forget its parts and let another Vis open it."""
        if self.extension_workers.get(session_id) is worker:
            del self.extension_workers[session_id]
        if self.session_tools.get(session_id) is tools:
            del self.session_tools[session_id]
        self.session_locks.release(session_id)

    def reset_session_tools(self) -> None:
        """Every open session builds its tools again before its next block."""
        for tools in list(self.session_tools.values()):
            tools.reset()

    @property
    def trusted(self) -> bool:
        """Whether the project's control files, as last read, are the ones the person
        trusted (checked at the start and at each ``/reload``)."""
        return self.settings.trusted

    def control_files_notice(self) -> str | None:
        """The notice, said once, that the trusted project's control files changed since
        they were read (the project needs ``vis trust`` again); else None."""
        if not self.trusted:
            return None
        loaded = self.settings.snapshot.fingerprint
        if self._told_changed == loaded or project_fingerprint(self.project_root) == loaded:
            return None
        self._told_changed = loaded
        return control_files_changed(self.project_root)

    def new_control_notice(self) -> str | None:
        """The warning, said once per path, that a ``.git`` (or, in an untrusted project,
        ``.vis/extensions``, ``.vis/mcp.json`` or ``vis.yml``) appeared since startup in the
        workspace or project folder: the person's git, or trusting the project, would run what
        it names. None when nothing appeared."""
        for path in sorted(self._absent):
            if not os.path.lexists(path):
                continue
            self._absent.discard(path)
            if path.name == ".git":
                return (
                    f"a .git appeared in {path.parent} during this session (a block or command "
                    "created it). git run there reads its .git/config and hooks, which can run "
                    "programs (core.fsmonitor, hooks); check them before you run git there, or "
                    "remove that .git"
                )
            return (
                f"{path} appeared during this session (made by a block, a command or you). "
                "It loads code or changes settings once the project is trusted: read it "
                f"before you run `vis trust {self.project_root}` or trust the project"
            )
        return None

    def jail_policy(self, session_id: str | None = None) -> tuple[bool, str | None]:
        """Whether the jail is on for ``session_id``, and why nothing may run (fail closed):
        when the ``jail`` setting cannot be read, blocks and shell commands are refused."""
        return jail_policy(self.settings, session_id)

    def jail_mode(self, session_id: str | None = None) -> tuple[bool, str]:
        """Whether blocks and shell commands of ``session_id`` run jailed, and one line that
        says so: the mode, why, and what to install where the jail cannot run."""
        return jail_mode(self.settings, self.workspace, session_id)

    def home_notice(self) -> str | None:
        """The warning that the workspace is the home folder or holds it, else None."""
        return home_warning(self.workspace)

    def child_limits(self, session_id: str | None = None) -> ChildLimits:
        """Memory and process limits of the sandbox and its shells (settings)."""
        return ChildLimits(
            memory_mb=int(self.setting("memory_limit", "8192", session_id)),
            processes=int(self.setting("process_limit", "4096", session_id)),
        )

    def project_values(self) -> dict[str, str]:
        """The environment the project defines (``environment:``, ``.env``, ``.env.local``);
        empty until the project is trusted."""
        if not self.trusted:
            return {}
        return project_environment(self.project_root, self.settings.snapshot)

    def setting(self, setting_id: str, default: Any, session_id: str | None = None) -> Any:
        """A setting's effective value for ``session_id`` (project level without one)."""
        try:
            return self.settings.value(setting_id, session_id)
        except KeyError:
            return default

    async def host_at(self, root: Path) -> Host:
        """The Vis of workspace ``root`` (its project's trust, settings, extensions and MCP
        servers), opened once and closed with this one; this host for its own workspace."""
        root = Path(root).expanduser().resolve()
        if root == self.workspace:
            return self
        if not root.is_dir():
            raise ValueError(f"root {root} is not a folder; give the workspace a session runs in")
        async with self._other_roots_lock:
            other = self._other_roots.get(root)
            if other is None:
                other = await Host.open(replace(self.options, workspace=root))
                self._other_roots[root] = other
            return other

    async def close(self) -> None:
        for other in self._other_roots.values():
            await other.close()
        self._other_roots.clear()
        self.interaction.close()
        for session in list(self.sessions):
            await session.close()
        self.sessions.clear()
        await self.mcp.close()
        self.settings.uninstall()
        uninstall(self.runtime)
        self.session_locks.release_all()
        self.store.close()


def _trust_changed(paths: VisPaths, snapshot: ControlSnapshot) -> bool:
    try:
        return TrustStore(paths).changed(snapshot)
    except RuntimeError:
        return False
