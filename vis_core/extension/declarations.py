"""Extension declarations (Extension, SlashCommand, OpHook) and register_extension."""

from __future__ import annotations

import contextvars
import keyword
import os
import re
import string
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path
from typing import Any

from vis_core.extension.errors import member
from vis_core.extension.settings_decl import (
    Setting,
    _sequence,
)
from vis_core.model.command import CommandAction
from vis_core.model.lines import is_one_line

EXTENSION_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
COMMAND_NAME = re.compile(r"^[a-z][a-z0-9_-]{0,63}$")
# The keys of the env dict that prompt, activation and ctx callbacks receive.
ENV_KEYS = ("cwd", "workspace_root", "project_root", "session_id", "channel")


def callback_env(
    *,
    workspace_root: Path | str,
    project_root: Path | str,
    session_id: str | None,
    channel: str,
) -> dict[str, Any]:
    """The env dict of prompt, activation and ctx callbacks; ``cwd`` is the session root."""
    root = str(workspace_root)
    return {
        "cwd": root,
        "workspace_root": root,
        "project_root": str(project_root),
        "session_id": session_id,
        "channel": str(channel),  # plain text to extensions
    }


def _callable_or_none(value: object, what: str) -> None:
    if value is not None and not callable(value):
        raise ValueError(f"{what} must be a callable or None, got {type(value).__name__}")


def _optional_text(value: object, what: str) -> None:
    if value is not None and (not isinstance(value, str) or not value.strip()):
        raise ValueError(f"{what} must be a nonblank string or None")


# -- slash commands -----------------------------------------------------------------------


@dataclass(frozen=True)
class CommandResult:
    """What a slash command answers: ``ok`` or ``err`` with a title, Markdown body and data;
    Vis's own commands also name the ``action`` a front end takes next, and whether the
    result is ``noted`` with the session (kept for a resume)."""

    ok: bool
    title: str
    body: str | None = None
    data: Any = None
    action: CommandAction | None = None
    noted: bool = True

    @property
    def markdown(self) -> str:
        """The result as one Markdown text: the title, bold above the body when there is one."""
        return self.title if not self.body else f"**{self.title}**\n\n{self.body}"

    @property
    def text(self) -> str:
        """The result for a terminal that shows no Markdown (``vis run``): the title, above
        the body when there is one."""
        return self.title if not self.body else f"{self.title}\n\n{self.body}"

    def __post_init__(self) -> None:
        if not isinstance(self.title, str) or not self.title.strip():
            raise ValueError("a command result needs a nonblank title")
        if self.body is not None and not isinstance(self.body, str):
            raise ValueError("a command result body must be Markdown text or None")

    @classmethod
    def of(cls, value: object) -> CommandResult:
        """A ``run`` return value as a result: a plain string counts as an ok title."""
        if isinstance(value, CommandResult):
            return value
        if isinstance(value, str):
            return cls(True, value)
        raise TypeError(
            f"a slash command returned {type(value).__name__}; return vis.ok(...), vis.err(...) "
            "or a string"
        )


def ok(title: str, body: str | None = None, data: Any = None) -> CommandResult:
    """A successful slash command result."""
    return CommandResult(True, title, body, data)


def err(title: str, body: str | None = None, data: Any = None) -> CommandResult:
    """A failed slash command result."""
    return CommandResult(False, title, body, data)


@dataclass(frozen=True)
class SlashCommand:
    """A user command ``/name``; ``run(ctx)`` returns ``vis.ok``, ``vis.err`` or a string."""

    name: str
    run: Callable[[dict[str, Any]], Any]
    doc: str | None = None
    usage: str | None = None
    saveable: bool = False

    def __post_init__(self) -> None:
        name = self.name
        if isinstance(name, str) and name.startswith("/"):
            raise ValueError(f"slash command {name!r}: give the name without the leading '/'")
        if not isinstance(name, str) or not COMMAND_NAME.fullmatch(name):
            raise ValueError(
                f"slash command name {name!r} must be lower-case letters, digits, '-' or '_', "
                "starting with a letter"
            )
        if not callable(self.run):
            raise ValueError(f"slash command {name!r}: run must be a callable run(ctx)")
        _optional_text(self.doc, f"slash command {name!r}: doc")
        _optional_text(self.usage, f"slash command {name!r}: usage")
        if self.usage is not None and not is_one_line(self.usage):
            raise ValueError(f"slash command {name!r}: usage must be one line")
        if not isinstance(self.saveable, bool):
            raise ValueError(f"slash command {name!r}: saveable must be True or False")


# -- op hooks -----------------------------------------------------------------------------


class OpHookPhase(StrEnum):
    BEFORE = "before"
    AFTER = "after"


class Op(StrEnum):
    """The operations Vis runs op hooks for."""

    PATCH = "patch"
    SHELL = "shell"
    PYTHON_EXECUTION = "python_execution"
    FS_ACCESS = "fs_access"
    MCP = "mcp"  # every MCP tool and resource call; args carry the server's annotations
    # the draft lifecycle (vis_core/drafts) and each commit Vis makes
    DRAFT_CREATE = "draft/create"
    DRAFT_SYNC = "draft/sync"
    DRAFT_APPROVE = "draft/approve"
    DRAFT_DISCARD = "draft/discard"
    GIT_COMMIT = "git/commit"


KNOWN_OPS = ", ".join(repr(op.value) for op in Op)


@dataclass(frozen=True)
class OpHook:
    """A guard (``before``) or observer (``after``) of operations such as ``patch``."""

    ops: Sequence[str]
    fn: Callable[[dict[str, Any]], Any]
    phase: OpHookPhase | str = OpHookPhase.BEFORE

    def __post_init__(self) -> None:
        ops = (self.ops,) if isinstance(self.ops, str) else _sequence(self.ops, "OpHook ops")
        if not ops:
            raise ValueError("OpHook needs at least one operation name, such as 'patch'")
        for op in ops:
            if not isinstance(op, str) or not op.strip():
                raise ValueError("OpHook ops must be nonblank operation names")
            if op not in Op.__members__.values():
                raise ValueError(
                    f"OpHook op {op!r} is not an operation Vis knows, so the hook would never "
                    f"run; use one of {KNOWN_OPS}"
                )
        if not callable(self.fn):
            raise ValueError(f"OpHook for {list(ops)}: fn must be a callable fn(call)")
        phase = member(OpHookPhase, self.phase, "OpHook phase")
        if phase is OpHookPhase.AFTER and Op.FS_ACCESS in ops:
            raise ValueError(
                "OpHook 'fs_access' checks a path before a host file tool uses it: it is not a "
                "tool and takes no phase, so an 'after' hook would never run; leave out phase"
            )
        object.__setattr__(self, "ops", ops)
        object.__setattr__(self, "phase", phase)


# -- the extension --------------------------------------------------------------------------


def _items(value: object, what: str, kind: str, hint: str = "") -> tuple[Any, ...]:
    """``value`` as a tuple of ``vis.<kind>`` declarations. The class is looked up only when
    there are items: the module of a declaration class an extension does not use is not
    imported."""
    items = _sequence(value, what)
    if items:
        import vis_core.extension as vis

        cls = getattr(vis, kind)
        for index, item in enumerate(items):
            if not isinstance(item, cls):
                raise ValueError(
                    f"{what}[{index}] is {type(item).__name__}; use {hint or 'vis.' + kind} "
                    "declarations"
                )
    return items


@dataclass(frozen=True, kw_only=True)
class Extension:
    """One extension's declaration; validated and copied on construction, without IO.

    ``ctx_state_key`` declares a state-only ``ctx``: its answer comes from that one key of the
    extension's ``vis.state`` (``{session_id}`` in it stands for the session's id, e.g.
    ``"session:{session_id}"``) and from nothing else. Vis runs the ``ctx`` once when the
    extension loads, against an empty ``vis.state``; while a session finds nothing under its
    key, Vis gives that answer itself and starts no extension worker for it (a session whose
    turns never use the extension starts none).
    """

    name: str
    description: str
    alias: str | None = None
    symbols: Sequence[Any] = ()
    prompt: str | Callable[[dict[str, Any]], str | None] | None = field(default=None, compare=False)
    activation: Callable[[dict[str, Any]], bool] | None = field(default=None, compare=False)
    slash_commands: Sequence[SlashCommand] = ()
    op_hooks: Sequence[OpHook] = ()
    network_filters: Sequence[Any] = ()
    providers: Sequence[Any] = ()
    ctx: Callable[[dict[str, Any]], dict[str, Any]] | None = field(default=None, compare=False)
    ctx_state_key: str | None = None
    env: Sequence[str] = ()
    grants: Sequence[Any] = ()
    kind: str | None = None
    version: str | None = None
    settings: Sequence[Setting[Any]] = ()
    mcp_servers: Sequence[Any] = ()  # vis.mcp_server(name, config) declarations

    def __post_init__(self) -> None:
        name = self.name
        if not isinstance(name, str) or not EXTENSION_NAME.fullmatch(name):
            raise ValueError(
                f"extension name {name!r} must be 1-64 letters, digits, '.', '-' or '_', "
                "starting with a letter or digit"
            )
        where = f"extension {name!r}"
        if not isinstance(self.description, str) or not self.description.strip():
            raise ValueError(f"{where}: description must be a nonblank one-line summary")
        if not is_one_line(self.description.strip()):
            raise ValueError(f"{where}: description must be one line")
        symbols = _items(self.symbols, f"{where}: symbols", "Symbol")
        if self.alias is not None:
            alias = self.alias
            if not isinstance(alias, str) or not alias.isidentifier() or keyword.iskeyword(alias):
                raise ValueError(
                    f"{where}: alias {alias!r} must be a Python identifier such as 'git'; "
                    "the model calls your tools as alias.name"
                )
            if alias.startswith("_"):
                raise ValueError(f"{where}: alias {alias!r} must not start with '_'")
        elif symbols:
            raise ValueError(
                f"{where}: an extension with symbols needs an alias, such as "
                f"alias={name.replace('-', '_')!r}"
            )
        if (
            self.prompt is not None
            and not isinstance(self.prompt, str)
            and not callable(self.prompt)
        ):
            raise ValueError(f"{where}: prompt must be text, a callable prompt(env) or None")
        _callable_or_none(self.activation, f"{where}: activation")
        _callable_or_none(self.ctx, f"{where}: ctx")
        _state_key(self.ctx_state_key, self.ctx, where)
        commands = _items(self.slash_commands, f"{where}: slash_commands", "SlashCommand")
        _once(commands, "name", lambda name: f"{where}: slash command /{name}")
        hooks = _items(self.op_hooks, f"{where}: op_hooks", "OpHook")
        filters = _items(self.network_filters, f"{where}: network_filters", "NetworkFilter")
        _once(filters, "name", lambda name: f"{where}: network filter {name!r}")
        providers = _items(self.providers, f"{where}: providers", "Provider")
        _once(providers, "name", lambda name: f"{where}: provider {name!r}")
        grants = _items(self.grants, f"{where}: grants", "Grant")
        env = _sequence(self.env, f"{where}: env")
        for var in env:
            if not isinstance(var, str) or not ENV_NAME.fullmatch(var):
                raise ValueError(f"{where}: env holds {var!r}; give environment variable names")
        _optional_text(self.kind, f"{where}: kind")
        _optional_text(self.version, f"{where}: version")
        settings = _items(self.settings, f"{where}: settings", "Setting")
        _once(settings, "id", lambda name: f"{where}: setting id {name!r}")
        mcp_servers = _items(
            self.mcp_servers, f"{where}: mcp_servers", "McpServer", "vis.mcp_server(name, config)"
        )
        _once(mcp_servers, "name", lambda name: f"{where}: MCP server {name!r}")
        for attr, items in (
            ("symbols", symbols),
            ("slash_commands", commands),
            ("op_hooks", hooks),
            ("network_filters", filters),
            ("providers", providers),
            ("grants", grants),
            ("env", env),
            ("settings", settings),
            ("mcp_servers", mcp_servers),
        ):
            object.__setattr__(self, attr, items)


def _state_key(key: object, ctx: object, where: str) -> None:
    if key is None:
        return
    if ctx is None:
        raise ValueError(f"{where}: ctx_state_key names the state a ctx reads; declare ctx too")
    if not isinstance(key, str) or not key.strip():
        raise ValueError(f"{where}: ctx_state_key must be a nonblank string such as 'list'")
    try:
        fields = {name for _, name, _, _ in string.Formatter().parse(key) if name is not None}
    except ValueError as exc:
        raise ValueError(f"{where}: ctx_state_key {key!r} is not a key template: {exc}") from None
    if fields - {"session_id"}:
        raise ValueError(
            f"{where}: ctx_state_key {key!r} may hold only {{session_id}}, "
            "as in 'session:{session_id}'"
        )


def state_key_of(extension: Extension, session_id: str) -> str | None:
    """The ``vis.state`` key ``extension``'s state-only ``ctx`` reads in session ``session_id``."""
    key = extension.ctx_state_key
    return None if key is None else key.format(session_id=session_id)


def _once(items: tuple[Any, ...], key: str, said: Callable[[str], str]) -> tuple[Any, ...]:
    """``items``, refused when two share their ``key`` (``said`` names it in the error)."""
    seen: set[str] = set()
    for item in items:
        name = getattr(item, key)
        if name in seen:
            raise ValueError(f"{said(name)} is declared twice")
        seen.add(name)
    return items


# -- registration ---------------------------------------------------------------------------


@dataclass
class Registration:
    """The entry file being loaded, and what it registered."""

    path: Path
    environment: Mapping[str, str] = field(default_factory=dict)
    declaration: Extension | None = None
    mcp_servers: list[Any] = field(default_factory=list)  # vis.mcp_server calls meanwhile

    def extension(self) -> Extension | None:
        """The registered extension, with the servers ``vis.mcp_server`` added while the file
        loaded that it does not list itself (``ValueError``: two share a name)."""
        declaration = self.declaration
        if declaration is None:
            return None
        listed = declaration.mcp_servers
        added = [s for s in self.mcp_servers if not any(s is d for d in listed)]
        if not added:
            return declaration
        return replace(declaration, mcp_servers=(*listed, *added))


_loading: contextvars.ContextVar[Registration | None] = contextvars.ContextVar(
    "vis_extension_registration", default=None
)
_standalone: dict[str, Extension] = {}


class ExtensionEnvironment(dict[str, str]):
    """Resolved values, and ``project_names``: what the project itself defines (these reach
    an extension's ``os.environ`` without an ``env`` declaration)."""

    project_names: frozenset[str] = frozenset()


def copy_environment(environment: Mapping[str, str] | None) -> ExtensionEnvironment:
    """A copy of ``environment`` that keeps its ``project_names`` (a ``live`` mapping, such as
    the registration worker's, which asks the host name by name, is used as it is)."""
    if environment is not None and getattr(environment, "live", False):
        return environment  # type: ignore[return-value]
    copy = ExtensionEnvironment(environment or {})
    copy.project_names = frozenset(getattr(environment, "project_names", frozenset()))
    return copy


def names_to_pass(declared: Sequence[str], environment: Mapping[str, str]) -> list[str]:
    """The names registration puts into ``os.environ``: declared ones, then project-defined."""
    project = getattr(environment, "project_names", frozenset())
    return [*declared, *sorted(name for name in project if name not in declared)]


@contextmanager
def registering(path: Path, environment: Mapping[str, str] | None = None) -> Iterator[Registration]:
    """Collect the ``register_extension`` call of the entry file at ``path`` (loader use)."""
    registration = Registration(Path(path), copy_environment(environment))
    token = _loading.set(registration)
    try:
        yield registration
    finally:
        _loading.reset(token)


def loading_registration() -> Registration | None:
    """The entry file being loaded now (None: Vis loads none in this context)."""
    return _loading.get()


def standalone_registration(module: str) -> Extension | None:
    """What ``module`` registered when imported outside Vis (for tests of an entry file)."""
    return _standalone.get(module)


def register_extension(extension: Extension) -> None:
    """Register this entry file's extension; call it exactly once per entry file."""
    from vis_core.extension.place import require_trusted

    require_trusted("vis.register_extension")
    if not isinstance(extension, Extension):
        raise TypeError(
            f"register_extension expects vis.Extension(...), got {type(extension).__name__}"
        )
    registration = _loading.get()
    if registration is None:
        # Imported outside Vis (a test imports the entry file): keep it for inspection.
        module = sys._getframe(1).f_globals.get("__name__", "__main__")
        _standalone[module] = extension
        return
    if registration.declaration is not None:
        raise RuntimeError(
            f"{registration.path} called vis.register_extension() twice (first for "
            f"{registration.declaration.name!r}, then for {extension.name!r}); "
            "call it once per entry file"
        )
    # declared names, and names the project itself defines (these need no declaration)
    for var in names_to_pass(extension.env, registration.environment):
        value = registration.environment.get(var)
        if value is not None:
            os.environ[var] = value
    registration.declaration = extension
