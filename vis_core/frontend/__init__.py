"""The one façade front ends drive: sessions, commands, history, settings, models and MCP."""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import Awaitable, Callable, Collection, Coroutine, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, cast

from vis_core.lazy import lender, lent_names

if TYPE_CHECKING:
    import subprocess

    from vis_core import __version__ as __version__
    from vis_core.agent.deps import SessionInstructionFiles, SessionModel, WorkRoots
    from vis_core.agent.follow import SessionFollow as SessionFollow
    from vis_core.agent.session import AgentSession
    from vis_core.commands import CommandAction as CommandAction
    from vis_core.commands.headless import SCREEN_ONLY as SCREEN_ONLY
    from vis_core.commands.headless import is_command as is_command
    from vis_core.commands.plan import approval_form as approval_form
    from vis_core.context.hints import percent as percent
    from vis_core.events import Event, StoredEvent, TurnEnded
    from vis_core.extension.declarations import CommandResult as CommandResult
    from vis_core.extension.declarations import err as err
    from vis_core.extension.forms import Answer as Answer
    from vis_core.extension.forms import AnswerReason as AnswerReason
    from vis_core.extension.forms import Field as Field
    from vis_core.extension.forms import FieldType as FieldType
    from vis_core.extension.forms import Form as Form
    from vis_core.extension.forms import Group as Group
    from vis_core.extension.forms import Heading as Heading
    from vis_core.extension.forms import Paragraph as Paragraph
    from vis_core.extension.forms import iter_fields as iter_fields
    from vis_core.extension.forms import paragraph as paragraph
    from vis_core.extension.forms import password as password
    from vis_core.extension.forms import plaintext as plaintext
    from vis_core.extension.live import LiveEvent as LiveEvent
    from vis_core.extension.live import LiveEventKind as LiveEventKind
    from vis_core.extension.live_nodes import Button as Button
    from vis_core.extension.live_nodes import Code as Code
    from vis_core.extension.live_nodes import Disclosure as Disclosure
    from vis_core.extension.live_nodes import Divider as Divider
    from vis_core.extension.live_nodes import Links as Links
    from vis_core.extension.live_nodes import Output as Output
    from vis_core.extension.live_nodes import Progress as Progress
    from vis_core.extension.live_nodes import Spinner as Spinner
    from vis_core.extension.live_nodes import SpinnerVariant as SpinnerVariant
    from vis_core.extension.live_nodes import Stat as Stat
    from vis_core.extension.live_nodes import Status as Status
    from vis_core.extension.live_nodes import Steps as Steps
    from vis_core.extension.live_nodes import Table as Table
    from vis_core.extension.live_nodes import Tone as Tone
    from vis_core.extension.live_nodes import from_plain as from_plain
    from vis_core.extension.live_nodes import node_id as node_id
    from vis_core.extension.live_nodes import walk as walk
    from vis_core.extension.live_updates import LiveOp as LiveOp
    from vis_core.extension.live_updates import LiveUpdate as LiveUpdate
    from vis_core.extension.live_updates import apply as apply
    from vis_core.extension.live_updates import find as find
    from vis_core.extension.metadata import warm as warm
    from vis_core.extension.settings_decl import SettingScope as SettingScope
    from vis_core.extension.settings_decl import SettingType as SettingType
    from vis_core.extension_host.activity_paths import shorten_paths_in as shorten_paths_in
    from vis_core.frontend.panels import McpPanel as McpPanel
    from vis_core.frontend.panels import McpServerView as McpServerView
    from vis_core.frontend.panels import SettingsPanel as SettingsPanel
    from vis_core.host import Host
    from vis_core.host_options import HostOptions as HostOptions
    from vis_core.interaction import FormPresenter
    from vis_core.interaction import FormRequest as FormRequest
    from vis_core.mcp.client import ATTENTION as ATTENTION
    from vis_core.mcp.client import State as State
    from vis_core.mcp.command import NO_SERVERS as NO_SERVERS
    from vis_core.mcp.config import ConfigProblem as ConfigProblem
    from vis_core.mcp.config import Exposure as Exposure
    from vis_core.mcp.config import ServerConfig as ServerConfig
    from vis_core.mcp.config import Source as McpSource  # noqa: F401 (lent as McpSource)
    from vis_core.mcp.config import Transport as Transport
    from vis_core.mcp.config import parse_entry as parse_entry
    from vis_core.mcp.names import PREFIX as MCP_TOOL_PREFIX  # noqa: F401 (lent)
    from vis_core.model.activity import ActivityRecord
    from vis_core.model.choices import ModelEntry
    from vis_core.model.choices import ModelSource as ModelSource
    from vis_core.model.choices import ProviderEntry as ProviderEntry
    from vis_core.model.command import CommandInfo
    from vis_core.model.command import PromptToSend as PromptToSend
    from vis_core.model.draft import Draft
    from vis_core.model.images import PersonImage
    from vis_core.model.sessions import SearchHit, SessionRow, TurnRow
    from vis_core.model.story import StoryKind
    from vis_core.model.usage import Usage
    from vis_core.model.welcome import WelcomeFacts as WelcomeFacts
    from vis_core.model_choices import check_base_url as check_base_url
    from vis_core.model_choices import check_key as check_key
    from vis_core.model_choices import check_server_key as check_server_key
    from vis_core.model_choices import check_server_name as check_server_name
    from vis_core.model_choices import default_model as default_model
    from vis_core.settings.rows import NOT_SET as NOT_SET
    from vis_core.settings.rows import SAVED as SAVED
    from vis_core.settings.rows import RowState as RowState
    from vis_core.settings.service import SaveResult as SaveResult
    from vis_core.settings.tree import EXTENSIONS_SECTION as EXTENSIONS_SECTION
    from vis_core.settings.tree import VIS_SECTION as VIS_SECTION
    from vis_core.settings.tree import ExtensionGroup as ExtensionGroup
    from vis_core.settings.tree import SettingNode as SettingNode
    from vis_core.settings.tree import SettingsTree as SettingsTree
    from vis_core.settings.values import Source as Source
    from vis_core.system.browser import open_browser as open_browser
    from vis_core.system.exiting import exit_now as exit_now
    from vis_core.system.jail_check import check_in_background as check_in_background
    from vis_core.system.programs import host_program as host_program
    from vis_core.system.quiet import model_stopped as model_stopped
    from vis_core.terminal import terminal_text as terminal_text
    from vis_core.tools.context import FileBuffers
    from vis_core.tools.display import ago as ago
    from vis_core.tools.display import plural as plural
    from vis_core.tools.display import shorten_path as shorten_path
    from vis_core.tools.ignore import listed_files as listed_files
    from vis_core.tools.textfiles import BINARY_SNIFF_BYTES as BINARY_SNIFF_BYTES
    from vis_core.tools.textfiles import looks_binary as looks_binary

# What front ends use of the core's data types and helpers: the ``as`` imports above, each
# loaded on first use (the TUI's first frame imports none of them).
_LENT = lent_names(__file__)
__getattr__ = lender(__name__, _LENT)


async def stored_sessions(limit: int) -> list[SessionRow]:
    """Up to ``limit`` stored sessions of every workspace, newest first, read from the
    database of this VIS_HOME without opening a workspace."""
    from vis_core.paths import VisPaths
    from vis_core.store import Store

    store = await asyncio.to_thread(Store, VisPaths.from_env().ensure().db_file)
    try:
        return store.list_sessions(None, limit=limit)
    finally:
        store.close()


def load_core() -> None:
    """Import what :meth:`Frontend.open` runs (most of a start: call it in a thread)."""
    importlib.import_module("vis_core.host")


def welcome_facts(
    options: HostOptions, probe: subprocess.Popen[bytes] | None = None
) -> WelcomeFacts:
    """What a new session's welcome header says: as ``probe`` (``vis``'s child reading them)
    says, else read from the files here (imports included: call it off the UI's loop)."""
    if probe is not None:
        from vis_core import welcome_probe

        facts = welcome_probe.read(probe)
        if facts is not None:
            return facts
    from vis_core.welcome import welcome_facts as read_facts

    return read_facts(
        options.workspace,
        provider=options.provider,
        model=options.model,
        toggles=options.toggles,
        channel=options.channel,
    )


class PlanView(Protocol):
    """A session's plan mode (it reads and plans, and changes nothing)."""

    @property
    def active(self) -> bool: ...
    def set(self, active: bool, *, told: bool = False) -> bool:
        """Turn plan mode on or off; whether it changed."""
        ...


class DraftsView(Protocol):
    """A session's drafts: the one it works in, if any."""

    @property
    def draft(self) -> Draft | None: ...
    def roots(self) -> WorkRoots:
        """Where the session works now (the draft's copy while in one)."""
        ...

    async def changed_files(self) -> list[str]:
        """The files the current draft changed (git reads them, in a thread)."""
        ...


class Session(Protocol):
    """A session as a front end drives it: what the TUI reads and calls of one."""

    @property
    def id(self) -> str: ...
    @property
    def title(self) -> str: ...
    @property
    def model(self) -> SessionModel: ...
    @property
    def usage(self) -> Usage: ...
    @property
    def cost(self) -> float: ...
    @property
    def context_tokens(self) -> int: ...
    @property
    def context_budget(self) -> int: ...
    @property
    def plan(self) -> PlanView: ...
    @property
    def running(self) -> bool:
        """Whether a turn is under way."""
        ...

    @property
    def background_commands(self) -> int:
        """How many commands an ended block left running still run."""
        ...

    @property
    def drafts(self) -> DraftsView | None: ...
    @property
    def instructions(self) -> SessionInstructionFiles | None: ...

    def printed(self, lines: int) -> str:
        """The last ``lines`` lines the running block printed so far ("" when none runs)."""
        ...

    def subscribe(
        self, callback: Callable[[Event], None], *, early: bool = False
    ) -> Callable[[], None]:
        """Follow the session's events once committed; returns the unsubscriber."""
        ...

    def cancel(self) -> None: ...

    async def submit(
        self,
        text: str,
        *,
        mentions: Sequence[str] = (),
        command: bool = False,
        images: Sequence[PersonImage] = (),
    ) -> TurnEnded:
        """Run one turn for ``text`` (``command``: ``!command``, run in the workspace)."""
        ...


def _agent(session: Session) -> AgentSession:
    """The session behind ``session``: the façade hands out no other kind."""
    return cast("AgentSession", session)


class History(Protocol):
    """The stored history a front end pages through (read-only)."""

    def turns_page(
        self, session_id: str, before_position: int | None = None, limit: int = 20
    ) -> list[TurnRow]: ...
    def activities(self, turn_id: str) -> list[ActivityRecord]: ...
    def turn_story(self, session_id: str, turn_id: str) -> list[tuple[int, StoryKind, Any]]: ...
    def events(
        self,
        session_id: str,
        after_seq: int = 0,
        limit: int | None = None,
        *,
        types: Collection[str] | None = None,
    ) -> list[StoredEvent]: ...


class Frontend:
    """One workspace's core as a front end sees it; the Host and its services stay behind."""

    def __init__(self, host: Host) -> None:
        self._host = host

    @classmethod
    async def open(
        cls, options: HostOptions, *, loading_extensions: Callable[[], None] | None = None
    ) -> Frontend:
        """Open the core of ``options.workspace`` (its store, settings, extensions, model);
        ``loading_extensions`` is called as the extensions start loading."""
        from vis_core.host import Host

        return cls(await Host.open(options, loading_extensions=loading_extensions))

    async def close(self) -> None:
        """Close every session, the MCP servers and the store."""
        await self._host.close()

    # -- the workspace -------------------------------------------------------------------
    @property
    def workspace(self) -> Path:
        return self._host.space.root

    @property
    def trusted(self) -> bool:
        return self._host.space.trusted

    @property
    def trust_lapsed(self) -> bool:
        """Whether the project is not trusted because its control files changed since the
        person trusted it (checked at the start and at each ``/reload``)."""
        return self._host.space.trust_changed

    @property
    def model_label(self) -> str:
        """The project's model as ``provider/model`` (``no model`` without one)."""
        return self._host.models.label

    @property
    def model_problem(self) -> str | None:
        """Why no model can answer (what to do about it), else None."""
        return self._host.models.problem

    def startup_notes(self) -> list[str]:
        return self._host.startup_notes()

    def extension_warning(self, then: str) -> str | None:
        """The extensions that failed to load, in one notice ending in ``then``: what loads
        them again in this front end (None when all loaded)."""
        return self._host.catalog.load_warning(then)

    async def mcp_startup_notes(self, wait: float) -> list[str]:
        """The MCP servers' config problems and failed connections, once they settle (up to
        ``wait`` seconds), each said once (see :meth:`HostMcp.startup_notes`)."""
        return await self._host.mcp.startup_notes(wait)

    @property
    def project_root(self) -> Path:
        return self._host.space.project_root

    def settings_problem(self) -> str | None:
        """Why the settings cannot be read (nothing may run on such a value), else None."""
        return self._host.settings.refusal()

    def jail_mode(self, session_id: str | None = None) -> tuple[bool, str]:
        return self._host.space.jail_mode(session_id)

    def redact_text(self, text: str) -> str:
        """``text`` with every saved secret's value taken out."""
        return self._host.settings.redactor.text(text)

    def redact_event(self, event: Event) -> Event:
        """``event`` with every saved secret's value taken out of its fields."""
        from vis_core.events import event_payload

        return self._host.settings.redactor.event(event, *event_payload(event))[0]

    def extension_state(self, owner: str, key: str) -> Any:
        """What extension ``owner`` keeps under ``key`` (``vis.state``), else None."""
        return self._host.store.state_get(owner, key)

    def present_forms(self, presenter: FormPresenter) -> Callable[[], None]:
        """Show ``vis.ask`` forms with ``presenter``; returns its remover."""
        return self._host.interaction.add_presenter(presenter)

    def live_event(self, event: LiveEvent) -> None:
        """What the person did in a ``vis.live`` view (a button, a slider), to its extension."""
        self._host.interaction.live_event(event.view_id, event)

    # -- sessions ------------------------------------------------------------------------
    async def new_session(self) -> Session:
        return await self._host.new_session()

    async def open_session(self, session_id: str) -> Session:
        """Open a stored session (the one open here when it is: a process has one live copy
        of a session); LookupError when unknown or open in another Vis."""
        return await self._host.open_session(session_id)

    async def close_session(self, session: Session) -> None:
        """Close one open session and forget it (another Vis may open it then)."""
        await self._host.close_session(_agent(session))

    async def leave_session(self, session: Session) -> None:
        """The front end shows another session instead of ``session``: it closes (another
        Vis may open it then) now when idle, else once its turn and the commands its blocks
        left running have ended, neither cut short."""
        await self._host.registry.leave(_agent(session))

    def follow(self, session: Session, callback: Callable[[Event], None]) -> SessionFollow:
        """Follow ``session``, which may be running a turn, from what the store holds: see
        :class:`~vis_core.agent.follow.SessionFollow` (read, show, then start)."""
        from vis_core.agent.follow import SessionFollow

        agent = _agent(session)
        return SessionFollow(agent.events, self._host.store, agent.id, callback)

    def closed_unused(self, session_id: str) -> bool:
        """Whether ``session_id`` was closed here with nothing in it, and so not kept (there
        is nothing to resume)."""
        return session_id in self._host.registry.closed_unused

    def stream_thinking(self, session: Session, callback: Callable[[str], None] | None) -> None:
        """Hand ``session``'s reasoning to ``callback`` as it streams (unredacted)."""
        _agent(session).on_thinking = callback

    def use_editor_files(self, session: Session, buffers: FileBuffers | None) -> None:
        """``session``'s ``cat`` and ``patch`` read and write through ``buffers`` (an editor)."""
        tools = _agent(session).tool_context
        if tools is not None:
            tools.use_buffers(buffers)

    async def fork_session(self, session_id: str, what: str) -> str | None:
        """A stored copy of ``session_id`` up to its last settled turn: its id, None when no
        turn has settled yet (LookupError when there is no such session)."""
        from vis_core.extension_host.session_changes import fork_stored

        try:
            forked = await asyncio.wrap_future(
                fork_stored(self._host.store, session_id, None, what)
            )
        except ValueError:
            return None
        return forked.id

    def latest_session_id(self) -> str | None:
        return self._host.registry.latest_session_id()

    def stored_session_id(self, id_or_prefix: str) -> str | None:
        """The id of the stored session ``id_or_prefix`` names, else None."""
        row = self._host.store.get_session(id_or_prefix)
        return None if row is None else row.id

    def stored_session(self, id_or_prefix: str, *, exact: bool = False) -> SessionRow | None:
        """The stored session ``id_or_prefix`` names (``exact``: only its whole id), else
        None; ValueError says why the store cannot tell (an ambiguous prefix, an unreadable
        database)."""
        from vis_core.store import StoreError

        try:
            return self._host.store.get_session(id_or_prefix, exact=exact)
        except StoreError as exc:
            raise ValueError(str(exc)) from None

    def stored_sessions(self, workspace: Path | None, limit: int) -> list[SessionRow]:
        """Up to ``limit`` stored sessions, newest first: ``workspace``'s, or every one."""
        return self._host.store.list_sessions(workspace, limit=limit)

    def sessions(self) -> list[tuple[SessionRow, int]]:
        """This workspace's sessions, newest first, each child after its parent, with depth."""
        from vis_core.store.session_data import nested

        return nested(self._host.store.list_sessions(self._host.space.root))

    def search_sessions(self, query: str) -> list[SearchHit]:
        return self._host.store.search_sessions(query)

    # -- history -------------------------------------------------------------------------
    @property
    def history(self) -> History:
        return self._host.store

    def prompts(self, session_id: str) -> list[str]:
        """What the person sent in ``session_id``, oldest first (the prompt's Up history)."""
        return [row.text for row in self._host.store.prompts(session_id)]

    def add_prompt(self, session_id: str, text: str) -> None:
        self._host.store.add_prompt(session_id, text)

    def attachment_file(self, session_id: str, name: str) -> Path | None:
        """Where the bytes of attachment ``name`` (filename or id) of ``session_id`` are."""
        row = self._host.store.get_attachment(session_id, name)
        return None if row is None else Path(row.path)

    async def session_markdown(self, session_id: str) -> str:
        """The whole stored session as ``/export md`` writes it (the code blocks ran, what
        they printed, the files they changed; secrets redacted), read in a thread; empty
        when nothing is stored yet."""
        from vis_core.session_files import ExportFormat, export_session

        store = self._host.store

        def read() -> str:
            row = store.get_session(session_id)
            return "" if row is None else export_session(store, row, ExportFormat.MD)

        return await asyncio.to_thread(read)

    def folded_story(self, session_id: str, spans: Sequence[Sequence[int]]) -> str:
        """What a fold took out of the context, read back from the stored history."""
        from vis_core.context.folded_view import folded_story

        return folded_story(self._host.store, session_id, spans)

    # -- commands ------------------------------------------------------------------------
    def commands(self) -> list[CommandInfo]:
        return self._host.commands.all()

    def find_command(self, name: str) -> CommandInfo | None:
        return self._host.commands.find(name)

    def command_skipped(self, name: str) -> str | None:
        """Which project command files (or extensions) Vis skipped may offer the unknown
        command ``/name``, why, and the ``vis trust`` command that loads them; None when it
        skipped none."""
        return self._host.commands.skipped(name)

    def command_refusal(self, text: str) -> str | None:
        """Why the slash command ``text`` cannot run without the app's screens, else None."""
        from vis_core.commands.headless import command_refusal

        return command_refusal(self._host.commands, text)

    async def run_command(self, session: Session | None, text: str) -> CommandResult:
        return await self._host.commands.run(None if session is None else _agent(session), text)

    # -- settings ------------------------------------------------------------------------
    @property
    def settings(self) -> SettingsPanel:
        """The settings tree as the Settings screen shows and saves it."""
        from vis_core.frontend.panels import SettingsPanel

        return SettingsPanel(self._host.settings)

    def setting(self, setting_id: str, default: Any, session_id: str | None = None) -> Any:
        """A setting's effective value for ``session_id`` (project level without one)."""
        return self._host.settings.get(setting_id, default, session_id)

    def on_setting_saved(self, listener: Callable[[SaveResult], Awaitable[None]]) -> None:
        """Await ``listener`` after every save or reset (on the loop)."""
        self._host.settings.saved_listeners.append(listener)

    async def reload(self) -> str:
        """Read every extension again (``/reload``): "N loaded, M failed" and why."""
        return await self._host.reload()

    def on_reloaded(self, listener: Callable[[], None]) -> None:
        """Call ``listener`` after every reload (``/reload``, the Settings screen's): the
        commands offered may have changed."""
        self._host.reloaded_listeners.append(listener)

    # -- models --------------------------------------------------------------------------
    @property
    def config_file(self) -> Path:
        return self._host.paths.config_file

    @property
    def secrets_file(self) -> Path:
        return self._host.paths.secrets_file

    @property
    def data_dir(self) -> Path:
        """Vis's data folder: its saved outputs and attachments, which chips open."""
        return self._host.paths.data_dir

    def reread_config(self) -> None:
        """Read ``config.toml`` again if it changed (a provider added since the start)."""
        _ = self._host.models.config  # read again when it changed

    async def resolve_model_again(self, session: Session) -> None:
        """Give ``session`` its model as ``config.toml`` and the saved keys name it now: a
        session opened before a model was set up (elsewhere: ``vis`` and /login) gets it."""
        self.reread_config()
        await _agent(session).switch_model(self._host.models.model_of_session(session.id))

    def model_entries(
        self, provider: str | None = None, current: str | None = None
    ) -> list[ModelEntry]:
        from vis_core.model_choices import model_entries

        return model_entries(self._host.command_deps, provider, current)

    async def ask_servers(self, only: str | None = None) -> dict[str, str]:
        """Ask the model servers what they serve; a problem per server that did not answer."""
        from vis_core.model_choices import ask_servers

        return await ask_servers(self._host.command_deps, only)

    def providers(self) -> list[ProviderEntry]:
        from vis_core.model_choices import providers

        return providers(self._host.command_deps)

    def provider_named(self, name: str) -> ProviderEntry | None:
        from vis_core.model_choices import entry_named

        return entry_named(self._host.command_deps, name)

    async def use_model(self, session: Session, text: str) -> CommandResult:
        """Switch ``session`` to the model ``text`` names (``/model NAME``)."""
        from vis_core.model_choices import use_model

        return await use_model(self._host.command_deps, _agent(session), text)

    async def login(
        self, session: Session | None, entry: ProviderEntry, key: str, model: str
    ) -> CommandResult:
        """Save the provider's key, make ``model`` the default and use it now (``/login``)."""
        from vis_core.model_choices import login

        agent = None if session is None else _agent(session)
        return await login(self._host.command_deps, agent, entry, key, model)

    async def save_local_server(self, name: str, base_url: str, key: str = "") -> ProviderEntry:
        """Save a server of one's own as ``[providers.NAME]``; ValueError says what is wrong."""
        from vis_core.model_choices import save_local_server

        return await save_local_server(self._host.command_deps, name, base_url, key)

    # -- MCP -----------------------------------------------------------------------------
    def join_mcp_servers(
        self, servers: list[ServerConfig], problems: Sequence[ConfigProblem] = ()
    ) -> Coroutine[Any, Any, list[McpServerView]]:
        """Servers an editor passed join this workspace for the rest of the run (``problems``:
        those it passed that cannot run), started now; awaited, each once it has connected or
        failed (up to its own timeout: a slow start is not a failure)."""
        from vis_core.frontend.panels import settled

        for problem in problems:
            self._host.mcp.manager.add_problem(problem)
        return settled(self._host.mcp.join(servers))

    @property
    def mcp(self) -> McpPanel:
        """The workspace's MCP servers, their state, sign-in and exposure."""
        from vis_core.frontend.panels import McpPanel

        return McpPanel(self._host.mcp.manager)
