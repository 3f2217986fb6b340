"""The façade front ends drive: what it hands out, what it keeps out of the TUI's first frame."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import vis_core
from vis_core import frontend

ROOT = Path(__file__).resolve().parent.parent
ALLOWED = {"frontend", "events", "model"}  # what vis_tui may import of vis_core


def test_every_name_the_facade_lends_is_the_core_object_itself() -> None:
    import importlib

    assert frontend._LENT["McpSource"] == ("vis_core.mcp.config", "Source")  # lent renamed
    for name, (module, there) in frontend._LENT.items():
        assert getattr(frontend, name) is getattr(importlib.import_module(module), there)


def _forbidden(source: str) -> set[str]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    (contract,) = [c for c in contracts if c.get("source_modules") == [source]]
    return set(contract["forbidden_modules"])


def _parts() -> set[str]:
    return {
        path.stem if path.suffix == ".py" else path.name
        for path in Path(vis_core.__file__).parent.iterdir()
        if (path.suffix == ".py" and path.stem != "__init__") or (path / "__init__.py").exists()
    }


def test_the_tui_contract_forbids_every_part_of_the_core_but_the_facade_events_and_model() -> None:
    assert _forbidden("vis_tui") == {f"vis_core.{p}" for p in _parts() - ALLOWED}


def test_the_acp_contract_forbids_every_part_of_the_core_but_the_facade_events_and_model() -> None:
    assert _forbidden("vis_core.acp") == {f"vis_core.{p}" for p in _parts() - ALLOWED - {"acp"}}


def test_importing_the_facade_loads_none_of_what_it_lends() -> None:
    lent = {module for module, _ in frontend._LENT.values()}
    modules = sorted(lent - {"vis_core"})
    code = f"import sys, vis_core.frontend; print(*(m for m in {modules!r} if m in sys.modules))"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    cheap = {
        "vis_core.system.jail_check",
        "vis_core.system.programs",
    }  # leaves the TUI's first frame imports
    assert set(done.stdout.split()) <= cheap
