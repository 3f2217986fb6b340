"""A sandbox's call of an extension tool made on a direct channel is recorded without a task of
its own (``ToolInvoker.direct_call``); every other call takes the full path. Either way each call
is one Activity, stored start before end, also when the event bus is full and must commit
first, and an end-only Activity is stored whole: drawn by its render callback with the call
when it succeeds, and after the call when it fails, before the sandbox hears of it."""

from __future__ import annotations

from pathlib import Path

from vis_core.agent.event_bus import MAX_HELD
from vis_core.events import ActivityEnded, ActivityStarted

from .harness import code_turn, install_extension, open_host, run_blocks, run_turn, write_script

EXTENSION = '''
import vis_core.extension as vis


def echo(value: int) -> int:
    """Gives its argument back."""
    return value


def quiet(value: int) -> int:
    """Gives its argument back; its Activity shows only once it ended."""
    return value


def drawn(value: int) -> int:
    """Gives its argument back; its Activity is drawn by its render callback."""
    return value


def sketched(value: int) -> int:
    """Gives its argument back; its Activity, drawn by its render callback, shows once it ended."""
    return value


def smudged(value: int) -> int:
    """Fails; its render callback draws the failure."""
    raise ValueError(f"smudged {value}")


def _render(*, phase, args, kwargs, result, error):
    return vis.ActivityPresentation("Drawn", f"{phase} {result if error is None else error}")


def broken(value: int) -> int:
    """Fails."""
    raise ValueError(f"no {value}")


vis.register_extension(vis.Extension(
    name="quick", alias="quick", description="Quick calls.",
    symbols=[
        vis.Symbol(echo),
        vis.Symbol(quiet, activity=vis.Activity("Quiet", show_start=False)),
        vis.Symbol(drawn, activity=vis.Activity("Drawn", render=_render)),
        vis.Symbol(broken),
        vis.Symbol(sketched, activity=vis.Activity("Sketched", render=_render, show_start=False)),
        vis.Symbol(smudged, activity=vis.Activity("Smudged", render=_render, show_start=False)),
    ],
))
'''

CALLS = MAX_HELD  # four times the Activity events one commit takes: the bus fills, often

CODE = f"""
import json
total = 0
for i in range({CALLS}):
    total += await quick.echo(i) + await quick.quiet(i) + await quick.sketched(i)
try:
    await quick.broken(5)
except Exception as exc:
    failed = str(exc)
try:
    await quick.smudged(7)
except Exception as exc:
    smudged = str(exc)
drawn = await quick.drawn(3)
print(json.dumps({{"total": total, "drawn": drawn, "failed": failed, "smudged": smudged}}))
"""


async def test_every_call_is_one_activity_stored_in_order_on_either_path(
    vis_home: Path, workspace: Path, script_path: Path
) -> None:
    install_extension(vis_home, "quick", EXTENSION)
    outcome, stored = await run_blocks(workspace, script_path, CODE)
    assert outcome.printed(0) == {
        "total": 3 * sum(range(CALLS)),
        "drawn": 3,
        "failed": "no 5",
        "smudged": "smudged 7",
    }
    starts: dict[str, int] = {}
    ends: dict[str, ActivityEnded] = {}
    for index, event in enumerate(stored):
        if isinstance(event, ActivityStarted) and event.activity is not None:
            assert event.activity.id not in starts  # one start per call
            starts[event.activity.id] = index
        elif isinstance(event, ActivityEnded) and event.activity is not None:
            record = event.activity
            assert starts[record.id] < index and record.id not in ends  # start, then one end
            ends[record.id] = event
    tools = [e.activity.tool for e in ends.values() if e.activity is not None]
    assert tools.count("echo") == tools.count("quiet") == tools.count("sketched") == CALLS
    assert set(starts) == set(ends)
    by_tool = {e.activity.tool: e.activity for e in ends.values() if e.activity is not None}
    drawn, broken, quiet = by_tool["drawn"], by_tool["broken"], by_tool["quiet"]
    # a quick call's record is the tool's: its label, owner, tag and end-only showing
    assert quiet.presentation is not None and quiet.presentation.headline == "Quiet"
    assert (quiet.owner, quiet.tag, quiet.show_start) == ("quick", "observation", False)
    assert drawn.presentation is not None and drawn.presentation.summary == "success 3"
    assert broken.error == "ValueError: no 5"
    sketches = [
        e.activity.presentation
        for e in ends.values()
        if e.activity is not None and e.activity.tool == "sketched"
    ]
    assert {p.summary for p in sketches if p is not None} == {f"success {i}" for i in range(CALLS)}
    smudge = by_tool["smudged"]
    assert smudge.error == "ValueError: smudged 7"
    assert smudge.presentation is not None and smudge.presentation.summary == "failure smudged 7"
    # what the session published is what it stored
    published = [e for e in outcome.events if isinstance(e, ActivityStarted | ActivityEnded)]
    assert published == [e for e in stored if isinstance(e, ActivityStarted | ActivityEnded)]


async def test_quick_calls_are_freed_without_the_cyclic_collector(
    vis_home: Path, workspace: Path, script_path: Path
) -> None:
    """A quick call that ended leaves no reference cycle behind (its answer's future and its
    context's ``publish`` held it): each call's objects are freed as it ends, so a stream of
    calls neither waits for the collector nor grows the heap until it runs."""
    import gc

    from vis_core.agent.invoker import QuickCall

    install_extension(vis_home, "quick", EXTENSION)
    calls = MAX_HELD  # the bus fills too: some ends wait for a commit, in a task
    write_script(
        script_path, code_turn(f"for i in range({calls}):\n    await quick.echo(i)\nprint(i)")
    )
    host = await open_host(workspace, script_path)
    gc.collect()
    gc.disable()
    try:
        outcome = await run_turn(host)
        alive = sum(1 for o in gc.get_objects() if type(o) is QuickCall)
    finally:
        gc.enable()
        await host.close()
    assert outcome.printed(0) == calls - 1
    assert alive == 0
