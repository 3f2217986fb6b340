"""The private Textual, textual-serve and Rich hooks vis_tui overrides or extends still exist,
called as the overrides expect.

pyproject.toml pins each of them to the tested minor release; a release that renames or
reshapes one of these fails here, loudly, instead of quietly breaking stay-at-bottom, paging,
pastes, ``vis --web`` or the stripping of control codes."""

from __future__ import annotations

import inspect

import pytest
import rich.control
import textual._compositor
import textual.content
from textual.widget import Widget
from textual.widgets import TextArea
from textual_serve.app_service import AppService
from textual_serve.server import Server

from vis_tui.web import AppProcess, WebServer
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
    (AppService, AppProcess, "_open_app_process"),  # vis --web: a tab's app in its own session
    (Server, WebServer, "_make_app"),  # vis --web: the token routes and the Host check
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
    # and lifts a release through ``_anchor_released``, which our ``anchor()`` clears
    assert "self._anchor_released = False" in inspect.getsource(Widget.scroll_end)
    assert "not widget._anchor_released" in inspect.getsource(textual._compositor)
    assert "self._anchor_released = True" in inspect.getsource(Widget.release_anchor)


def test_textual_serve_still_has_what_the_web_server_calls() -> None:
    environment = inspect.signature(AppService._build_environment)
    assert list(environment.parameters) == ["self", "width", "height"]
    assert list(inspect.signature(Server._process_messages).parameters) == [
        *("self", "websocket", "app_service"),
    ]
    source = inspect.getsource(AppService)
    assert "self._process" in source and "self._stdin" in source


def test_the_control_code_tables_vis_extends_are_still_there() -> None:
    for table in (textual.content._CONTROL_STRIP_TRANSLATE, rich.control._CONTROL_STRIP_TRANSLATE):
        assert isinstance(table, dict) and table  # code point: replacement, as str.translate takes
