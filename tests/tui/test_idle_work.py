"""The app does no work the screen does not show: no timer runs for a spinner that stands
still, and a key that changes only the prompt lays out nothing else (a layout of the screen
reflows the whole transcript)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pilot_keys import type_keys
from sample_turns import every_block_records, turn_events
from textual.app import App
from textual.widget import Widget
from textual.widgets import OptionList

from vis_core.extension.live_nodes import spinner, status
from vis_core.model.turn import TurnStatus
from vis_tui.screens.picker import PickerScreen, PickItem
from vis_tui.widgets.live import LiveViewWidget, SpinnerView

from .conftest import Harness
from .support import on_top, until


def layouts_asked(*widgets: Widget) -> list[str]:
    """From now on, the name of each of ``widgets`` whenever it asks for a new layout."""
    asked: list[str] = []
    for widget in widgets:
        refresh = widget.refresh

        def noting(
            *regions: Any, widget: Widget = widget, refresh: Any = refresh, **kw: Any
        ) -> Any:
            if kw.get("layout"):
                asked.append(type(widget).__name__)
            return refresh(*regions, **kw)

        widget.refresh = noting  # type: ignore[method-assign]
    return asked


def running_timers(widget: Widget) -> int:
    return sum(1 for timer in widget._timers if timer._task is not None)


async def test_typing_prose_lays_out_neither_the_menu_nor_the_chips(harness: Harness) -> None:
    async with harness.run_test(size=(100, 30)) as pilot:
        main = harness.main
        await pilot.pause()
        asked = layouts_asked(main.completion, main.chips)
        await type_keys(pilot, *"fix the tests")
        assert main.prompt.text == "fix the tests"
        assert asked == []  # the menu still opens on "/": test_prompt.py


async def test_filtering_a_picker_lays_its_list_out_once(tmp_path: Path) -> None:
    items = [PickItem(f"model-{n}", f"model-{n}") for n in range(40)]

    class Host(App[None]):
        def on_mount(self) -> None:
            self.push_screen(PickerScreen("Model", items))

    app = Host()
    async with app.run_test(size=(100, 40)) as pilot:
        picker = await on_top(pilot, PickerScreen)
        listing = picker.query_one(OptionList)
        asked = layouts_asked(listing)
        await type_keys(pilot, "1")
        assert [o.id for o in listing.options] == [
            f"model-{n}" for n in (1, *range(10, 20), 21, 31)
        ]
        # Textual's own layouts (its size, its scroll bars) stay; one per row added is gone
        assert len(asked) < len(listing.options)


async def test_a_spinner_turns_only_while_active(tmp_path: Path) -> None:
    class Host(App[None]):
        def compose(self) -> Any:
            yield LiveViewWidget("v1", "Build", (spinner("s", label="building"), status("t", "x")))

    app = Host()
    async with app.run_test(size=(80, 20)) as pilot:
        await pilot.pause()
        view = app.query_one(LiveViewWidget)
        turning = view.query_one(SpinnerView)
        assert running_timers(turning) == 1
        view.close_view("done", None)  # its spinner stops: a ✓ stays
        await pilot.pause()
        assert running_timers(turning) == 0
        assert str(turning.visual).startswith("✓")
        turning.show(spinner("s", label="again"))  # active again: it turns again
        assert running_timers(turning) == 1


async def test_a_running_activity_spins_without_a_layout(harness: Harness, workspace: Path) -> None:
    harness.frozen = False  # its spinner turns
    async with harness.run_test(size=(100, 60)) as pilot:
        records = every_block_records(str(workspace))
        harness.feed(turn_events("s", "t1", "build", "", records, status=TurnStatus.RUNNING))
        await pilot.pause()
        header = harness.main.transcript.turns["t1"].rows["a11"].query_one(".activity-header")
        first = str(header.visual)
        asked = layouts_asked(header)
        await until(pilot, lambda: str(header.visual) != first)  # its glyph turned
        assert asked == []
