"""TUI test fixtures: a small app hosting the real main screen, fed with constructed events."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import closed_apps
import pytest
import textual_css_cache
from textual.app import App

from vis_core.events import Event
from vis_tui.screens.main import MainScreen
from vis_tui.widgets.paths import OpenPath

textual_css_cache.install()  # one parse of each stylesheet per process, for all its apps


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Iterator[None]:
    """Later tests' collections do not walk this one's apps (tests/closed_apps.py)."""
    yield
    closed_apps.release()


class Harness(App[None]):
    """The main screen without a Host: events are handed to it directly."""

    def __init__(self, workspace: Path) -> None:
        super().__init__()
        self.frozen = True
        self.main = MainScreen(workspace)
        self.opened: list[str] = []
        self.links: list[str] = []

    def on_mount(self) -> None:
        self.push_screen(self.main)

    def feed(self, events: list[Event]) -> None:
        for event in events:
            self.main.handle_event(event)

    def on_open_path(self, message: OpenPath) -> None:
        self.opened.append(message.path)

    def action_open_path(self, path: str) -> None:
        self.opened.append(path)

    def action_open_link(self, url: str) -> None:
        self.links.append(url)


@pytest.fixture
def harness(workspace: Path) -> Harness:
    return Harness(workspace)
