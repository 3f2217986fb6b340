"""A streamed answer coalesces deltas: the Markdown catches up in a few re-renders."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from textual.geometry import Region

from vis_tui.widgets.answer import FLUSH_SECONDS, AnswerView

from .support import started, until, vis_app


async def test_a_fast_stream_is_rendered_in_few_re_renders_and_ends_complete(
    workspace: Path,
) -> None:
    app = vis_app(workspace)
    async with app.run_test(size=(100, 30)) as pilot:
        await started(app, pilot)
        turn = app.main.transcript.add_turn("t1", 1, "write a lot")
        text = "".join(f"word{n} " + ("\n\n" if n % 50 == 49 else "") for n in range(3000))
        turn.add_delta(text[:20])
        answer = turn.answers[0]
        assert isinstance(answer, AnswerView)
        renders: list[str] = []  # what reaches the Markdown widget, re-render by re-render
        append = answer.append

        def counted(markdown: str) -> object:
            renders.append(markdown)
            return append(markdown)

        answer.append = counted  # type: ignore[method-assign]
        begun = time.perf_counter()
        for n in range(20, len(text), 20):
            turn.add_delta(text[n : n + 20])
            await asyncio.sleep(0)
        streamed = time.perf_counter() - begun
        await until(pilot, lambda: answer.source == text)
        assert answer.text == text
        assert text.endswith("".join(renders))  # each re-render appended what was new
        # at most one re-render per FLUSH_SECONDS while deltas arrive, and one at the end
        assert 1 <= len(renders) <= streamed / FLUSH_SECONDS + 2 < 3000 / 20


async def test_deltas_waiting_in_the_queue_reach_the_screen_as_one_message(
    workspace: Path,
) -> None:
    from vis_core.events import AssistantDelta, Notification, TurnStarted

    app = vis_app(workspace)
    async with app.run_test(size=(100, 30)) as pilot:
        await started(app, pilot)
        assert app.session is not None
        sid, main = app.session.id, app.main
        await app.session.emit(TurnStarted(sid, turn_id="t1", position=1, request="go"))
        for piece in ("Hel", "lo ", "wor"):
            await app.session.emit(AssistantDelta(sid, turn_id="t1", text=piece))
        joined = main._waiting_delta
        await app.session.emit(Notification(sid, text="between"))
        await app.session.emit(AssistantDelta(sid, turn_id="t1", text="ld"))
        assert joined is not None and joined.more == ["lo ", "wor"]  # one message, not three
        assert main._waiting_delta is not joined  # after another event, deltas start anew
        await until(pilot, lambda: main.transcript.last_answer == "Hello world")


SPLIT_ANSWER = """Results:

| name | size | note |
| ---- | ---: | ---- |
| alpha | 12 | first **row** |
| beta | 345 | `code` cell |

```python
def f(x):

    return x * 2  # a blank line above, inside the fence
```

Done: see `f`.
"""


def _drawn(answer: AnswerView) -> list[str]:
    """What the answer and every widget inside it draw, with places relative to the answer,
    sizes and styles, in screen order (top to bottom, left to right)."""
    origin = answer.region.offset
    pieces: list[tuple[int, int, int, str]] = []
    for depth, widget in enumerate([answer, *answer.query("*")]):
        offset = widget.region.offset - origin
        strips = widget.render_lines(Region(0, 0, *widget.region.size))  # with padding
        drawn = [
            repr([(segment.text, str(segment.style)) for segment in strip]) for strip in strips
        ]
        pieces.append((offset.y, offset.x, depth, f"{widget.size} {drawn}"))
    return [piece for *_, piece in sorted(pieces, key=lambda piece: (piece[0], piece[1], piece[3]))]


async def test_a_table_and_a_code_fence_streamed_in_small_chunks_look_as_if_rendered_at_once(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import vis_tui.widgets.answer as answer_module

    monkeypatch.setattr(answer_module, "FLUSH_SECONDS", 0.0)  # every chunk meets a re-render
    monkeypatch.setattr(answer_module, "PACE", 0)
    app = vis_app(workspace)
    async with app.run_test(size=(100, 60)) as pilot:
        await started(app, pilot)
        streamed_turn = app.main.transcript.add_turn("t1", 1, "stream it")
        for n in range(0, len(SPLIT_ANSWER), 23):  # every cut (mid-row, mid-fence) is drawn
            streamed_turn.add_delta(SPLIT_ANSWER[n : n + 23])
            streamed = streamed_turn.answers[0]
            assert isinstance(streamed, AnswerView)
            while streamed.source != streamed.text:
                await asyncio.sleep(0.001)
        streamed_turn.close_answer()
        whole_turn = app.main.transcript.add_turn("t2", 2, "all at once")
        whole_turn.add_delta(SPLIT_ANSWER)
        whole = whole_turn.answers[0]
        assert isinstance(streamed, AnswerView) and isinstance(whole, AnswerView)
        await until(pilot, lambda: whole.source == whole.text)
        await pilot.pause()
        kinds = [type(block).__name__ for block in streamed.children]
        assert kinds == [type(block).__name__ for block in whole.children]
        assert "MarkdownTable" in kinds and "MarkdownFence" in kinds
        assert streamed.size == whole.size
        drawn = _drawn(streamed)
        assert any("alpha" in line for line in drawn) and any("return" in line for line in drawn)
        assert drawn == _drawn(whole)
