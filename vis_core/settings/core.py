"""Vis's own settings, declared like extension settings so every front end shows them alike."""

from __future__ import annotations

from typing import Any

from vis_core.extension.settings_decl import Setting, SettingScope

ALL_SCOPES = tuple(SettingScope)

MODEL = Setting(
    id="model",
    label="Default model",
    type="string",
    default="",
    scopes=ALL_SCOPES,
    description=(
        "provider/model the sessions use (an open one from its next request), such as "
        "openai/gpt-5. Empty: "
        "anthropic/claude-sonnet-4-6 when ANTHROPIC_API_KEY is set, else openai/gpt-5 when "
        "OPENAI_API_KEY is."
    ),
)
JAIL = Setting(
    id="jail",
    label="Jail shell commands",
    default=False,  # the declared value; the effective default is default_value(JAIL)
    scopes=ALL_SCOPES,
    description=(
        "Run shell commands and blocks in a sandbox that can write only the workspace. "
        "Default: on where bubblewrap works; false runs them unconfined. An open session's "
        "next block runs in a new sandbox process (its helpers restored)."
    ),
)
INTROSPECTION = Setting(
    id="introspection",
    label="Introspection",
    default=True,
    scopes=ALL_SCOPES,
    description="Offer the model apropos() and doc() to look up tools, contracts and guides.",
)
SESSIONS_SCOPE = Setting(
    id="sessions_scope",
    label="Sessions the model reads",
    type="enum",
    default="workspace",
    choices=("workspace", "all"),
    # never a project's to decide: its checkout would open the person's other projects
    scopes=(SettingScope.GLOBAL, SettingScope.GROUP, SettingScope.SESSION),
    description="Which stored sessions list_sessions() and read_session() reach: this "
    "workspace's, or those of every workspace (other projects' conversations too); an open "
    "session's from its next request.",
)
MAX_ITERATIONS = Setting(
    id="max_iterations",
    label="Iterations per turn",
    type="enum",
    default="50",
    choices=("10", "25", "50", "100", "200"),
    scopes=ALL_SCOPES,
    description="How many code blocks the model may run before a turn stops (a turn under "
    "way: from its next request).",
)
SUMMARIZE_STEPS = Setting(
    id="summarize_steps",
    label="Summarize steps",
    default=True,
    scopes=ALL_SCOPES,
    description="End each turn with its step counts, e.g. 1 mutation · 6 observations.",
)
THEME = Setting(
    id="theme",
    label="Theme",
    type="enum",
    default="textual-dark",
    choices=("textual-dark", "textual-light", "nord", "gruvbox", "monokai"),
    description="Colours of the terminal app.",
)

EXTENSION_LOAD_TIMEOUT = Setting(
    id="extension_load_timeout",
    label="Extension load time limit",
    type="enum",
    default="10",
    choices=("2", "5", "10", "30", "60"),
    description="Seconds an extension's entry file may take to load before it is stopped.",
)
BLOCK_TIME_LIMIT = Setting(
    id="block_time_limit",
    label="Block time limit (seconds)",
    type="enum",
    default="1800",
    choices=("300", "600", "1800", "3600", "0"),
    scopes=ALL_SCOPES,
    description="A code block running longer is stopped; 0 means no limit. A turn under way "
    "keeps to it from its next request.",
)
MEMORY_LIMIT = Setting(
    id="memory_limit",
    label="Memory limit (MB)",
    type="enum",
    default="8192",
    choices=("1024", "2048", "4096", "8192", "16384", "0"),
    scopes=ALL_SCOPES,
    description="Data memory each sandbox or shell process may use (RLIMIT_DATA); 0: no limit. "
    "An open session's next block runs in a new sandbox process.",
)
PROCESS_LIMIT = Setting(
    id="process_limit",
    label="Process limit",
    type="enum",
    default="4096",
    choices=("256", "1024", "4096", "0"),
    scopes=ALL_SCOPES,
    description="Processes of your user the sandbox and shells may start (RLIMIT_NPROC; "
    "not enforced for root); 0: no limit. An open session's next block runs in a new "
    "sandbox process.",
)
JAIL_HOME_WRITABLE = Setting(
    id="jail_home_writable",
    label="Jail: home's dot files writable",
    default=False,
    scopes=(SettingScope.GLOBAL, SettingScope.SESSION),  # never a project's to decide
    description=(
        "When the workspace is your home folder (or holds it), let jailed blocks and shell "
        "commands change home's dot entries and ~/bin (.bashrc, .ssh, .config…). Off: they "
        "stay read-only. An open session's next block runs in a new sandbox process."
    ),
)
JAIL_READ_PATHS = Setting(
    id="jail_read_paths",
    label="Jail: folders shown read-only",
    type="string",
    default="",
    scopes=(SettingScope.GLOBAL, SettingScope.SESSION),  # never a project's to decide
    description=(
        "Folders outside the workspace that jailed blocks and shell commands may read and run "
        "from, separated by commas: your toolchains under home (~/.pyenv, ~/.nvm, ~/.rustup, "
        "~/.cargo/bin). Not home itself, Vis's folders, /run, /proc, /tmp. A unix socket in "
        "one can be connected to. An open session's next block runs in a new sandbox process."
    ),
)
DRAFT_MODEL_APPROVES = Setting(
    id="draft_model_approves",
    label="Model approves its drafts",
    default=False,
    scopes=(SettingScope.GLOBAL, SettingScope.SESSION),  # never a project's to decide
    description=(
        "Let the model's draft_approve() merge a draft without asking you first. Off: "
        "a form shows the files and asks."
    ),
)
NETWORK_ALLOWED_HOSTS = Setting(
    id="network_allowed_hosts",
    label="Jail: allowed hosts",
    type="string",
    default="",
    scopes=(SettingScope.GLOBAL, SettingScope.SESSION),  # never a project's to decide
    description=(
        "Hosts the jailed sandbox and its programs may reach through Vis's network proxy, "
        "without an extension's network filter: example.com, *.example.com, "
        "127.0.0.1:8000 (no port: 80 and 443), separated by commas. Empty: none."
    ),
)
SUBAGENT_DEPTH = Setting(
    id="subagent_depth",
    label="Child sessions: depth",
    type="enum",
    default="1",
    choices=("0", "1", "2", "3"),
    scopes=ALL_SCOPES,
    description=(
        "How deep run_session() and consult() may go: 1 lets a session start child sessions, "
        "2 lets those start their own; 0 turns them off."
    ),
)
SUBAGENT_CONCURRENCY = Setting(
    id="subagent_concurrency",
    label="Child sessions at once",
    type="enum",
    default="4",
    choices=("1", "2", "4", "8"),
    scopes=ALL_SCOPES,
    description="How many child sessions (run_session, consult) one session may run at once.",
)
SUBAGENT_MODELS = Setting(
    id="subagent_models",
    label="Child sessions: other models",
    type="string",
    default="",
    scopes=(SettingScope.GLOBAL, SettingScope.SESSION),  # never a project's to decide
    description=(
        "Other providers' models a child session (run_session) may use: provider/model or "
        "provider/*, separated by commas. Empty: only the session's own provider, which sees "
        "its workspace already."
    ),
)

CORE_SETTINGS: tuple[Setting[Any], ...] = (
    MODEL,
    JAIL,
    INTROSPECTION,
    SESSIONS_SCOPE,
    MAX_ITERATIONS,
    SUMMARIZE_STEPS,
    THEME,
    EXTENSION_LOAD_TIMEOUT,
    BLOCK_TIME_LIMIT,
    MEMORY_LIMIT,
    PROCESS_LIMIT,
    JAIL_HOME_WRITABLE,
    JAIL_READ_PATHS,
    DRAFT_MODEL_APPROVES,
    NETWORK_ALLOWED_HOSTS,
    SUBAGENT_DEPTH,
    SUBAGENT_CONCURRENCY,
    SUBAGENT_MODELS,
)
# The settings that bound what a block may do: a value of one that Vis cannot read, from any
# source, stops the turn (fail closed) instead of falling back to a lower level or the default.
GUARDED = (JAIL.id, MAX_ITERATIONS.id, BLOCK_TIME_LIMIT.id, MEMORY_LIMIT.id, PROCESS_LIMIT.id)
# Vis's own settings' ids: an extension that declares one of them does not load.
CORE_SETTING_IDS = tuple(setting.id for setting in CORE_SETTINGS)


def check_value(setting_id: str, value: Any) -> None:
    """Refuse, naming the setting, a value of Vis's own settings that its type admits but
    that cannot be used (``model`` must read ``provider/model``): it is never saved."""
    if setting_id == NETWORK_ALLOWED_HOSTS.id and value is not None:
        from vis_core.model.network import parse_allowed_hosts

        try:
            parse_allowed_hosts(str(value))
        except ValueError as exc:
            raise ValueError(f"setting 'network_allowed_hosts': {exc}") from None
        return
    if setting_id == JAIL_READ_PATHS.id and value is not None:
        from vis_core.paths import vis_folders
        from vis_core.system.jail_paths import read_paths

        left_out = read_paths(str(value), vis_folders()).left_out
        if left_out:
            raise ValueError(f"setting 'jail_read_paths': {'; '.join(left_out)}")
        return
    if setting_id != MODEL.id or value is None:
        return
    text = str(value).strip()
    if not text or text == "scripted":
        return
    provider, sep, model = text.partition("/")
    if not sep or not provider or not model or any(c.isspace() for c in text):
        raise ValueError(
            f"setting 'model' takes provider/model without spaces, such as "
            f"anthropic/claude-sonnet-4-6, got {text!r}"
        )


def default_value(setting: Setting) -> Any:
    """What ``setting`` takes when nothing sets it: its declared default, except ``jail``,
    which is on wherever bubblewrap works here (checked once per process)."""
    if setting.id == JAIL.id:
        from vis_core.system.jail_check import jail_works

        return jail_works()
    return setting.default


def extension_load_timeout(config: dict[str, Any]) -> float:
    """The ``extension_load_timeout`` of ``config.toml`` in seconds (the default when unset
    or not one of its choices)."""
    value = str(config.get(EXTENSION_LOAD_TIMEOUT.id, EXTENSION_LOAD_TIMEOUT.default))
    return float(
        value if value in EXTENSION_LOAD_TIMEOUT.choices else EXTENSION_LOAD_TIMEOUT.default
    )
