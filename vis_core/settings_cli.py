"""``vis settings list|get|set``: the settings tree for scripts (secrets from stdin only)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from vis_core.extension.settings_decl import SettingScope
from vis_core.model.channel import Channel
from vis_core.model.exit_status import EXIT_OK, EXIT_USAGE

if TYPE_CHECKING:
    from vis_core.settings.service import SettingsService


def add_settings_parser(commands: Any) -> None:
    """Add ``vis settings`` and its subcommands to the ``vis`` subparsers."""
    settings = commands.add_parser("settings", help="list, read or save settings (for scripts)")
    verbs = settings.add_subparsers(dest="settings_command", required=True)
    listing = verbs.add_parser("list", help="every setting with its value and deciding scope")
    listing.add_argument("--session", help="resolve for this session id")
    listing.add_argument("--json", action="store_true", help="print JSON lines")
    get = verbs.add_parser("get", help="print one setting's effective value")
    get.add_argument("id")
    get.add_argument("--session", help="resolve for this session id")
    put = verbs.add_parser("set", help="save a value (a secret is read from stdin)")
    put.add_argument("id")
    put.add_argument("value", nargs="?", help="the value; omit it for a secret")
    put.add_argument(
        "--scope", default="global", choices=[s.value for s in SettingScope], help="where to save"
    )
    put.add_argument("--session", help="the session for session or group scope")
    put.add_argument("--group", help="the group for group scope")
    put.add_argument("--reset", action="store_true", help="remove the value saved at --scope")


def _shown(
    settings: SettingsService, setting_id: str, session: str | None
) -> tuple[str, str, tuple[str, ...]]:
    """The value as text, the level that decided it, and each saved value that was ignored
    and why (as the Settings screen says them)."""
    from vis_core.extension_host.environment import value_text
    from vis_core.settings.rows import NOT_SET, SAVED

    resolution = settings.resolve(setting_id, session)
    if resolution.setting.is_secret:
        shown = SAVED if settings.secret_saved(setting_id) else NOT_SET
    else:
        shown = value_text(resolution.value)
    return shown, resolution.source, resolution.ignored


def _list(settings: SettingsService, args: argparse.Namespace, out: TextIO) -> int:
    from vis_core.settings.tree import build_tree

    tree = build_tree(settings.extensions)
    for node in tree.nodes():
        sid = node.setting.id
        value, source, ignored = _shown(settings, sid, args.session)
        if args.json:
            row = {
                "id": sid,
                "owner": node.owner.name,
                "value": value,
                "source": str(source),
                "ignored": list(ignored),
            }
            out.write(json.dumps(row) + "\n")
        else:
            indent = "  " * node.depth
            out.write(f"{indent}{sid} = {value}  ({source}; {node.owner.name})\n")
            out.writelines(f"{indent}  # {why}\n" for why in ignored)
    for group in tree.extensions:
        if group.error and args.json:  # a line JSON reads, as every line of --json is
            out.write(json.dumps({"extension": group.name, "error": group.error}) + "\n")
        elif group.error:
            out.write(f"# extension {group.name} did not load: {group.error}\n")
    for note in settings.unknown_notes():  # keys of the files no row shows
        out.write(json.dumps({"ignored": note}) + "\n" if args.json else f"# {note}\n")
    return EXIT_OK


def _get(settings: SettingsService, args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    value, _, ignored = _shown(settings, args.id, args.session)
    out.write(value + "\n")
    err.writelines(f"vis settings: warning: {why}\n" for why in ignored)
    return EXIT_OK


async def _set(
    settings: SettingsService,
    args: argparse.Namespace,
    streams: tuple[TextIO, TextIO],
    check_model: Callable[[str], None],
) -> int:
    """``check_model``: raises ValueError when a ``model`` value names no known provider."""
    stdin, err = streams
    owner = settings.owner(args.id)
    setting = owner.setting
    problem = _scope_problem(settings, args)
    if problem is not None:
        err.write(f"vis settings: {problem}\n")
        return EXIT_USAGE
    args.session = _session_id(settings, args.session)  # checked as get and list check it
    if args.reset:
        result = await settings.reset(
            args.id, args.scope, session_id=args.session, group=args.group
        )
    else:
        if setting.is_secret:
            if args.value is not None:
                err.write(
                    f"vis settings: {args.id!r} is a secret; pass it on stdin, not as an "
                    "argument (other programs can read a command line)\n"
                )
                return EXIT_USAGE
            import asyncio

            text = (await asyncio.to_thread(stdin.readline)).rstrip("\r\n")
            from vis_core.system.redaction import short_secret_problem

            problem = short_secret_problem(f"the secret {args.id!r}", text.strip())
            if problem is not None:
                err.write(f"vis settings: {problem}; save a longer one (nothing was saved)\n")
                return EXIT_USAGE
        elif args.value is None:
            err.write(f"vis settings: give a value for {args.id!r}\n")
            return EXIT_USAGE
        else:
            text = args.value
        from vis_core.settings.values import parse_text

        value = parse_text(setting, text)
        if args.id == "model":
            check_model(value)
        result = await settings.set(
            args.id, value, args.scope, session_id=args.session, group=args.group
        )
    if result.hook_error:
        err.write(f"vis settings: warning: {result.hook_error}\n")
    return EXIT_OK


def _session_id(settings: SettingsService, given: str | None) -> str | None:
    """The full id of the session ``--session`` names (an id or a prefix, as ``vis run
    --resume`` takes it); ``ValueError`` when there is no such session."""
    if given is None or settings.store is None:
        return given
    from vis_core.store import StoreError

    try:
        row = settings.store.get_session(given)
    except StoreError as exc:  # an ambiguous prefix, an unreadable database
        raise ValueError(str(exc)) from None
    if row is None:
        raise ValueError(f"there is no session {given!r}; `vis sessions` lists them")
    return row.id


def _scope_problem(settings: SettingsService, args: argparse.Namespace) -> str | None:
    """What ``--scope group`` or ``--scope session`` lacks on this command line, said with the
    option that gives it (the settings' own words point to the app's /group); an option the
    scope would ignore is refused."""
    if args.group is not None and args.scope != SettingScope.GROUP.value:
        return f"setting {args.id!r}: --group is for --scope group, not --scope {args.scope}"
    if args.session is not None and args.scope not in (
        SettingScope.SESSION.value,
        SettingScope.GROUP.value,
    ):
        return (
            f"setting {args.id!r}: --session is for --scope session or group; a "
            f"{args.scope} value is every session's"
        )
    if args.scope == SettingScope.SESSION.value and args.session is None:
        return (
            f"setting {args.id!r}: session scope needs --session ID (`vis sessions` lists "
            "the sessions)"
        )
    if args.scope != SettingScope.GROUP.value or args.group is not None:
        return None
    if args.session is None:
        return (
            f"setting {args.id!r}: group scope needs --group NAME, or --session ID of a "
            "session in a group"
        )
    if settings.session_group(_session_id(settings, args.session)) is None:
        return f"setting {args.id!r}: session {args.session} is in no group; give --group NAME"
    return None


def _check_provider(declared: Any, config_file: Path, value: str) -> None:
    """A ``model`` value must name a provider Vis can start: one it ships or one in the
    ``[providers]`` of config.toml (``ValueError`` naming it otherwise; nothing is saved)."""
    from vis_core.providers.factory import KINDS
    from vis_core.settings.core import check_value

    check_value("model", value)
    text = value.strip()
    if not text or text == "scripted":
        return
    provider = text.partition("/")[0]
    known = set(KINDS) | (set(declared) if isinstance(declared, dict) else set())
    if provider not in known:
        raise ValueError(
            f"setting 'model': unknown provider {provider!r} in {text!r}; use "
            f"{', '.join(sorted(known))}, or add [providers.{provider}] to "
            f"{config_file} first"
        )


async def _run(args: argparse.Namespace, workspace: Path, streams: tuple[TextIO, ...]) -> int:
    from vis_core.host import Host, HostOptions

    stdin, out, err = streams
    host = await Host.open(HostOptions(workspace=workspace, channel=Channel.CLI))
    try:
        if args.settings_command != "set":  # set says first what its scope lacks
            args.session = _session_id(host.settings, args.session)
        if args.settings_command == "list":
            return _list(host.settings, args, out)
        if args.settings_command == "get":
            return _get(host.settings, args, out, err)
        declared = host.models.config.data.get("providers")  # [providers.NAME] of config.toml
        check = partial(_check_provider, declared, host.paths.config_file)
        return await _set(host.settings, args, (stdin, err), check)
    except (KeyError, ValueError) as exc:
        message = exc.args[0] if isinstance(exc, KeyError) and exc.args else str(exc)
        err.write(f"vis settings: {message}\n")
        return EXIT_USAGE  # nothing was saved
    finally:
        await host.close()


def run_settings(args: argparse.Namespace, workspace: Path) -> int:
    """Run one ``vis settings`` subcommand; returns the exit status."""
    import asyncio  # here, not at import: `vis --version` builds this parser

    return asyncio.run(_run(args, workspace, (sys.stdin, sys.stdout, sys.stderr)))
