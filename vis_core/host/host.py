"""The composition root: one workspace's services, built in dependency order."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from vis_core.agent.session import AgentSession
from vis_core.command_host import CommandDeps
from vis_core.commands import CommandRegistry
from vis_core.config import ConfigFile, UserConfig, load_config
from vis_core.drafts import Drafts
from vis_core.extension_host.callbacks import on_change_runner
from vis_core.extension_host.environment import extension_environment
from vis_core.extension_host.host_port import HostPort
from vis_core.extension_host.loaded import LoadedExtensions
from vis_core.extension_host.loader import load_extensions
from vis_core.extension_host.runtime import HostRuntime, RuntimeDeps
from vis_core.extension_host.session_workers import SessionWorkers
from vis_core.extension_host.worker_client import WorkerPlace
from vis_core.host.extensions import ExtensionCatalog
from vis_core.host.live_settings import LiveSettings
from vis_core.host.models import ModelResolver
from vis_core.host.sdk_port import SdkPort
from vis_core.host.session_factory import SessionFactory
from vis_core.host.session_parts import DraftApproval
from vis_core.host.sessions import SessionRegistry
from vis_core.host.workspace import Workspace
from vis_core.host_options import HostOptions
from vis_core.instructions.files import foreign_instructions
from vis_core.interaction import Interaction
from vis_core.model.channel import Channel
from vis_core.paths import (
    ControlSnapshot,
    TrustStore,
    VisPaths,
    find_project_root,
    foreign_projects,
    not_yours_notice,
    trust_lapsed,
)
from vis_core.settings.core import extension_load_timeout
from vis_core.settings.logfile import attach_log_file
from vis_core.settings.order import ChangeOrder
from vis_core.settings.service import SettingsService
from vis_core.settings.storage import disabled_extensions
from vis_core.settings.trust_notice import not_loaded, skipped_notice
from vis_core.store import Store
from vis_core.store.session_lock import SessionLocks
from vis_core.system import jail_check
from vis_core.system.jail import home_warning
from vis_core.welcome import verified


def _open_store(path: Path) -> Store:
    """The store, its writer's thread started: off the loop, not in the first turn's first
    event (a thread's start waits for the thread to run)."""
    store = Store(path)
    store.writer.start()
    return store


def _trust_changed(paths: VisPaths, snapshot: ControlSnapshot) -> bool:
    """Whether the person trusted the project of ``snapshot`` with other control files (an
    unreadable trust list trusts nothing, and says so in the settings' notes)."""
    try:
        return TrustStore(paths).changed(snapshot)
    except RuntimeError:
        return False


def _tidy(paths: VisPaths) -> None:
    """What earlier runs left: the temporary files of writes cut short that the journal of
    ``paths`` names (older than a minute; no folder is walked for them), and the temporary
    folders of a Vis that was killed."""
    from vis_core.system.leftovers import sweep
    from vis_core.system.temp_journal import remove_stale_temps

    remove_stale_temps(paths)
    sweep()


class Host:
    """Everything one running Vis shares between its sessions: its services (``space``,
    ``catalog``, ``settings``, ``models``, ``registry``, ``factory``) and what takes the
    whole host (commands, child sessions, MCP, the SDK's runtime), built in that order."""

    def __init__(
        self,
        options: HostOptions,
        paths: VisPaths,
        config: UserConfig,
        store: Store,
        extensions: LoadedExtensions,
        snapshot: ControlSnapshot,
        order: ChangeOrder | None = None,
    ):
        """``snapshot``: the project's control files as :meth:`open` read them and checked
        them against the trust list (``extensions`` were loaded from it). Settings,
        environment and MCP servers are read from it, not from the files. ``order``: the
        settings of the other workspaces this process opened (they share the user's)."""
        self.options = options
        self.paths = paths
        self.store = store
        root = options.workspace.resolve()
        project_root = find_project_root(root)
        if snapshot.root != project_root:
            snapshot = verified(paths, project_root)[0]
        self.catalog = ExtensionCatalog(extensions)
        self.settings = SettingsService(
            paths=paths,
            store=store,
            project_root=project_root,
            workspace=root,
            extensions=self.catalog.current,
            toggles=options.toggles,
            channel=options.channel,
            snapshot=snapshot,  # checked against the trust list there, at each refresh too
            order=order,
        )
        self.space = Workspace(paths, root, self.settings)
        self.settings.install()  # secret redaction answers from here
        attach_log_file(paths, self.settings.redactor)
        self.interaction = Interaction()  # vis.ask / vis.live reach the front end here
        self.drafts = Drafts(store, paths.data_dir)  # the sessions' isolated working copies
        locks = SessionLocks(paths.session_locks_dir)
        self.registry = SessionRegistry(store, root, project_root, self.interaction, locks)
        store.writer.call(self.registry.delete_abandoned)  # in order, before any new session
        try:  # the host's loop: sessions built in a thread, and threads, reach it
            loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:  # built outside an event loop: threads reach it for reads only
            loop = None
        # the SDK's calls this host serves reach it here: passed to whatever serves them,
        # never installed in the process
        self.runtime = HostRuntime(
            RuntimeDeps(
                store,
                self.interaction,
                self.settings,
                self.space,
                self.catalog,
                self.registry,
                loop,
            )
        )
        self.settings.runtime = self.runtime  # an on_change call's
        # where the host's extension workers run (a session's: its id and roots there)
        self.place = WorkerPlace(None, root, project_root, options.channel, self.runtime, loop)
        self.models = ModelResolver(
            options,
            ConfigFile(config.path, config),
            self.settings,
            self.catalog,
            self.space,
            self.registry.extension_workers.get,
            self.place,
        )
        # a saved setting reaches the open sessions it shapes, between their requests
        live = LiveSettings(self.registry, self.space, self.models)
        self.settings.saved_listeners.append(live.saved)
        # a setting's on_change runs in an extension worker, as the extension's other code
        self.settings.on_change_runner = on_change_runner(
            self.catalog.current,
            lambda: dict(self.registry.extension_workers),
            self.place,
            self.space.project_values,
        )
        # the Vis of each other root vis.sessions.create(root=...) started a session in
        self._other_roots: dict[Path, Host] = {}
        self._other_roots_lock = asyncio.Lock()
        self._reloading = asyncio.Lock()  # one reload at a time (the Settings screen's, /reload)
        self.reloaded_listeners: list[Callable[[], None]] = []  # the commands may have changed
        # what uses the services above (the host only opens sessions for child sessions)
        from vis_core.mcp.host import HostMcp, McpDeps
        from vis_core.subagents import SubagentDeps, Subagents

        # child sessions: run_session, consult, vis.council (the host opens and closes them)
        self.subagents = Subagents(
            SubagentDeps(store, self.settings, self.models, self, self.registry.session_tools)
        )
        # MCP servers: connected when the first session starts
        self.mcp = HostMcp(
            McpDeps(
                paths,
                root,
                project_root,
                lambda: self.space.trusted,
                lambda: self.settings.snapshot,  # the control files as checked against trust
                lambda: self.catalog.loaded,
                store,
                self.registry.reset_tools,
                "`vis mcp list` shows details"
                if options.channel is Channel.CLI
                else "/mcp shows details",
            )
        )
        # slash commands and model choices
        self.command_deps = CommandDeps(
            options,
            paths,
            store,
            self.settings,
            self.space,
            self.catalog,
            self.models,
            self.mcp,
            self.reload,
            self.call_extension,
        )
        self.commands = CommandRegistry(self.command_deps)
        self.factory = SessionFactory(
            store=store,
            workspace=self.space,
            settings=self.settings,
            catalog=self.catalog,
            models=self.models,
            registry=self.registry,
            mcp=self.mcp,
            subagents=self.subagents,
            drafts=self.drafts,
            approval=DraftApproval(options, self.settings, self.interaction),
            place=self.place,
        )
        # what vis.sessions, vis.council and vis.attach reach (a session can open sessions)
        self.port = SdkPort(
            store,
            self.space,
            self.settings,
            self.models,
            self.catalog,
            self.registry,
            self.factory,
            self.mcp,
            self._port_at,
            loop,
        )
        self.runtime.serve(self.port)

    @classmethod
    async def open(
        cls,
        options: HostOptions,
        order: ChangeOrder | None = None,
        *,
        loading_extensions: Callable[[], None] | None = None,
    ) -> Host:
        """``loading_extensions``: called on the loop as the extensions start loading (their
        entry files may take up to the load time limit), for a front end to say so."""
        paths = VisPaths.from_env().ensure()
        # the jail check (a jailed `true`, once per process) runs while the rest starts
        jail_check.check_in_background()
        config = load_config(paths.config_file)
        store = await asyncio.to_thread(_open_store, paths.db_file)
        project_root = find_project_root(options.workspace.resolve())
        # The control files are read once: what is checked against the trust list is what
        # loads (extension code, settings, environment, MCP servers), never read again.
        snapshot, trusted = await asyncio.to_thread(verified, paths, project_root)
        lapsed = not trusted and _trust_changed(paths, snapshot)
        if loading_extensions is not None:
            loading_extensions()
        extensions = await asyncio.to_thread(
            load_extensions,
            project_root=project_root,
            disabled=disabled_extensions(paths.config_file),
            trusted=trusted,
            lapsed=lapsed,
            paths=paths,
            environment=extension_environment(project_root, trusted=trusted, snapshot=snapshot),
            load_timeout=extension_load_timeout(config.data),
            snapshot=snapshot if trusted else None,
        )
        # Interrupted writes' temp files and the folders of a killed Vis go in the
        # background: a folder on a slow disk must not hold up the first prompt.
        threading.Thread(target=_tidy, args=(paths,), name="vis-stale-temps", daemon=True).start()
        return cls(options, paths, config, store, extensions, snapshot, order)

    def startup_notes(self) -> list[str]:
        """What a person should know before the first turn (e.g. skipped project code)."""
        notes = []
        project = self.space.project_root
        if not self.space.trusted:  # one note, whether never trusted or changed since
            settings = self.settings.skipped_settings()
            skipped = skipped_notice(project, lapsed=self.space.trust_changed, settings=settings)
            notes += [skipped] if skipped is not None else []
        linked = self.settings.snapshot.linked_folders
        if linked and self.space.trusted:
            notes.append(
                f"project {project}: {', '.join(linked)} is a link to a folder; Vis "
                "does not follow linked folders inside .vis/ (what they point to can change "
                "after you trusted the project), so nothing under it loads. Copy the folder "
                "into .vis/ instead, then run `vis trust` again."
            )
        foreign = [
            *foreign_projects(self.space.root),
            *foreign_instructions(project, self.space.root),
        ]
        if foreign:
            notes.append(not_yours_notice(foreign))
        if self.space.trusted:  # the other files' problems are said where they load
            notes += [
                f"project {project}: {line}" for line in not_loaded(self.settings.snapshot, ".env")
            ]
        # every value Vis cannot read that decides what runs (the jail's, a limit's, each
        # --toggles entry), said once; a front end that stops on it says it on its own
        refusal = self.settings.refusal()
        if refusal is not None:
            notes.append(refusal)
        home = home_warning(self.space.root)  # the workspace is the home folder or holds it
        if home is not None:
            notes.append(home)
        notes.extend(
            problem
            for problem in self.settings.problems
            if refusal is None or problem.rstrip(".") not in refusal
        )
        notes.extend(self.settings.invalid_notes())
        notes.extend(self.settings.unknown_notes())
        notes.extend(self.commands.file_problems())
        return notes

    # -- extensions (``catalog``) --------------------------------------------------------------

    async def call_extension(
        self, owner: str, command: str, *args: Any, session_id: str | None = None
    ) -> Any:
        """Run slash command ``command`` of extension ``owner`` in an extension worker (the
        session's; with none, one started for it alone), as a call of ``owner`` in session
        ``session_id`` (``vis.state``, ``vis.notify`` … work in it)."""
        from vis_core.extension.context import CallContext, calling
        from vis_core.ipc.kinds import TargetKind

        session = self.registry.live_session(session_id) if session_id else None
        context = CallContext(
            session_id=session_id,
            workspace_root=self.space.root,
            project_root=self.space.project_root,
            owner=owner,
            channel=self.options.channel,
            runtime=self.runtime,
            loop=asyncio.get_running_loop(),
            # vis.tools works as in a tool call of that session
            activities=session.invoker if session is not None else None,
        )
        worker = self.registry.extension_workers.get(session_id) if session_id else None
        temporary = None  # with no session, a worker of no session started for this alone
        if worker is None:
            worker = temporary = SessionWorkers(
                self.catalog.current, self.place, self.space.project_values()
            )
        try:
            with calling(context):
                return await worker.call_in(TargetKind.COMMAND, owner, command, args)
        finally:
            if temporary is not None:
                await asyncio.to_thread(temporary.stop)

    async def reload(self) -> str:
        """``/reload``: read the settings files again (what changed reaches the open sessions
        as a save does), then every extension, in a thread (the registration worker's time,
        up to the load time limit); sessions see the new tools from their next block. One
        reload waits for the one under way."""
        async with self._reloading:
            failed = await self.settings.reread()  # on_change of a value found changed
            await asyncio.to_thread(self.catalog.read_again, self.settings)
            self.mcp.reload_soon()  # mcp.json and extension servers, read again
            self.registry.extensions_reloaded()
            summary = self.catalog.summary() + "".join(f"\n- {error}" for error in failed)
            if self.space.trust_changed and not self.catalog.skipped():
                # no project extension says why: the project's settings and servers were
                summary += f"\n{trust_lapsed(self.space.project_root)}"
            for listener in list(self.reloaded_listeners):
                listener()
            return summary

    # -- sessions (``registry``, built by ``factory``) ------------------------------------------

    async def new_session(self) -> AgentSession:
        return await self.port.new_session()

    async def open_session(self, session_id: str) -> AgentSession:
        return await self.port.open_session(session_id)

    async def _port_at(self, root: Path) -> HostPort:
        return (await self.host_at(root)).port

    async def close_session(self, session: AgentSession) -> None:
        await self.registry.close_session(session)

    async def host_at(self, root: Path) -> Host:
        """The Vis of workspace ``root`` (its project's trust, settings, extensions and MCP
        servers), opened once and closed with this one; this host for its own workspace."""
        root = Path(root).expanduser().resolve()
        if root == self.space.root:
            return self
        if not root.is_dir():
            raise ValueError(f"root {root} is not a folder; give the workspace a session runs in")
        async with self._other_roots_lock:
            other = self._other_roots.get(root)
            if other is None:
                other = await Host.open(replace(self.options, workspace=root), self.settings.order)
                self._other_roots[root] = other
            return other

    async def close(self, *, exiting: bool = False) -> None:
        """Close the sessions, servers and store; ``exiting``: the process ends next, without
        tearing down (``vis run``): the store's log is left for the next open."""
        for other in self._other_roots.values():
            await other.close(exiting=exiting)
        self._other_roots.clear()
        await self.interaction.close()
        await self.runtime.close()
        await self.registry.close()
        await self.mcp.close()
        self.settings.uninstall()
        self.store.close(exiting=exiting)
