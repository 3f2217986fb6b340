"""The welcome header is painted before the Host opens; what is typed meanwhile is kept."""

from __future__ import annotations

import asyncio
from pathlib import Path

from pilot_keys import type_keys

from vis_core.frontend import Frontend
from vis_core.model.turn import TurnStatus
from vis_tui.app import VisApp
from vis_tui.widgets.turn import TurnView
from vis_tui.widgets.welcome import WelcomeHeader

from .support import started, until, vis_app, write_script

LOCAL_MODEL = """model = "local/bench-model"
[providers.local]
base_url = "http://127.0.0.1:9/v1"
"""


def held_host(app_of: list[VisApp], release: asyncio.Event):
    """A core opener that waits for ``release`` (a slow start), then opens the real core."""

    async def open_core() -> Frontend:
        await release.wait()
        return await Frontend.open(app_of[0].options)

    return open_core


async def test_the_welcome_header_names_the_model_before_the_host_opens(
    workspace: Path, vis_home: Path
) -> None:
    (vis_home / "config.toml").write_text(LOCAL_MODEL, encoding="utf-8")
    release = asyncio.Event()
    apps: list[VisApp] = []
    app = vis_app(workspace, open_core=held_host(apps, release))
    apps.append(app)
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: bool(app.main.transcript.query(WelcomeHeader)))
        assert app.core is None and app.session is None  # the core is still opening
        early = app.main.transcript.query_one(WelcomeHeader)
        text = str(early.render())
        assert "local/bench-model" in text and "not trusted" in text
        assert "jailed: blocks" in text  # the jail line is there from the start: no jump
        release.set()
        await started(app, pilot)
        # the same header stays in place, saying what the Host says (here: the same)
        assert list(app.main.transcript.query(WelcomeHeader)) == [early]
        assert str(early.render()) == text


async def test_a_request_typed_before_the_session_is_ready_is_sent_whole_once_it_is(
    workspace: Path, tmp_path: Path
) -> None:
    release = asyncio.Event()
    apps: list[VisApp] = []
    script = write_script(tmp_path, [{"text": "the result is 4"}])
    app = vis_app(workspace, script, open_core=held_host(apps, release))
    apps.append(app)
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: app.main.prompt.has_focus)
        await type_keys(pilot, *"check the result", "enter")
        await pilot.pause()
        assert app.session is None  # typed and sent before the session is ready: it waits
        assert app.main.queue == ["check the result"]
        release.set()
        await started(app, pilot)
        await until(
            pilot,
            lambda: any(
                isinstance(view, TurnView) and view.request == "check the result"
                for view in app.main.transcript.turns.values()
            ),
        )
        assert app.session is not None and app.core is not None
        session_id, history = app.session.id, app.core.history
        await until(
            pilot,
            lambda: (
                [(turn.request, turn.status) for turn in history.turns_page(session_id)]
                == [("check the result", TurnStatus.COMPLETED)]
            ),
        )
        assert app.main.queue == []
