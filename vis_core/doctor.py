"""``vis doctor`` and ``vis sessions``: what is installed, configured and stored."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path


def run_doctor(workspace: Path) -> int:
    """Print the places on disk, the config, the model, tools found and every extension."""
    from vis_core import __version__
    from vis_core.config import load_config
    from vis_core.paths import TrustStore, VisPaths, find_project_root
    from vis_core.providers.factory import resolve_model

    paths = VisPaths.from_env()
    config = load_config(paths.config_file)
    project = find_project_root(workspace)
    print(f"vis {__version__} on Python {sys.version.split()[0]}")
    print(f"config      {paths.config_file}" + ("" if paths.config_file.exists() else " (none)"))
    print(f"database    {paths.db_file}")
    print(f"logs        {paths.log_dir}")
    print(f"workspace   {workspace}")
    trusted = TrustStore(paths).is_trusted(project)
    print(f"project     {project} ({'trusted' if trusted else 'not trusted'})")
    problems = 0
    if config.problem:
        problems += 1
        print(f"config error: {config.problem}")
    try:
        choice = resolve_model(None, config.data, os.environ)
    except ValueError as exc:
        choice, problems = None, problems + 1
        print(f"model error: {exc}")
    print(f"model       {choice.provider}/{choice.model}" if choice else "model       not set")
    for tool in ("rg", "git", "bwrap"):
        print(f"{tool:<11} {shutil.which(tool) or 'not found'}")
    from vis_core.extensions import describe, load_extensions

    loaded = load_extensions(
        project_root=project, trusted=trusted, paths=paths, environment=os.environ
    )
    print("extensions")
    for row in describe(loaded):
        print(f"  {row}")
        problems += row.status == "failed"
    return 1 if problems else 0


def list_sessions(workspace: Path, query: str | None) -> int:
    from vis_core.paths import VisPaths
    from vis_core.store import Store

    store = Store(VisPaths.from_env().ensure().db_file)
    try:
        if query:
            for hit in store.search_sessions(query):
                print(f"{hit.session.id[:8]}  {hit.session.title or '(untitled)'}  {hit.snippet}")
        else:
            for row in store.list_sessions(workspace=workspace):
                print(f"{row.id[:8]}  {row.title or '(untitled)'}")
    finally:
        store.close()
    return 0
