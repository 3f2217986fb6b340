"""Fixtures for loader tests: build extension trees from the fixture entry files."""

from __future__ import annotations

import dataclasses
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from vis_core.extension.metadata import build_metadata
from vis_core.extension_host.entry import execute_entry
from vis_core.extension_host.loaded import LoadedExtensions
from vis_core.extension_host.symbol_tools import symbol_host_tools

FIXTURES = Path(__file__).parent / "fixtures"
BROKEN = '''"""A syntax error on line 5."""

import vis_core.extension as vis

def broken(:
    pass

vis.register_extension(vis.Extension(name="broken", description="Never loads."))
'''


def install(folder: Path, *names: str) -> Path:
    """Copy fixture entry files (``name.py`` or the ``name/`` folder) into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        if name == "broken":
            (folder / "broken.py").write_text(BROKEN)
            continue
        source = FIXTURES / name
        if source.is_dir():
            shutil.copytree(source, folder / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy(FIXTURES / f"{name}.py", folder / f"{name}.py")
    return folder


@pytest.fixture(name="install")
def install_fixture() -> Callable[..., Path]:
    """``install(folder, *names)`` copies fixture entry files into ``folder``."""
    return install


def _run_here(loaded: LoadedExtensions) -> LoadedExtensions:
    """``loaded`` with each enabled extension's real declaration and tools: its entry file run in
    this test process (as a worker runs it), to test an extension's own functions directly. Vis
    itself reads only the declarations its registration worker reported."""
    extensions = []
    for ext in loaded.extensions:
        if ext.enabled and ext.candidate is not None:
            environment = loaded.options.environment
            declaration, _module = execute_entry(ext.candidate, environment, build=build_metadata())
            aliases = {tool.name: tool.aliases for tool in ext.tools}
            tools = [
                dataclasses.replace(tool, aliases=aliases.get(tool.name, ()))
                for symbol in declaration.symbols
                for tool in symbol_host_tools(symbol, owner=declaration.name)
            ]
            ext = dataclasses.replace(ext, declaration=declaration, tools=tuple(tools))
        extensions.append(ext)
    return LoadedExtensions(tuple(extensions), loaded.options)


@pytest.fixture(name="run_here")
def run_here_fixture() -> Callable[[LoadedExtensions], LoadedExtensions]:
    """``run_here(loaded)``: ``loaded`` with real declarations, run in the test process."""
    return _run_here
