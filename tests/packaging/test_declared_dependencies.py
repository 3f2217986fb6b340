"""pyproject.toml declares exactly what Vis imports: nothing imported undeclared, nothing unused."""

from __future__ import annotations

import functools
import re
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest

# with the provider-SDK tests: both tests below share one read of the sources
pytestmark = pytest.mark.xdist_group("sdk-imports")

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ("vis_core", "vis_tui", "extensions", "blockether")
OURS = {"vis_core", "vis_tui", "vis_extensions", "blockether"}


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _declared() -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return {
        _normal(re.split(r"[<>=!~;\[ ]", spec, maxsplit=1)[0]) for spec in project["dependencies"]
    }


# An import statement, at the start of its line (ruff format puts each statement on a line
# of its own): ``import a.b as c, d`` or an absolute ``from a.b import …``. Lines of a string
# that look like one count too (they name the standard library); parsing every file instead
# cost a second of CPU.
IMPORT = re.compile(r"^[ \t]*(?:import[ \t]+([^\n#;]+)|from[ \t]+(\w[\w.]*)[ \t]+import\b)", re.M)


@functools.cache  # both tests read it, on one worker: the sources are read once
def _imported() -> dict[str, set[str]]:
    """Each third-party distribution the sources import, with a file that imports it."""
    owners = packages_distributions()
    found: dict[str, set[str]] = {}
    for folder in SOURCES:
        for path in (ROOT / folder).rglob("*.py"):
            for statement in IMPORT.finditer(path.read_text(encoding="utf-8")):
                imports, module = statement.groups()
                names = [module] if module else [part.split()[0] for part in imports.split(",")]
                for name in names:
                    top = name.split(".")[0]
                    if top in sys.stdlib_module_names or top in OURS:
                        continue
                    assert top in owners, f"{path}: {top} is not installed"
                    for dist in owners[top]:
                        found.setdefault(_normal(dist), set()).add(str(path.relative_to(ROOT)))
    return found


def test_every_imported_library_is_declared_and_every_declared_one_imported() -> None:
    declared, imported = _declared(), _imported()
    undeclared = {
        dist: sorted(files)[:2] for dist, files in imported.items() if dist not in declared
    }
    assert not undeclared, f"imported but not in pyproject.toml: {undeclared}"
    assert not declared - imported.keys(), "declared but never imported"


def test_one_http_client_stack() -> None:
    # the SDKs (anthropic, openai, mcp) ride on httpx2: Vis's own requests use it too
    assert "httpx" not in _declared()
    assert "httpx" not in _imported()
