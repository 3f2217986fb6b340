"""``mcp.json``: the ``mcpServers`` entries of the user and project files, validated."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from vis_core.mcp.oauth_settings import OAuthSettings, parse_oauth
from vis_core.paths import ControlSnapshot, take_snapshot

DEFAULT_TIMEOUT = 60.0
NAME_PATTERN = re.compile(r"^[A-Za-z0-9_-]+$")
SSE_HINT = (
    "the legacy SSE transport is not supported; servers that document an SSE endpoint often "
    "also provide streamable HTTP, commonly at /mcp instead of /sse"
)


class Transport(StrEnum):
    STDIO = "stdio"
    HTTP = "http"
    SSE = "sse"  # the legacy transport: only for servers an editor passes (mcp.json refuses it)


class Exposure(StrEnum):
    """How a server's tools reach the model."""

    CODEMODE = "codemode"  # callable in python_execution, found with apropos/doc
    DEFERRED = "deferred"  # declared to the model once a search loads it
    DIRECT = "direct"  # declared to the model like a built-in tool
    HIDDEN = "hidden"  # registered but unreachable


EXPOSURE_ALIASES = {"codemode-deferred": Exposure.CODEMODE}


class Source(StrEnum):
    USER = "user"
    PROJECT = "project"
    EXTENSION = "extension"
    CLIENT = "client"  # passed by the editor over ACP: its values are used as given


@dataclass(frozen=True)
class ServerConfig:
    """One valid ``mcpServers`` entry."""

    name: str
    transport: Transport
    source: Source
    origin: str  # the file that defines it, or the extension that registered it
    command: str = ""
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    cwd: str | None = None
    url: str = ""
    headers: tuple[tuple[str, str], ...] = ()
    timeout: float = DEFAULT_TIMEOUT
    enabled: bool = True
    exposure: Exposure = Exposure.CODEMODE
    tool_exposure: tuple[tuple[str, Exposure], ...] = ()
    description: str | None = None
    oauth: OAuthSettings | None = None  # HTTP only: how Vis signs in (None: defaults)

    @property
    def key(self) -> str:
        return server_key(self.name)

    def exposure_of(self, tool: str) -> Exposure:
        """``toolExposure``: an exact name wins, then the first matching ``*`` pattern."""
        for pattern, exposure in self.tool_exposure:
            if pattern == tool:
                return exposure
        for pattern, exposure in self.tool_exposure:
            if "*" in pattern and _glob(pattern).fullmatch(tool):
                return exposure
        return self.exposure


@dataclass(frozen=True)
class ConfigProblem:
    """An entry (or a whole file) that was skipped, and why."""

    origin: str
    server: str | None
    message: str

    def __str__(self) -> str:
        where = f"server {self.server!r} in {self.origin}" if self.server else self.origin
        return f"{where}: {self.message}"


@dataclass(frozen=True)
class McpConfig:
    """The servers a workspace uses (project entries replace user entries) and the problems."""

    servers: tuple[ServerConfig, ...] = ()
    problems: tuple[ConfigProblem, ...] = ()
    overridden: tuple[ServerConfig, ...] = field(default=())

    def get(self, name: str) -> ServerConfig | None:
        key = server_key(name)
        return next((s for s in self.servers if s.key == key), None)


def server_key(name: str) -> str:
    """Names that differ only in ``-`` and ``_`` name the same server."""
    return name.replace("-", "_")


def tool_pattern_matches(pattern: str, tool: str) -> bool:
    """A ``toolExposure`` key: an exact tool name, or a pattern where ``*`` matches anything."""
    return pattern == tool or ("*" in pattern and _glob(pattern).fullmatch(tool) is not None)


def _glob(pattern: str) -> re.Pattern[str]:
    return re.compile(".*".join(re.escape(part) for part in pattern.split("*")))


def parse_exposure(value: Any, what: str) -> Exposure:
    if isinstance(value, str):
        if value in EXPOSURE_ALIASES:
            return EXPOSURE_ALIASES[value]
        try:
            return Exposure(value)
        except ValueError:
            pass
    choices = ", ".join(e.value for e in Exposure)
    raise ValueError(f"{what} must be one of {choices} (or codemode-deferred), not {value!r}")


def _strings(value: Any, what: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"{what} must be a list of strings")
    return tuple(value)


def _string_map(value: Any, what: str) -> tuple[tuple[str, str], ...]:
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise ValueError(f'{what} must be an object of strings, e.g. {{"KEY": "value"}}')
    return tuple(value.items())


SHELL_STRING = (
    "'command' is one executable, not a shell command string: put its arguments in 'args', "
    'e.g. "command": "npx", "args": ["-y", "server"]'
)


def shell_string(command: str) -> bool:
    """Whether ``command`` looks like a command line (``npx -y server``) rather than one
    executable: words apart by white space, and not a path (a path may hold spaces)."""
    return len(command.split()) > 1 and not command.startswith(("/", "~/", "./", "../"))


def parse_entry(name: Any, raw: Any, *, source: Source, origin: str) -> ServerConfig:
    """One ``mcpServers`` entry; ``ValueError`` says what is wrong with it."""
    if not isinstance(name, str) or not NAME_PATTERN.fullmatch(name):
        raise ValueError("server names may contain only letters, digits, '_' and '-'")
    if not isinstance(raw, dict):
        raise ValueError("the entry must be an object with a 'command' or a 'url'")
    kind = raw.get("type")
    if kind is not None:
        if kind == "sse":
            raise ValueError(f"type 'sse' is rejected: {SSE_HINT}")
        if kind not in ("stdio", "http", "streamable-http"):
            raise ValueError(f"type must be stdio, http or streamable-http, not {kind!r}")
    has_command, has_url = "command" in raw, "url" in raw
    if has_command and has_url:
        raise ValueError("give either 'command' (stdio) or 'url' (streamable HTTP), not both")
    if not has_command and not has_url:
        raise ValueError("the entry needs a 'command' (stdio) or a 'url' (streamable HTTP)")
    transport = Transport.STDIO if has_command else Transport.HTTP
    if kind is not None and (kind == "stdio") != (transport is Transport.STDIO):
        field_name = "command" if has_command else "url"
        raise ValueError(f"type {kind!r} does not match its {field_name!r}")
    fields: dict[str, Any] = {}
    if transport is Transport.STDIO:
        command = raw["command"]
        if not isinstance(command, str) or not command.strip():
            raise ValueError("'command' must be one executable, e.g. \"npx\"")
        if shell_string(command):
            raise ValueError(SHELL_STRING)
        fields["command"] = command
        fields["args"] = _strings(raw.get("args", []), "'args'")
        fields["env"] = _string_map(raw.get("env", {}), "'env'")
        cwd = raw.get("cwd")
        if cwd is not None and (not isinstance(cwd, str) or not cwd):
            raise ValueError("'cwd' must be a folder path")
        fields["cwd"] = cwd
        if "oauth" in raw:
            raise ValueError("'oauth' is for HTTP servers (an entry with a 'url')")
    else:
        url = raw["url"]
        if not isinstance(url, str) or not re.match(r"^https?://[^\s/]+", url):
            raise ValueError("'url' must be an http:// or https:// address")
        fields["url"] = url
        fields["headers"] = _string_map(raw.get("headers", {}), "'headers'")
        fields["oauth"] = parse_oauth(raw.get("oauth"))
    timeout = raw.get("timeout", DEFAULT_TIMEOUT)
    if (
        isinstance(timeout, bool)
        or not isinstance(timeout, int | float)
        or not 0 < timeout < math.inf  # json reads NaN and Infinity, which compare oddly
    ):
        raise ValueError("'timeout' must be a positive number of seconds")
    enabled = raw.get("enabled", True)
    if not isinstance(enabled, bool):
        raise ValueError("'enabled' must be true or false")
    exposure = parse_exposure(raw.get("exposure", "codemode"), "'exposure'")
    tool_exposure_raw = raw.get("toolExposure", {})
    if not isinstance(tool_exposure_raw, dict):
        raise ValueError("'toolExposure' must be an object of tool name or pattern → exposure")
    tool_exposure = tuple(
        (str(key), parse_exposure(value, f"toolExposure[{key!r}]"))
        for key, value in tool_exposure_raw.items()
    )
    description = raw.get("description")
    if description is not None and not isinstance(description, str):
        raise ValueError("'description' must be a string")
    return ServerConfig(
        name=name,
        transport=transport,
        source=source,
        origin=origin,
        timeout=float(timeout),
        enabled=enabled,
        exposure=exposure,
        tool_exposure=tool_exposure,
        description=description.strip() if description and description.strip() else None,
        **fields,
    )


def read_json(path: Path, data: bytes | None = None) -> dict[str, Any] | None:
    """The file's object, None when it does not exist; ``ValueError`` when it is not JSON.
    ``data``: its bytes as already read (read from ``path`` without them)."""
    try:
        data = path.read_bytes() if data is None else data
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ValueError(f"cannot read it: {exc}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"it is not UTF-8 text ({exc})") from None
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except RecursionError:
        raise ValueError("it nests too deeply for Vis to read") from None
    except json.JSONDecodeError as exc:
        raise ValueError(
            f"not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})"
        ) from None
    if not isinstance(data, dict):
        raise ValueError("the file must hold a JSON object with an 'mcpServers' object")
    return data


VS_CODE_LAYOUT = (
    "it has a top-level 'servers' object (VS Code's layout) and no 'mcpServers': move the "
    "entries under 'mcpServers' and replace ${input:...} prompts with ${NAME} variables"
)


def parse_servers(
    data: Mapping[str, Any], *, source: Source, origin: str
) -> tuple[list[ServerConfig], list[ConfigProblem]]:
    """The valid entries of one file's ``mcpServers`` and a problem for each invalid one."""
    servers: list[ServerConfig] = []
    problems: list[ConfigProblem] = []
    if "mcpServers" not in data and isinstance(data.get("servers"), dict) and data["servers"]:
        return [], [ConfigProblem(origin, None, VS_CODE_LAYOUT)]
    entries = data.get("mcpServers", {})
    if not isinstance(entries, dict):
        return [], [ConfigProblem(origin, None, "'mcpServers' must be an object of servers")]
    seen: dict[str, str] = {}
    for name, raw in entries.items():
        key = server_key(str(name))
        if key in seen:
            problems.append(
                ConfigProblem(
                    origin,
                    str(name),
                    f"it names the same server as {seen[key]!r} ('-' and '_' count as the same)",
                )
            )
            continue
        try:
            server = parse_entry(name, raw, source=source, origin=origin)
        except ValueError as exc:
            problems.append(ConfigProblem(origin, str(name), str(exc)))
            continue
        seen[key] = str(name)
        servers.append(server)
    return servers, problems


def load_file(
    path: Path, source: Source, snapshot: ControlSnapshot | None = None
) -> tuple[list[ServerConfig], list[ConfigProblem]]:
    """The servers of ``path``; a project file from ``snapshot`` (the control files as read
    once and checked against the trust list), where an absent file has no servers."""
    try:
        if snapshot is not None:
            raw = snapshot.read(path.relative_to(snapshot.root).as_posix())
            data = None if raw is None else read_json(path, raw)
        else:
            data = read_json(path)
    except OSError as exc:
        return [], [ConfigProblem(str(path), None, str(exc))]
    except ValueError as exc:
        return [], [ConfigProblem(str(path), None, str(exc))]
    if data is None:
        return [], []
    return parse_servers(data, source=source, origin=str(path))


def project_file(project_root: Path) -> Path:
    return project_root / ".vis" / "mcp.json"


def load_config(
    user_file: Path,
    project_root: Path | None,
    *,
    trusted: bool,
    registered: Iterable[ServerConfig] = (),
    snapshot: ControlSnapshot | None = None,
) -> McpConfig:
    """User servers, replaced by project servers of the same name (trusted projects only);
    servers registered by extensions come last and lose to a file entry of the same name."""
    servers, problems = load_file(user_file, Source.USER)
    overridden: list[ServerConfig] = []
    if project_root is not None and trusted:
        if snapshot is None or snapshot.root != project_root.resolve():
            snapshot = take_snapshot(project_root, hashed=False)
        project, project_problems = load_file(project_file(snapshot.root), Source.PROJECT, snapshot)
        problems += project_problems
        keys = {s.key for s in project}
        overridden += [s for s in servers if s.key in keys]
        servers = [s for s in servers if s.key not in keys] + project
    keys = {s.key for s in servers}
    for server in registered:
        if server.key in keys:
            overridden.append(server)
        else:
            keys.add(server.key)
            servers.append(server)
    return McpConfig(tuple(servers), tuple(problems), tuple(overridden))
