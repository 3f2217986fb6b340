"""Full collections wait for a pause in input; Python's own settings come back on close."""

from __future__ import annotations

import gc
import time
import weakref
from pathlib import Path

import pytest
from pilot_keys import type_keys

from vis_tui import collector
from vis_tui.collector import IdleCollector
from vis_tui.widgets.answer import AnswerView

from .support import started, until, vis_app, write_script

pytestmark = pytest.mark.usefixtures("python_collector")  # the run tunes its own (conftest)


class Node:
    me: object = None


def _survive_middle_collections(count: int) -> list[list[object]]:
    """Allocate until ``count`` middle-generation collections have run; keep what was made."""
    kept: list[list[object]] = []
    for _ in range(2_000):  # about 150 are enough where the count exists
        if gc.get_count()[2] >= count:
            return kept
        kept.append([[] for _ in range(500)])
    pytest.skip("this Python's collector does not count middle-generation collections")


def test_a_full_collection_waits_for_a_pause_in_input() -> None:
    thresholds = gc.get_threshold()
    gc.collect()
    cycle = Node()
    cycle.me = cycle  # garbage only a full collection finds
    gone = weakref.ref(cycle)
    idle = IdleCollector(idle_after=0.2)
    idle.start()  # sets the cycle aside with everything else
    del cycle
    try:
        assert gc.get_freeze_count() > 0  # what existed at start is out of the way
        assert gc.get_threshold()[2] == collector.BACKSTOP
        kept = _survive_middle_collections(thresholds[2])
        assert idle.pending  # Python would have run a full collection by now
        idle.touch()
        assert not idle.tick()  # the person is typing: it waits
        assert idle.pending
        time.sleep(0.2)
        assert idle.tick()  # input paused: it runs
        assert not idle.pending
        assert gone() is None  # what was set aside is covered too
        assert gc.get_freeze_count() > 0  # and the survivors set aside again
        del kept
    finally:
        idle.close()
    assert gc.get_threshold() == thresholds
    assert gc.get_freeze_count() == 0


async def test_answer_text_streaming_in_holds_the_full_collection_back_as_typing_does(
    workspace: Path, tmp_path: Path
) -> None:
    """A person watching an answer arrive is waiting on the app as much as one typing: the
    collection it would pause the drawing for waits until the stream pauses too."""
    script = write_script(tmp_path, [{"text": "word " * 400, "chunk": 5, "delay_ms": 10}])
    app = vis_app(workspace, script)
    async with app.run_test() as pilot:
        await started(app, pilot)
        await type_keys(pilot, *"hello", "enter")
        typed = app.collector.last_input
        await until(pilot, lambda: any("word word" in a.text for a in app.main.query(AnswerView)))
        await until(pilot, lambda: app.collector.last_input > typed)  # no key since: the stream
        await pilot.press("escape")
