"""A streamed answer coalesces deltas: the Markdown catches up in a few re-renders."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path

import pytest
from store_locks import write_locked
from textual.geometry import Region

from vis_tui.block_context import AnswerPacing
from vis_tui.messages import CoreEvent
from vis_tui.widgets.answer import AnswerView

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
        await until(pilot, lambda: answer.source == answer.text)
        renders: list[str] = []  # the text drawn, re-render by re-render
        show = answer.lines.show

        def counted(markdown: str) -> None:
            renders.append(markdown)
            show(markdown)

        answer.lines.show = counted  # type: ignore[method-assign]
        bursts = 0
        for start in range(20, len(text), 1000):
            for n in range(start, min(start + 1000, len(text)), 20):
                turn.add_delta(text[n : n + 20])  # 50 deltas arrive between two frames …
            bursts += 1
            await until(pilot, lambda: answer.source == answer.text)
        assert answer.source == answer.text == text
        # … and are drawn in one re-render, each going on from the one before
        assert len(renders) == bursts
        assert all(b.startswith(a) for a, b in zip(renders, renders[1:], strict=False))
        assert renders[-1] == text


async def test_deltas_waiting_in_the_queue_reach_the_screen_as_one_message(
    workspace: Path,
) -> None:
    from vis_core.events import AssistantDelta, Notification, TurnStarted
    from vis_core.paths import VisPaths

    app = vis_app(workspace)
    async with app.run_test(size=(100, 30)) as pilot:
        await started(app, pilot)
        assert app.session is not None
        sid, main = app.session.id, app.main
        await app.session.emit(TurnStarted(sid, turn_id="t1", position=1, request="go"))
        waiting: list[tuple[object, list[str]]] = []  # after each event: the delta waiting

        def look(event: object) -> None:
            message = main._waiting_delta
            waiting.append((message, [] if message is None else list(message.more)))

        app.session.subscribe(look)
        events = [AssistantDelta(sid, turn_id="t1", text=piece) for piece in ("Hel", "lo ", "wor")]
        events += [Notification(sid, text="between"), AssistantDelta(sid, turn_id="t1", text="ld")]
        # committed while the screen is busy: all five are posted before it handles one
        with write_locked(VisPaths.from_env().db_file):  # the writer waits; the events queue up
            emits = [asyncio.ensure_future(app.session.emit(event)) for event in events]
            await asyncio.sleep(0)  # each emit submitted its event
        app.session.events.persist()  # the loop waits for the commits, as a read does
        await asyncio.gather(*emits)
        joined, more = waiting[2]
        assert isinstance(joined, CoreEvent) and more == ["lo ", "wor"]  # one message, not three
        assert waiting[4][0] is not joined  # after another event, deltas start anew
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
    """Every line the answer draws, with its text and styles."""
    strips = answer.render_lines(Region(0, 0, *answer.region.size))  # with padding
    return [repr([(segment.text, str(segment.style)) for segment in strip]) for strip in strips]


async def test_a_table_and_a_code_fence_streamed_in_small_chunks_look_as_if_rendered_at_once(
    workspace: Path,
) -> None:
    # every chunk meets a re-render
    app = vis_app(workspace, answer_pacing=AnswerPacing(flush_seconds=0.0, pace=0))
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
        kinds = [block.kind for block in streamed.lines.blocks]
        assert kinds == [block.kind for block in whole.lines.blocks]
        assert "table_open" in kinds and "fence" in kinds
        assert streamed.size == whole.size
        drawn = _drawn(streamed)
        assert any("alpha" in line for line in drawn) and any("return" in line for line in drawn)
        assert drawn == _drawn(whole)


async def test_a_long_answer_draws_its_end_first_and_the_blocks_above_when_idle(
    workspace: Path,
) -> None:
    app = vis_app(workspace)
    async with app.run_test(size=(100, 30)) as pilot:
        await started(app, pilot)
        turn = app.main.transcript.add_turn("t1", 1, "write a lot")
        paragraphs = [f"paragraph {n} " + "word " * 60 for n in range(120)]
        text = "\n\n".join(paragraphs)
        for n in range(0, len(text), 500):
            turn.add_delta(text[n : n + 500])
        turn.close_answer()
        answer = turn.answers[0]
        assert isinstance(answer, AnswerView)
        await until(pilot, lambda: answer.source == text)
        await pilot.pause()
        shown = app.screen._compositor.render_strips()  # type: ignore[attr-defined]
        assert any("paragraph 119" in "".join(s.text for s in strip) for strip in shown)
        await until(pilot, lambda: answer.lines.complete)  # the rest, drawn when idle
        await pilot.pause()
        drawn = answer.lines.strips(answer.content_size.width, answer, answer.visual_style)
        assert answer.content_size.height == len(drawn)
        app.main.transcript.scroll_home(animate=False)
        await pilot.pause()
        top = ["".join(s.text for s in strip) for strip in app.screen._compositor.render_strips()]  # type: ignore[attr-defined]
        assert any("paragraph 0 word" in line for line in top)
        assert [line.text for line in drawn] == [
            answer.render_line(y).text for y in range(answer.content_size.height)
        ]


async def test_an_answer_can_be_selected_with_the_mouse_and_copied(workspace: Path) -> None:
    app = vis_app(workspace)
    async with app.run_test(size=(100, 30)) as pilot:
        await started(app, pilot)
        turn = app.main.transcript.add_turn("t1", 1, "explain")
        turn.add_delta("First **bold** line.\n\n- one item\n- two items\n")
        turn.close_answer()
        answer = turn.answers[0]
        await until(pilot, lambda: answer.source == answer.text)
        await pilot.pause()
        x, y = answer.content_region.offset
        await pilot.mouse_down(offset=(x, y))
        await pilot.hover(offset=(x + 10, y + 2))
        await pilot.mouse_up(offset=(x + 10, y + 2))
        await pilot.pause()
        assert answer in app.screen.selections
        selected = app.screen.get_selected_text()
        assert selected is not None
        assert selected.startswith("First bold line.") and "• one" in selected
        answer.text_select_all()
        await pilot.pause()
        everything = app.screen.get_selected_text() or ""
        assert "First bold line." in everything and "two items" in everything


async def test_a_block_that_draws_nothing_leaves_one_blank_line_between_its_neighbours(
    workspace: Path,
) -> None:
    app = vis_app(workspace)
    async with app.run_test(size=(100, 30)) as pilot:
        await started(app, pilot)
        turn = app.main.transcript.add_turn("t1", 1, "explain")
        turn.add_delta("Before.\n\n<!-- a comment -->\n\nAfter.\n")
        turn.close_answer()
        answer = turn.answers[0]
        await until(pilot, lambda: answer.source == answer.text)
        await pilot.pause()
        drawn = [answer.render_line(y).text.strip() for y in range(answer.content_size.height)]
        assert drawn == ["Before.", "", "After."]


async def test_a_backlog_goes_out_in_slices_cut_at_blank_lines_and_a_long_block_whole(
    workspace: Path,
) -> None:
    app = vis_app(workspace, answer_pacing=AnswerPacing(slice=1000))
    async with app.run_test(size=(100, 30)) as pilot:
        await started(app, pilot)
        paragraphs = "\n\n".join(f"paragraph {n} " + "word " * 40 for n in range(30))
        one_block = "word " * 2000  # 10,000 characters without a blank line
        for n, text in enumerate((paragraphs, one_block)):
            turn = app.main.transcript.add_turn(f"t{n}", n + 1, "write")
            turn.add_delta(text)
            answer = turn.answers[0]
            assert isinstance(answer, AnswerView)
            renders: list[str] = []
            show = answer.lines.show

            def counted(markdown: str, show: object = show, renders: list = renders) -> None:
                renders.append(markdown)
                show(markdown)  # type: ignore[operator]

            answer.lines.show = counted  # type: ignore[method-assign]
            turn.close_answer()
            await until(pilot, lambda answer=answer, text=text: answer.source == text)
            if n == 0:  # many slices, each ending where a paragraph ends
                assert len(renders) >= len(text) // 1000
                assert all(r.endswith("\n\n") for r in renders[:-1]) and renders[-1] == text
                assert all(
                    len(b) - len(a) <= 1000 for a, b in zip(renders, renders[1:], strict=False)
                )
            else:  # no blank line to cut at: one re-render, not one per slice
                assert renders == [text]


def _paragraph(seed: int, size: int) -> str:
    """Words of prose (some accented, curly quotes, runs of spaces, soft line breaks with a
    trailing space or an indent) in one paragraph of ``size`` characters or more."""
    rng = random.Random(seed)
    words = ["a", "of", "the", "wrapping", "naïve", "don’t", "—", "x" * 19, "end.", "(12)", "a-b"]
    parts: list[str] = ["Start"]
    while sum(map(len, parts)) < size:
        parts.append(rng.choice(words))
        parts.append(rng.choice([" ", " ", " ", "  ", " \n", "\n   ", "   "]))
    return "".join(parts) + "end"


LONG_PARAGRAPHS = [
    "word " * 5000,  # one 25 KB line
    _paragraph(1, 6000),
    _paragraph(2, 6000).replace("(12)", "`(12)`"),  # inline code: Rich wraps it
    _paragraph(3, 6000).replace("\n", " ") + " " + "y" * 30 + " tail",  # a word wider than the view
]


@pytest.mark.parametrize("text", LONG_PARAGRAPHS, ids=["one-line", "prose", "code", "long-word"])
async def test_a_long_paragraph_shows_the_lines_richs_markdown_draws(
    workspace: Path, text: str
) -> None:
    """One long paragraph is wrapped without Rich's Text.wrap when it is plain words; what
    it shows, streamed or whole, line for line and style for style, is what Rich draws."""
    from vis_tui.widgets.answer_lines import Block
    from vis_tui.widgets.answer_markdown import rich_lines

    app = vis_app(workspace)
    async with app.run_test(size=(43, 30)) as pilot:
        await started(app, pilot)
        turn = app.main.transcript.add_turn("t1", 1, "write one paragraph")
        for n in range(0, len(text), 700):
            turn.add_delta(text[n : n + 700])
        turn.close_answer()
        answer = turn.answers[0]
        assert isinstance(answer, AnswerView)
        await until(pilot, lambda: answer.source == text)
        await pilot.pause()
        [block] = answer.lines.blocks
        width, style = answer.content_size.width, answer.visual_style
        shown = answer.lines.strips(width, answer, style)
        expected = rich_lines(Block(block.source, block.kind), width, answer, style)
        assert len(shown) > 100
        assert [list(strip) for strip in shown] == [list(strip) for strip in expected]
        assert answer.content_size.height == len(expected)
        assert [answer.render_line(y).text for y in range(len(expected))] == [
            strip.text for strip in expected
        ]


async def test_plain_paragraphs_wrap_as_rich_wraps_them(workspace: Path) -> None:
    """The paragraphs Vis wraps itself, at any width, against Rich's own wrap; and the ones
    it leaves to Rich (markup, a hard break, tabs, wide or zero-width characters, a word
    longer than the line); escapes and entities show as their text."""
    from vis_tui.widgets.answer_lines import Block
    from vis_tui.widgets.answer_markdown import plain_paragraph_lines, rich_lines, top_blocks

    rng = random.Random(7)
    words = ["a", "bb", "wrap", "x" * 9, "é", "’s", "#1", "2.", "a-", "(a)"]
    gaps = [" ", " ", "  ", "     ", "\n", " \n", "\n  ", "\n      "]
    app = vis_app(workspace)
    async with app.run_test(size=(60, 20)) as pilot:
        await started(app, pilot)
        view = AnswerView("")
        await app.main.transcript.mount(view)
        style = view.visual_style
        wrapped = 0
        for _ in range(400):
            count = rng.randint(1, 40)
            source = "w" + "".join(rng.choice(gaps) + rng.choice(words) for _ in range(count))
            width = rng.choice([9, 10, 11, 16, 33, 80])
            block = Block(source, "paragraph_open")
            assert [kind for _, kind in top_blocks(source)] == ["paragraph_open"]
            lines = plain_paragraph_lines(block, width, view, style)
            assert lines is not None, (source, width)  # plain words, none wider than 9
            expected = rich_lines(block, width, view, style)
            assert [list(s) for s in lines] == [list(s) for s in expected], (source, width)
            wrapped += 1
        assert wrapped == 400
        for source in [
            "a `b` c",
            "a **b** c",
            "a [b](c) d",
            "a  \nb",
            "a\tb",
            "a 日本 b",
            "a e\u0301 b",
            "a " + "x" * 12 + " b",
        ]:
            assert plain_paragraph_lines(Block(source, "paragraph_open"), 10, view, style) is None
        for source in ["a &amp; b &lt;c&gt;", "a \\* b \\_c\\_", "a < b", "a_b_c"]:
            block = Block(source, "paragraph_open")  # markup characters that show as text
            lines = plain_paragraph_lines(block, 10, view, style)
            assert lines is not None
            assert [list(s) for s in lines] == [list(s) for s in rich_lines(block, 10, view, style)]
