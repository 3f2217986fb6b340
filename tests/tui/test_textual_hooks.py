"""The private Textual hooks vis_tui overrides still exist, called as the overrides expect.

pyproject.toml pins Textual to the tested minor release; a release that renames or reshapes one
of these fails here, loudly, instead of quietly breaking stay-at-bottom, paging or pastes."""

from __future__ import annotations

import inspect

import pytest
import textual._compositor
from textual.widget import Widget
from textual.widgets import TextArea

from vis_tui.widgets.prompt import PromptInput
from vis_tui.widgets.steady_scroll import SteadyScroll
from vis_tui.widgets.stored_turn import StoredTurnView
from vis_tui.widgets.transcript import Transcript

OVERRIDES = [
    (Widget, Transcript, "watch_scroll_y"),  # paging as the transcript scrolls
    (Widget, SteadyScroll, "_size_updated"),  # the scroll kept when children are swapped
    (Widget, StoredTurnView, "_size_updated"),  # no second layout for a drawn leaf
    (TextArea, PromptInput, "_on_key"),  # completion menu, history, submit
    (TextArea, PromptInput, "_on_paste"),  # image drops and long pastes
]


@pytest.mark.parametrize(
    ("base", "ours", "name"), OVERRIDES, ids=lambda v: getattr(v, "__name__", v)
)
def test_an_overridden_textual_method_exists_with_our_signature(
    base: type, ours: type, name: str
) -> None:
    assert hasattr(base, name), (
        f"Textual's {base.__name__} no longer has {name}: {ours.__name__}.{name} is dead code"
    )
    theirs = inspect.signature(getattr(base, name))
    mine = inspect.signature(vars(ours)[name])
    assert list(theirs.parameters) == list(mine.parameters), f"{base.__name__}.{name}{theirs}"
    assert inspect.iscoroutinefunction(getattr(base, name)) == inspect.iscoroutinefunction(
        vars(ours)[name]
    )


def test_textual_still_anchors_through_the_anchored_attribute() -> None:
    # Transcript replaces ``_anchored`` with a property: short content starts at the top
    assert "self._anchored = anchor" in inspect.getsource(Widget.anchor)
    assert "widget._anchored" in inspect.getsource(textual._compositor)
    assert "self._anchored" in inspect.getsource(Widget.watch_scroll_y)
    assert isinstance(vars(Transcript)["_anchored"], property)
