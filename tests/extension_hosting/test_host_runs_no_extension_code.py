"""The host never runs a non-bundled extension's entry file: the registration worker reports its
declaration as data, the session worker runs its code and makes its results into records."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from vis_core.events import ActivityEnded
from vis_core.settings.tree import build_tree

from .harness import code_turn, install_extension, open_host, run_turn, write_script

SECRET = "sk-test-host"

PROBE = '''
import json
import os
from dataclasses import dataclass
from pathlib import Path

import vis_core.extension as vis

LOG = Path(os.environ["VIS_HOME"]) / "probe.jsonl"


def _write(what: str, **more) -> None:
    row = {"what": what, "pid": os.getpid(), "env": dict(os.environ), **more}
    with LOG.open("a") as out:
        out.write(json.dumps(row) + "\\n")


_write("import")  # runs wherever the entry file is loaded


@dataclass(frozen=True)
class Place:
    city: str
    zip_code: str


@dataclass(frozen=True)
class Visit:
    name: str
    place: Place

    @property
    def label(self) -> str:
        return f"{self.name} in {self.place.city}"

    def secret_method(self) -> str:
        return "never crosses"


def visit(name: str) -> Visit:
    """Plan a visit to Lyon."""
    _write("tool")
    return Visit(name, Place("Lyon", "69001"))


def _prompt(env: dict) -> str:
    _write("prompt")
    return "Probe prompt from the worker."


def _changed(old, new, scope) -> None:
    _write("on_change", change=[old, new, scope])


def _hook(call) -> None:
    _write("hook")


vis.register_extension(vis.Extension(
    name="probe", alias="probe", description="Records where its code runs.",
    prompt=_prompt,
    settings=[vis.Setting(
        id="probe_level", label="Probe level", type="enum", default="low",
        choices=["low", "high"], scopes=["global", "session"], on_change=_changed,
    )],
    slash_commands=[vis.SlashCommand("probe", lambda ctx: "probed " + str(os.getpid()))],
    op_hooks=[vis.OpHook("python_execution", _hook, phase="after")],
    symbols=[vis.Symbol(visit)],
))
'''

CODE = """
import json
v = await probe.visit("Ada")
print(json.dumps({"name": v.name, "city": v.place.city, "zip": v.place["zip_code"],
                  "label": v.label, "method": hasattr(v, "secret_method")}))
"""


def _rows(vis_home: Path) -> list[dict[str, Any]]:
    path = vis_home / "probe.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def _ours() -> list[str]:
    return [name for name in sys.modules if name.startswith("vis_ext_") and "probe" in name]


async def test_the_host_never_runs_the_entry_file_and_everything_still_works(
    vis_home: Path, workspace: Path, script_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    install_extension(vis_home, "probe", PROBE)
    write_script(script_path, code_turn(CODE) * 2)
    host = await open_host(workspace, script_path)
    try:
        ext = host.catalog.loaded.get("probe")
        assert ext is not None and ext.error is None
        (tool,) = ext.tools
        assert tool.description == "Plan a visit to Lyon." and tool.spec is not None
        assert tool.spec.signature == "(name: str) -> 'Visit'"

        outcome = await run_turn(host)
        assert outcome.printed() == {
            "name": "Ada",
            "city": "Lyon",
            "zip": "69001",
            "label": "Ada in Lyon",
            "method": False,
        }
        assert outcome.tools() == ["visit"]
        session_id = outcome.ended.session_id
        session = host.registry.live_session(session_id)
        assert session is not None
        assert "Probe prompt from the worker." in (await session.next_request()).system

        (group,) = [g for g in build_tree(host.catalog.loaded).extensions if g.name == "probe"]
        assert [node.setting.id for node in group.settings] == ["probe_level"]
        assert group.settings[0].setting.label == "Probe level"
        saved = await host.settings.set("probe_level", "high", "session", session_id=session_id)
        assert saved.hook_error is None

        result = await host.commands.run(session, "/probe")
        worker = host.registry.extension_workers[session_id].worker_for("probe")
        assert worker.pid is not None and result.title == f"probed {worker.pid}"

        await host.commands.run(session, "/reload")
        again = host.catalog.loaded.get("probe")
        assert again is not None and again.error is None
        after = await run_turn(host, session_id=session_id)
        assert after.printed()["label"] == "Ada in Lyon"
        assert any(isinstance(e, ActivityEnded) for e in after.events)
    finally:
        await host.close()

    rows = _rows(vis_home)
    kinds = [row["what"] for row in rows]
    # loaded by the registration worker at start and at /reload, and by the session worker
    assert kinds.count("import") >= 3, kinds
    assert {"tool", "prompt", "on_change", "hook"} <= set(kinds), kinds
    assert ["low", "high", "session"] in [row.get("change") for row in rows]
    assert all(row["pid"] != os.getpid() for row in rows), kinds
    assert all(SECRET not in json.dumps(row["env"]) for row in rows)
    assert _ours() == []  # the host imported no module of the extension
