"""An extension tool whose Activity has a render callback: its worker draws the start just
before the tool runs and sends it ahead, in the same call as the result (no round trip of its
own); the person sees the start while the tool runs, then its end."""

from __future__ import annotations

import os
from pathlib import Path

import yaml

from vis_core.events import ActivityEnded, ActivityStarted, BlockFinished, Event
from vis_core.host import Host, HostOptions
from vis_core.model.activity import ActivityState

EXTENSION = '''
import os
from pathlib import Path

import vis_core.extension as vis


def build(target: str) -> str:
    """Build ``target``; it sees what the start render left (it ran just before, here)."""
    return f"built {target} after {os.environ.get('DRAWN_START', 'nothing')}"


def broken(target: str) -> str:
    """Its render fails at the start: the call still runs."""
    return f"built {target}"


def _render(*, phase, args, kwargs, result, error):
    if phase == "start":
        os.environ["DRAWN_START"] = f"start of {args[0]} in {os.getpid()}"
        return vis.ActivityPresentation("Building", f"building {args[0]}")
    return vis.ActivityPresentation("Built", str(result))


def _broken(*, phase, args, kwargs, result, error):
    if phase == "start":
        raise RuntimeError("no start today")
    return vis.ActivityPresentation("Built", str(result))


vis.register_extension(vis.Extension(
    name="builder", alias="builder", description="Builds.",
    symbols=[
        vis.Symbol(build, activity=vis.Activity("Build", render=_render)),
        vis.Symbol(broken, activity=vis.Activity("Broken", render=_broken)),
    ],
))
'''


async def test_the_start_is_drawn_in_the_worker_with_the_call_and_shown_first(
    tmp_path: Path,
) -> None:
    folder = Path(os.environ["VIS_HOME"]) / "extensions"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "builder.py").write_text(EXTENSION, encoding="utf-8")
    workspace = tmp_path / "work"
    workspace.mkdir()
    script = tmp_path / "script.yaml"
    block = "print(await build('app'))\nprint(await broken('lib'))"
    script.write_text(yaml.safe_dump([{"code": block}, {"text": "done"}]), encoding="utf-8")
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted", script=script))
    try:
        session = await host.new_session()
        events: list[Event] = []
        session.subscribe(events.append)
        await session.submit("go")
        (finished,) = [e for e in events if isinstance(e, BlockFinished)]
        assert finished.error is None, finished.error
        built, other = finished.stdout.splitlines()
        assert built.startswith("built app after start of app in ")  # drawn in its worker
        assert int(built.rsplit(" ", 1)[1]) != os.getpid()
        assert other == "built lib"
        shown = [
            (type(e).__name__, e.activity.tool, e.activity.presentation.headline)
            for e in events
            if isinstance(e, ActivityStarted | ActivityEnded)
        ]
        assert shown == [
            ("ActivityStarted", "build", "Building"),
            ("ActivityEnded", "build", "Built"),
            ("ActivityStarted", "broken", "Broken"),  # its start failed: the headline
            ("ActivityEnded", "broken", "Built"),
        ]
        ended = [e.activity for e in events if isinstance(e, ActivityEnded)]
        assert all(a.state is ActivityState.SUCCEEDED for a in ended)
        assert ended[0].presentation.summary == built
    finally:
        await host.close()
