"""Long transcripts: a capped number of mounted turns, unmounted and mounted again on scroll."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from pilot_keys import type_keys
from textual.pilot import Pilot
from textual.widget import Widget

from vis_tui.app import VisApp
from vis_tui.widgets.stored_turn import StoredTurnView
from vis_tui.widgets.transcript import PAGE_TURNS, Transcript

from .support import started, store_session, until, vis_app, write_script


def _store_session(workspace: Path, turns: int) -> str:
    return store_session(workspace, [f"request {n}" for n in range(1, turns + 1)], title="long")


@contextlib.asynccontextmanager
async def _paging(
    workspace: Path, script: Path | None = None
) -> AsyncIterator[tuple[VisApp, Pilot[int], Transcript]]:
    """The app resumed on a stored session of 70 turns, at most 30 of them mounted."""
    app = vis_app(workspace, script, resume=_store_session(workspace, 70))
    async with app.run_test(size=(100, 30)) as pilot:
        await started(app, pilot)
        transcript = app.main.transcript
        transcript.max_turns = 30
        yield app, pilot, transcript


def _positions(transcript: Transcript) -> list[int]:
    return [child.position for child in transcript._mounted_turns()]


def _displayed(transcript: Transcript, kind: str | type[Widget]) -> bool:
    """Whether a ``kind`` is mounted in the transcript and shown (none may be there yet)."""
    return any(widget.display for widget in transcript.query(kind))


async def test_paging_keeps_at_most_max_turns_mounted_and_brings_them_back(
    workspace: Path,
) -> None:
    async with _paging(workspace) as (app, pilot, transcript):
        assert _positions(transcript) == list(range(51, 71))
        for _ in range(300):
            if _positions(transcript)[:1] == [1]:
                break
            await pilot.press("pageup")
        await pilot.pause()
        assert _positions(transcript) == list(range(1, 31))
        assert not transcript.has_older and transcript.has_newer
        assert sorted(t.position for t in transcript.turns.values()) == list(range(1, 31))
        for _ in range(300):
            if not transcript.has_newer:
                break
            await pilot.press("pagedown")
        await until(pilot, lambda: _positions(transcript)[-1:] == [70])
        assert _positions(transcript) == list(range(41, 71))
        assert transcript.has_older
        await pilot.press("ctrl+home")
        for _ in range(300):
            if _positions(transcript)[:1] == [1]:
                break
            await pilot.press("pageup")
        assert _positions(transcript)[:1] == [1]
        await pilot.press("ctrl+end")
        await until(pilot, lambda: _positions(transcript) == list(range(51, 71)))
        assert not transcript.has_newer and transcript.has_older


async def test_ctrl_home_reaches_the_first_turn_in_one_press(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One press shows turn 1 (it took 15 presses of a page of 4 turns to reach turn 1 of
    60), and mounts the first page only, not every page on the way (500 steps at turn
    2,000); going down mounts the rest again."""
    async with _paging(workspace) as (app, pilot, transcript):
        assert _positions(transcript)[:1] == [51]
        ahead = min(_positions(transcript)) - 2 * PAGE_TURNS  # what idle moments may draw
        made: list[int] = []
        init = StoredTurnView.__init__

        def counted(view: StoredTurnView, *args: Any, **kwargs: Any) -> None:
            init(view, *args, **kwargs)
            made.append(view.position)

        monkeypatch.setattr(StoredTurnView, "__init__", counted)
        await pilot.press("ctrl+home")
        await until(
            pilot, lambda: _positions(transcript)[:1] == [1], seen=lambda: _positions(transcript)
        )
        await until(pilot, lambda: transcript.scroll_y == 0)
        # turns 20 to 50 were never built on the way; the two pages above the newest ones may
        # be read and drawn ahead at idle moments (on a loaded machine, after the count began)
        assert ahead > 20 and not [p for p in made if 20 <= p < ahead], (ahead, made)
        for _ in range(12):
            await pilot.press("pagedown")
        await until(pilot, lambda: max(_positions(transcript)) > 8)
        shown = _positions(transcript)
        assert shown == list(range(shown[0], shown[-1] + 1))  # in order, none missing
        assert len(_positions(transcript)) <= transcript.max_turns and transcript.has_newer
        await pilot.press("ctrl+end")
        await until(pilot, lambda: _positions(transcript) == list(range(51, 71)))


def _focused_position(app: VisApp) -> int | None:
    """The position of the turn holding the focus (None: no turn has it)."""
    from vis_tui.widgets.turn import TurnView

    focused = app.screen.focused
    chain = (focused, *focused.ancestors) if focused is not None else ()
    turn = next((w for w in chain if isinstance(w, TurnView | StoredTurnView)), None)
    return turn.position if turn is not None else None


async def test_tab_after_ctrl_home_brings_the_newest_turn_back_and_focuses_it(
    workspace: Path,
) -> None:
    """README: Tab from the prompt goes to the newest. After Ctrl+Home (the newest turns
    unmounted below) it focused the last turn mounted, far from the newest (turn 45 of 71 in
    the tester's session; turn 4 here)."""
    import os

    from sample_turns import record, turn_events

    from vis_core.events import SessionCreated
    from vis_core.model.activity import ActivityPresentation, ActivityText
    from vis_core.store import Store

    with Store(Path(os.environ["VIS_HOME"]) / "vis.db") as store:  # each turn has a row to open
        row = store.create_session(workspace.resolve(), workspace.resolve(), title="long")
        store.append(SessionCreated(row.id, title="long", workspace=str(workspace)))
        for n in range(1, 71):
            turn_id = f"{row.id}-t{n}"
            shown = ActivityPresentation(
                "Read", f"file {n}", content=(ActivityText(f"line of {n}"),)
            )
            rows = [record(f"a{n}", shown, session_id=row.id, turn_id=turn_id)]
            store.append_many(turn_events(row.id, turn_id, f"request {n}", "", rows, position=n))
    app = vis_app(workspace, resume=row.id)
    async with app.run_test(size=(80, 24)) as pilot:
        await started(app, pilot)
        transcript = app.main.transcript
        transcript.max_turns = 30
        await pilot.press("ctrl+home")
        await until(pilot, lambda: _positions(transcript)[:1] == [1] and transcript.has_newer)
        await until(pilot, lambda: not transcript._loading)
        assert app.screen.focused is app.main.prompt
        await pilot.press("tab")
        await until(
            pilot,
            lambda: _focused_position(app) is not None,
            seen=lambda: (app.screen.focused, transcript.stops()[-3:], _positions(transcript)),
        )
        await until(pilot, lambda: not transcript._loading and transcript._hidden is None)
        await pilot.pause()
        assert _focused_position(app) == 70
        assert _positions(transcript)[-1] == 70 and not transcript.has_newer
        focused = app.screen.focused
        assert focused is not None and focused.region.height > 0  # in view
        assert transcript.region.contains_region(focused.region)


def _watch_draws(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, bool]]:
    """Each stored turn drawn from now on, and whether the loop ran a step before it."""
    drawn: list[tuple[int, bool]] = []
    looped = [True]
    draw = StoredTurnView._draw

    def watched(view: StoredTurnView, width: int, painter: Widget) -> Any:
        drawn.append((view.position, looped[0]))
        looped[0] = False
        asyncio.get_running_loop().call_soon(looped.__setitem__, 0, True)
        return draw(view, width, painter)

    monkeypatch.setattr(StoredTurnView, "_draw", watched)
    return drawn


async def test_a_resumed_page_is_drawn_a_turn_at_a_time_before_it_shows(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--resume drew the newest page's stored turns in the layout that mounted them: all in
    one step of the loop, each twice (before the scrollbar showed, and after), while keys and
    frames waited (0.15-0.65 s). Each is drawn once now, the newest first, in a step of the
    loop of its own, and that layout uses those lines."""
    session_id = _store_session(workspace, 30)
    drawn = _watch_draws(monkeypatch)
    app = vis_app(workspace, resume=session_id)
    async with app.run_test(size=(100, 30)) as pilot:
        await started(app, pilot)
        transcript = app.main.transcript
        assert _positions(transcript) == list(range(11, 31))
        assert transcript.max_scroll_y > 0 and transcript.scroll_y == transcript.max_scroll_y
    assert [position for position, _ in drawn] == list(range(30, 10, -1))
    assert all(ran for _, ran in drawn)


async def _to_the_oldest(pilot: Any, transcript: Transcript) -> None:
    for _ in range(300):
        if _positions(transcript)[:1] == [1]:
            break
        await pilot.press("pageup")
    await until(pilot, lambda: transcript.has_newer and transcript._predraw_timer is None)


async def _back_to_the_newest(pilot: Any, transcript: Transcript) -> None:
    """Ctrl+End, until the newest page of the 70 stored turns shows."""
    await pilot.press("ctrl+end")
    await until(pilot, lambda: _positions(transcript) == list(range(51, 71)))
    await until(pilot, lambda: all(view.display for view in transcript._mounted_turns()))


async def test_the_newest_page_is_drawn_a_turn_at_a_time_before_it_shows_again(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl+End after paging far up mounted the newest page in one layout: its 20 stored
    turns drawn in one step of the loop, while keys and frames waited. Each is drawn in a
    step of its own now, the newest first, before the page shows at the end."""
    async with _paging(workspace) as (app, pilot, transcript):
        await _to_the_oldest(pilot, transcript)
        drawn = _watch_draws(monkeypatch)
        await pilot.press("ctrl+end")
        await until(pilot, lambda: all(view.display for view in transcript._mounted_turns()))
        await pilot.pause()
        assert _positions(transcript) == list(range(51, 71))
        assert transcript.max_scroll_y > 0 and transcript.scroll_y == transcript.max_scroll_y
        assert not transcript.has_newer and transcript.has_older
    assert [position for position, _ in drawn[:20]] == list(range(70, 50, -1))
    assert all(ran for _, ran in drawn[:20])


async def test_a_new_turn_after_paging_up_goes_after_the_newest_page_and_shows_with_it(
    workspace: Path, tmp_path: Path
) -> None:
    """The newest page comes back above the new turn, without the new turn: the store has it
    already, and it showed twice before (a stored view, then the live one)."""
    async with _paging(workspace, write_script(tmp_path, [{"text": "done"}])) as (
        app,
        pilot,
        transcript,
    ):
        await _to_the_oldest(pilot, transcript)
        await type_keys(pilot, *"newest", "enter")
        await until(pilot, lambda: not app.main.turn_running and 71 in _positions(transcript))
        await until(pilot, lambda: all(view.display for view in transcript._mounted_turns()))
        await pilot.pause()
        mounted = transcript._mounted_turns()
        assert [view.position for view in mounted] == list(range(52, 72))
        assert [type(view) for view in mounted[:19]] == [StoredTurnView] * 19
        assert [view.request for view in mounted[-2:]] == ["request 70", "newest"]  # once
        assert transcript.scroll_y == transcript.max_scroll_y > 0


async def test_pages_are_read_from_the_store_off_the_apps_thread(workspace: Path) -> None:
    """Paging up past what was read ahead, and Ctrl+End back to the newest page, read their
    store pages on the app's thread (SQLite queries between two frames); both read them in
    a thread now, and page as before."""
    async with _paging(workspace) as (app, pilot, transcript):
        loader = transcript.loader
        assert loader is not None
        readers: list[tuple[int | None, bool]] = []

        def reading(before: int | None) -> Any:
            readers.append((before, threading.current_thread() is threading.main_thread()))
            return loader(before)

        transcript.loader = reading
        transcript._fetching = True  # no read ahead: each page is read as paging needs it
        await _to_the_oldest(pilot, transcript)
        transcript._fetching = False
        await _back_to_the_newest(pilot, transcript)
        assert not transcript.has_newer and transcript.has_older
    assert [before for before, _ in readers] == [51, 31, 11, None]
    assert not any(on_main for _, on_main in readers), readers


async def test_a_note_after_the_turns_stays_after_them_when_the_newest_page_comes_back(
    workspace: Path,
) -> None:
    """Ctrl+End after paging far up mounted the newest page after every other row: a note
    shown below the turns (the one saying no model is set up, say) went above them."""
    async with _paging(workspace) as (app, pilot, transcript):
        note = transcript.add_message("a note after the turns")
        await pilot.pause()
        assert transcript.children[-1] is note
        await _to_the_oldest(pilot, transcript)
        await _back_to_the_newest(pilot, transcript)
        assert transcript.children[-1] is note
        assert transcript.children.index(note) > transcript.children.index(
            transcript._mounted_turns()[-1]
        )


def _shown(transcript: Transcript) -> list[str]:
    """The transcript's text on screen, line by line, without its scrollbar."""
    region = transcript.scrollable_content_region
    strips = transcript.app.screen._compositor.render_strips()
    lines = ["".join(seg.text for seg in strip) for strip in strips]
    return [line[region.x : region.right] for line in lines[region.y : region.bottom]]


def _recording_frames(transcript: Transcript) -> list[list[str]]:
    """What each frame drawn from now on shows of the transcript, appended as it is drawn."""
    frames: list[list[str]] = []
    screen = transcript.screen
    draw = screen._compositor_refresh

    def drawn() -> None:
        draw()
        frames.append(_shown(transcript))

    screen._compositor_refresh = drawn  # type: ignore[method-assign]
    return frames


async def test_a_page_mounted_above_keeps_the_view_in_place_and_was_drawn_ahead(
    workspace: Path,
) -> None:
    session_id = _store_session(workspace, 70)
    app = vis_app(workspace, resume=session_id)
    async with app.run_test(size=(100, 30)) as pilot:
        await started(app, pilot)
        transcript = app.main.transcript
        await pilot.press("pageup")  # on the way up: the next older page is read ahead
        await until(pilot, lambda: len(transcript._ready) == 4)  # and drawn while idle
        ready = list(transcript._ready.values())
        transcript.has_older = False  # to the top without paging: to see the view before a page
        transcript.scroll_home(animate=False)
        await until(pilot, lambda: transcript.scroll_y == 0)
        await pilot.pause()
        before = _shown(transcript)
        oldest = _positions(transcript)[0]
        transcript.has_older = True
        frames = _recording_frames(transcript)
        assert await transcript.load_older() == 4
        await until(pilot, lambda: bool(frames))
        await pilot.pause()
        assert frames and all(frame == before for frame in frames)  # not one frame jumped
        assert _positions(transcript)[0] == oldest - 4
        assert transcript.scroll_y > 0
        assert _shown(transcript) == before  # the page went above the view: nothing jumped
        assert [v.position for v in ready] == list(range(oldest - 1, oldest - 5, -1))
        for view in ready:
            assert view.is_attached  # the views drawn ahead are the ones mounted
            kept = view._cache
            assert kept is not None
            fresh = view._draw(view.content_size.width, view)
            assert kept.strips == fresh.strips and kept.hits == fresh.hits
            assert view._cache is kept  # the layout used the lines drawn ahead


async def test_a_page_mounted_below_keeps_the_view_in_place_as_older_turns_go(
    workspace: Path,
) -> None:
    session_id = _store_session(workspace, 70)
    app = vis_app(workspace, resume=session_id)
    async with app.run_test(size=(100, 30)) as pilot:
        await started(app, pilot)
        transcript = app.main.transcript
        transcript.max_turns = 24
        while not transcript.has_newer:  # far enough up that the newest turns went
            await pilot.press("pageup")
            await until(pilot, lambda: not transcript._loading)
        below, transcript._below = transcript._below, []  # down without paging
        end = transcript.max_scroll_y - 40  # the newest turns show, above the closing message
        transcript.scroll_to(y=end, animate=False)
        await until(pilot, lambda: transcript.scroll_y == end)
        await pilot.pause()
        before = _shown(transcript)
        transcript._below = below
        transcript._schedule_predraw(0.01)  # the next newer page is drawn ahead as well
        nearest = {turn.turn_id for turn in below[-4:]}
        await until(pilot, lambda: nearest <= set(transcript._ready))
        ready = {turn_id: transcript._ready[turn_id] for turn_id in nearest}
        positions = _positions(transcript)
        frames = _recording_frames(transcript)
        assert await transcript.load_newer() == 4
        await until(pilot, lambda: bool(frames))
        await pilot.pause()
        assert _positions(transcript) == positions[4:] + list(
            range(positions[-1] + 1, positions[-1] + 5)
        )
        assert frames and all(frame == before for frame in frames)  # the oldest went unseen
        assert all(transcript.turns[turn_id] is view for turn_id, view in ready.items())


async def test_compact_after_paging_up_shows_its_fold_once_at_the_newest_turn_in_view(
    workspace: Path, tmp_path: Path
) -> None:
    """/compact while the person reads the oldest turns (the newest unmounted): the newest
    page comes back, scrolled to as a new turn is, and the fold shows once, after it (not in
    a turn, and not in one with an empty request); its key names the turns as one range."""
    from vis_tui.widgets.fold_row import FoldRow
    from vis_tui.widgets.turn import TurnView

    script = write_script(tmp_path, [{"text": "Gist of the talk."}])
    async with _paging(workspace, script) as (app, pilot, transcript):
        await _to_the_oldest(pilot, transcript)
        app.main.prompt.insert("/compact")
        await pilot.press("enter")
        # /compact answers after the model's gist: its note and fold may not be mounted yet
        await until(
            pilot,
            lambda: _displayed(transcript, "SystemMessage") and _displayed(transcript, FoldRow),
        )
        await until(pilot, lambda: not transcript.has_newer and transcript._hidden is None)
        await until(pilot, lambda: all(view.display for view in transcript._mounted_turns()))
        await pilot.pause()
        assert _positions(transcript) == list(range(51, 71))
        assert not [v for v in transcript.query(TurnView) if not v.request]
        (fold,) = transcript.query(FoldRow)
        assert fold.fold.key == "t1-t70" and fold.parent is transcript
        children = list(transcript.children)
        assert children.index(fold) > children.index(transcript._mounted_turns()[-1])
        newest = transcript._mounted_turns()[-1]
        if isinstance(newest, StoredTurnView):  # its story does not hold the fold as well
            newest = transcript.open_stored(newest)
            await pilot.pause()
        assert not newest.query(FoldRow)
        assert transcript.scroll_y == transcript.max_scroll_y > 0


async def test_a_note_vis_makes_on_its_own_leaves_a_person_reading_old_turns_where_they_are(
    workspace: Path, vis_home: Path, tmp_path: Path
) -> None:
    """An MCP server failing after the start is said in the transcript, unasked. A person
    paging through the oldest turns was brought back to the newest page and its end; the
    note now waits at the end, and is there when they come back."""
    import json

    from vis_tui.widgets.transcript import PlainMessage

    go = tmp_path / "go"
    waits = f"while [ ! -e '{go}' ]; do sleep 0.05; done; exit 3"  # fails when told to
    servers = {"late": {"command": "sh", "args": ["-c", waits]}}
    (vis_home / "mcp.json").write_text(json.dumps({"mcpServers": servers}))

    def notes() -> list[PlainMessage]:
        return [m for m in transcript.query(PlainMessage) if "'late' failed" in m.source]

    async with _paging(workspace) as (app, pilot, transcript):
        await _to_the_oldest(pilot, transcript)
        reading, scroll_y = _positions(transcript), transcript.scroll_y
        go.touch()
        await until(pilot, lambda: bool(notes()))
        await pilot.pause()
        assert _positions(transcript) == reading and transcript.has_newer
        assert transcript.scroll_y == scroll_y
        await _back_to_the_newest(pilot, transcript)
        assert len(notes()) == 1


async def test_a_command_ending_between_turns_leaves_a_person_reading_old_turns_where_they_are(
    workspace: Path, tmp_path: Path
) -> None:
    """A command the newest turn left running ends while the person reads the oldest turns:
    its line waits at the end, after that turn (the view stays), and shows there once they
    come back."""
    from vis_tui.widgets.after_turn import BackgroundNote

    from .test_background_note import START

    script = write_script(tmp_path, [{"code": START}, {"text": "Started."}])
    (workspace / ".gitignore").write_text("go\n")  # the test's signal: no file a block changed
    async with _paging(workspace, script) as (app, pilot, transcript):
        await type_keys(pilot, *"build", "enter")
        await until(pilot, lambda: transcript.last_answer == "Started.")
        await until(pilot, lambda: not app.main.turn_running)
        for _ in range(300):  # the turn of this run stays mounted: every page comes
            if _positions(transcript)[:1] == [1]:
                break
            await pilot.press("pageup")
        await until(pilot, lambda: transcript._predraw_timer is None)
        reading, scroll_y = _positions(transcript), transcript.scroll_y
        (workspace / "go").touch()
        await until(pilot, lambda: bool(transcript.query(BackgroundNote)))
        await pilot.pause()
        assert _positions(transcript) == reading and transcript.scroll_y == scroll_y
        (note,) = transcript.query(BackgroundNote)
        assert list(transcript.children)[-2:] == [transcript._mounted_turns()[-1], note]
        await pilot.press("ctrl+end")
        await until(pilot, lambda: transcript.scroll_y == transcript.max_scroll_y)
        assert len(transcript.query(BackgroundNote)) == 1
        assert transcript.region.contains_region(note.region)  # in view, whole


async def _send(app: VisApp, pilot: Any, transcript: Transcript, request: str) -> None:
    """Send ``request`` and wait until its turn ended and the store's copy was read back."""
    await type_keys(pilot, *request, "enter")
    await until(pilot, lambda: not app.main.turn_running and request in _requests(transcript))
    await until(
        pilot, lambda: not _not_rebuildable(transcript), seen=lambda: _not_rebuildable(transcript)
    )


def _not_rebuildable(transcript: Transcript) -> list[str]:
    """The ended turns shown that the transcript cannot rebuild from the store."""
    return [
        view.request
        for view in transcript._mounted_turns()
        if view.status is not None and view.turn_id not in transcript._stored
    ]


def _requests(transcript: Transcript) -> list[str]:
    return [view.request for view in transcript._mounted_turns()]


async def test_a_long_run_unmounts_its_oldest_turns_and_brings_them_back_on_the_way_up(
    workspace: Path, tmp_path: Path
) -> None:
    """The turns of the running session were never unmounted (1.7 MB each, and a resize drew
    them all): past :attr:`Transcript.max_turns`, a new turn unmounts the oldest ones, and
    PageUp and Ctrl+Home mount them again as they were."""
    answers = [{"text": f"answer {n}"} for n in range(1, 11)]
    app = vis_app(workspace, write_script(tmp_path, answers))
    async with app.run_test(size=(100, 30)) as pilot:
        await started(app, pilot)
        transcript = app.main.transcript
        transcript.max_turns = 6
        for n in range(1, 11):
            await _send(app, pilot, transcript, f"ask {n}")
            assert len(transcript._mounted_turns()) <= 6
        assert _requests(transcript) == [f"ask {n}" for n in range(5, 11)]
        assert transcript.has_older
        for _ in range(100):
            if _requests(transcript)[:1] == ["ask 1"]:
                break
            await pilot.press("pageup")
        await until(pilot, lambda: _requests(transcript)[:1] == ["ask 1"])
        mounted = transcript._mounted_turns()
        assert len(mounted) <= 6
        answered = [(view.request, view.last_answer) for view in mounted]
        assert answered == [(f"ask {n}", f"answer {n}") for n in range(1, len(mounted) + 1)]
        await pilot.press("ctrl+end")
        await until(pilot, lambda: _requests(transcript)[-1:] == ["ask 10"])
        await pilot.press("ctrl+home")
        await until(pilot, lambda: _requests(transcript)[:1] == ["ask 1"])
        await pilot.press("ctrl+end")
        await until(pilot, lambda: _requests(transcript)[-1:] == ["ask 10"])
        answered = [(view.request, view.last_answer) for view in transcript._mounted_turns()]
        assert answered[-1] == ("ask 10", "answer 10")


async def test_ctrl_home_after_a_new_turn_of_a_resumed_session_mounts_the_first_page_only(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One new turn after resuming a long session made Ctrl+Home mount every stored page on
    the way up (its live view could not be rebuilt): it jumps to the first page now."""
    async with _paging(workspace, write_script(tmp_path, [{"text": "done"}])) as (
        app,
        pilot,
        transcript,
    ):
        await _send(app, pilot, transcript, "newest")
        ahead = min(_positions(transcript)) - 2 * PAGE_TURNS  # what idle moments may draw
        made: list[int] = []
        init = StoredTurnView.__init__

        def counted(view: StoredTurnView, *args: Any, **kwargs: Any) -> None:
            init(view, *args, **kwargs)
            made.append(view.position)

        monkeypatch.setattr(StoredTurnView, "__init__", counted)
        await pilot.press("ctrl+home")
        await until(pilot, lambda: _positions(transcript)[:1] == [1])
        # turns 20 to 50 were never built on the way; the two pages above the newest ones may
        # be read and drawn ahead at idle moments (on a loaded machine, after the count began)
        assert ahead > 20 and not [p for p in made if 20 <= p < ahead], (ahead, made)
        await pilot.press("ctrl+end")
        await until(pilot, lambda: _requests(transcript)[-2:] == ["request 70", "newest"])


async def test_a_command_ending_after_its_turn_was_unmounted_shows_ended_when_it_comes_back(
    workspace: Path, tmp_path: Path
) -> None:
    """The copy a turn of this run is mounted again from was read when it ended: a command
    it left running that ends after the turn was unmounted is read into it too."""
    from .test_background_note import START

    script = [{"code": START}, {"text": "Started."}, {"text": "two"}, {"text": "three"}]
    app = vis_app(workspace, write_script(tmp_path, script))
    async with app.run_test(size=(100, 30)) as pilot:
        await started(app, pilot)
        transcript = app.main.transcript
        transcript.max_turns = 2
        for request in ("build", "ask 2", "ask 3"):
            await _send(app, pilot, transcript, request)
        assert _requests(transcript) == ["ask 2", "ask 3"]
        (stale,) = [turn for turn in transcript._above if turn.request == "build"]
        (workspace / "go").touch()
        await until(pilot, lambda: app.main.status_bar.background == 0)
        await until(pilot, lambda: transcript._above[-1] is not stale)
        for _ in range(20):
            if _requests(transcript)[:1] == ["build"]:
                break
            await pilot.press("pageup")
        await until(pilot, lambda: _requests(transcript)[:1] == ["build"])
        shown = transcript.as_text()
        assert "exit 2 after" in shown or "· exit 2" in shown, shown
        assert "running (pid" not in shown, shown
