"""``vis doctor`` and ``vis sessions``: what is installed, configured and stored."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from vis_core.model.channel import Channel
from vis_core.model.exit_status import EXIT_FAILED, EXIT_OK
from vis_core.model.sessions import SessionRow, snippet_parts
from vis_core.system.programs import host_program
from vis_core.terminal import terminal_text

JAIL_OFF_NOTES = (
    "with the jail off, the model's code runs as you: it can read and change every file you "
    "can (other projects, ~/.ssh), reach the network and start programs; only Vis's own "
    "environment (API keys) and memory are hidden from it.",
)
JAIL_OFF_ROOT = (
    "Vis runs as root: with the jail off, the model's code can read even Vis's environment "
    "and memory (root may read any process); turn the jail on or run Vis as a normal user.",
)


def run_doctor(workspace: Path) -> int:
    """Print the places on disk, the config, the model, tools found and every extension.

    It opens the same Host the app opens, so the model and extensions shown are the ones a
    session in this workspace would get (settings scopes and project trust included).
    """
    import asyncio

    from vis_core import __version__
    from vis_core.paths import VisPaths
    from vis_core.store import StoreError

    paths = VisPaths.from_env()
    print(f"vis {__version__} on Python {sys.version.split()[0]}")
    print(f"config      {paths.config_file}" + ("" if paths.config_file.exists() else " (none)"))
    extensions = paths.extensions_dir
    print(f"extensions  {extensions}" + ("" if extensions.is_dir() else " (none yet)"))
    print(f"database    {paths.db_file}")
    print(f"logs        {paths.log_dir}")
    print(f"workspace   {workspace}")
    for tool in ("rg", "git", "bwrap"):
        print(f"{tool:<11} {host_program(tool, (Path(workspace), Path.cwd())) or 'not found'}")
    try:
        return asyncio.run(_check_host(workspace))
    except StoreError as exc:
        print(f"database error: {exc}")
        return EXIT_FAILED


async def _check_host(workspace: Path) -> int:
    """Open the Host a session here would use and print its model, notes and extensions."""
    from vis_core.extension_host.discovery import PROJECT_EXTENSIONS
    from vis_core.extension_host.doctor import describe
    from vis_core.host import Host
    from vis_core.host_options import HostOptions

    host = await Host.open(HostOptions(workspace=workspace, channel=Channel.CLI))
    problems = 0
    try:
        trust = "trusted" if host.space.trusted else "not trusted"
        print(f"project     {host.space.project_root} ({trust})")
        if (own := host.space.project_root / PROJECT_EXTENSIONS).is_dir():
            print(f"            its extensions: {own}")
        print(f"model       {host.models.label}")
        if host.models.config.problem:
            problems += 1
            print(f"config error: {host.models.config.problem}")
        jail, refusal = host.space.jail_policy()
        if refusal is not None:
            problems += 1
            print(f"jail        unknown: {refusal}")
        else:
            on, mode = host.space.jail_mode()
            print(f"jail        {'on' if jail else 'off'} ({terminal_text(mode)})")
            problems += on and mode.startswith("the jail is on but cannot run")
            if not jail:
                for line in JAIL_OFF_NOTES + (JAIL_OFF_ROOT if os.geteuid() == 0 else ()):
                    print(f"note: {line}")
        limits = host.space.child_limits()
        block = host.settings.get("block_time_limit", "1800")
        print(
            f"limits      block {block} s, memory {limits.memory_mb} MB, "
            f"processes {limits.processes} (0: no limit)"
        )
        for note in limits.notes():
            print(f"note: {note}")
        model = host.models.session_model()  # builds the provider: a missing key shows here
        if model.problem:
            problems += host.models.choice is not None  # a chosen model that cannot be used
            print(model.problem)
        aclose = getattr(model.provider, "aclose", None)
        if aclose is not None:
            await aclose()
        for note in host.startup_notes():
            print(f"note: {note}")
        print("extensions")
        for row in describe(host.catalog.loaded):
            print(f"  {row}")
            problems += row.failed
    finally:
        await host.close()
    return EXIT_FAILED if problems else EXIT_OK


def _when(row: SessionRow) -> str:
    """A listed session's id, how long ago it was last used and its turns, in columns."""
    from vis_core.tools.display import ago, plural

    return f"{row.id[:8]}  {ago(row.modified):>8}  {plural(row.turn_count, 'turn'):>9}"


def list_sessions(workspace: Path, query: str | None) -> int:
    from vis_core.paths import VisPaths
    from vis_core.store import Store

    store = Store(VisPaths.from_env().ensure().db_file)
    try:
        if query:
            hits = store.search_sessions(query)
            for hit in hits:
                row = hit.session
                parent = f"  (child of {row.parent_id[:8]})" if row.parent_id else ""
                snippet = "".join(text for text, _ in snippet_parts(hit.snippet))  # no ** marks
                print(f"{_when(row)}  {row.title or '(untitled)'}{parent}  {snippet}")
            if not hits:  # on stderr: a script reading the list gets an empty one
                print(f"no session mentions {query!r}", file=sys.stderr)
        else:
            from vis_core.store.session_data import nested

            rows = store.list_sessions(workspace=workspace)
            for row, depth in nested(rows):
                mark = "  " * (depth - 1) + "↳ " if depth else ""
                parent = f"  (child of {row.parent_id[:8]})" if row.parent_id and not depth else ""
                print(f"{_when(row)}  {mark}{row.title or '(untitled)'}{parent}")
            if not rows:
                print(f"no sessions in {workspace} yet: `vis` starts one", file=sys.stderr)
    finally:
        store.close()
    return EXIT_OK
