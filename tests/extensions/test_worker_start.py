"""How an extension worker starts, in both of its modes: what it has imported when it loads an
entry file, and that it serves with the cyclic collector on and its start set aside."""

from __future__ import annotations

import json
from pathlib import Path

from vis_core.extension_host.loader import load_extensions
from vis_core.extension_host.worker_client import SessionWorker, WorkerPlace
from vis_core.paths import VisPaths

# What only the host runs (its store, settings, events and loop) or the terminal shows; the
# log files, written only when an entry file prints in the load-only mode (a session's worker
# hands those lines to its host).
NOT_AT_START = (
    "sqlite3",
    "vis_core.store",
    "vis_core.settings",
    "vis_core.events",
    "vis_core.agent",
    "vis_core.host",
    "vis_core.extension.logs",
)

# Loading it leaves ``started-PID`` beside it: what the loading worker imported and its collector.
EXTENSION = f"""\
import gc, json, os, sys
import vis_core.extension as vis

with open(os.path.join(os.path.dirname(__file__), f"started-{{os.getpid()}}"), "w") as f:
    json.dump({{
        "imported": [m for m in {NOT_AT_START!r} if m in sys.modules],
        "collector": gc.isenabled(),
        "set_aside": gc.get_freeze_count(),
    }}, f)

def ping() -> str:
    \"\"\"Answer pong.\"\"\"
    return "pong"

vis.register_extension(vis.Extension(
    name="probe", description="Probe.", alias="probe", symbols=[vis.Symbol(ping)]))
"""


async def test_both_worker_modes_start_lean_and_serve_with_the_collector_on(
    workspace: Path,
) -> None:
    folder = VisPaths.from_env().extensions_dir
    folder.mkdir(parents=True)
    (folder / "probe.py").write_text(EXTENSION, encoding="utf-8")
    loaded = load_extensions(bundled=None, include_packages=False)  # the registration worker
    (tool,) = loaded.host_tools()
    worker = SessionWorker(lambda: loaded, WorkerPlace("s1", workspace, workspace), {})
    try:
        await worker.call(tool, (), {})  # the session's worker loads it too
    finally:
        worker.stop()
    started = [json.loads(p.read_text()) for p in sorted(folder.glob("started-*"))]
    assert len(started) == 2
    for one in started:
        assert one["imported"] == [] and one["collector"] is True and one["set_aside"] > 0
