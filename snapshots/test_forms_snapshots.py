"""SVG snapshots of a vis.ask form with validation errors and of a vis.live view."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from textual.pilot import Pilot

from vis_core.events import LiveOpened, LiveUpdated
from vis_core.extension import forms as F
from vis_core.extension import live_nodes as N
from vis_core.extension.forms import Form
from vis_core.extension.live_nodes import to_plain
from vis_core.extension.live_updates import LiveOp, LiveUpdate
from vis_core.host import HostOptions
from vis_tui.app import VisApp
from vis_tui.screens.form import FormScreen

WORKSPACE = Path("/tmp/vis-snapshots/project")


def _app() -> VisApp:
    return VisApp(HostOptions(workspace=WORKSPACE), frozen=True)


async def _ready(pilot: Pilot[Any]) -> VisApp:
    app = pilot.app
    assert isinstance(app, VisApp)
    await asyncio.wait_for(app.ready.wait(), 20)
    await pilot.pause()
    return app


DEPLOY = Form(
    "Deploy a service",
    (
        F.heading("Target"),
        F.row(
            F.plaintext("service", is_required=True, min_length=3, placeholder="api"),
            F.select(
                "env",
                "Environment",
                options=[F.option("staging", "Staging"), F.option("prod", "Production")],
                is_required=True,
            ),
        ),
        F.password(
            "token",
            "Deploy token",
            is_required=True,
            description="Stored nowhere; used for this deploy only.",
        ),
        F.slider("replicas", min=1, max=5, default=2),
        F.checkbox("confirm", "I read the changelog", is_required=True),
    ),
    description="Ships the current build to the chosen environment.",
    submit_label="Deploy",
)


def test_form_with_validation_errors(snap_compare: Any) -> None:
    async def run(pilot: Pilot[Any]) -> None:
        app = await _ready(pilot)
        app.push_screen(FormScreen(DEPLOY, "deploy"))
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, FormScreen)
        await pilot.press(*"ap")
        screen.action_submit()
        await pilot.pause()

    assert snap_compare(_app(), terminal_size=(100, 40), run_before=run)


def _updates(*items: LiveUpdate) -> list[dict[str, Any]]:
    return [u.to_plain() for u in items]


def test_live_view(snap_compare: Any) -> None:
    async def run(pilot: Pilot[Any]) -> None:
        app = await _ready(pilot)
        assert app.session is not None
        sid = app.session.id
        nodes = (
            N.status("state", "Starting", "idle"),
            N.progress("bar", 12, label="Tests"),
            N.stat("counts"),
            N.steps(
                "plan",
                [N.step("lint", "Lint"), N.step("unit", "Unit tests"), N.step("e2e", "End-to-end")],
            ),
            N.table("jobs", ["Job", "State", "Time"], groups=[N.TableGroup("ci", "CI")]),
            N.output("log", "Log", default_expanded=True),
            N.link("links", [("Build #41", "https://ci.example.com/41")]),
            N.divider(),
            F.row(
                N.spinner("spin", "braille", label="watching"),
                N.button("retry", "Retry"),
                N.button("stop", "Stop", is_disabled=True),
            ),
            N.disclosure("more", "Environment", N.code("env", "PYTHON=3.12\nCI=1", "bash")),
        )
        app.main.handle_event(
            LiveOpened(sid, view_id="v1", title="CI for main", owner="ci", nodes=to_plain(nodes))
        )
        await pilot.pause()
        app.main.handle_event(
            LiveUpdated(
                sid,
                view_id="v1",
                updates=_updates(
                    LiveUpdate(
                        "state",
                        LiveOp.SET,
                        {"text": "Running tests", "tone": "running", "detail": "commit 3f2a9c1"},
                    ),
                    LiveUpdate("bar", LiveOp.SET, {"value": 7}),
                    LiveUpdate("counts", LiveOp.SET, {"label": "passed", "value": 212}),
                    LiveUpdate("counts", LiveOp.SET, {"label": "failed", "value": 1}),
                    LiveUpdate("plan", LiveOp.SET, {"id": "lint", "tone": "ok"}),
                    LiveUpdate(
                        "plan", LiveOp.SET, {"id": "unit", "tone": "running", "detail": "7/12"}
                    ),
                    LiveUpdate(
                        "jobs",
                        LiveOp.UPSERT,
                        {
                            "row_id": "lint",
                            "cells": ["lint", "ok", "4s"],
                            "tone": "ok",
                            "group": "ci",
                        },
                    ),
                    LiveUpdate(
                        "jobs",
                        LiveOp.UPSERT,
                        {
                            "row_id": "unit",
                            "cells": ["unit", "running", "1m 02s"],
                            "tone": "running",
                            "group": "ci",
                        },
                    ),
                    LiveUpdate(
                        "jobs",
                        LiveOp.UPSERT,
                        {
                            "row_id": "t1",
                            "cells": ["test_auth", "failed", "0.4s"],
                            "tone": "error",
                            "parent": "unit",
                        },
                    ),
                    LiveUpdate(
                        "log",
                        LiveOp.WRITE,
                        {"lines": ["collected 240 items", "tests/test_api.py ........"]},
                    ),
                    LiveUpdate(
                        "log",
                        LiveOp.WRITE,
                        {"lines": ["FAILED tests/test_auth.py::test_expiry"], "tone": "error"},
                    ),
                ),
            )
        )
        await pilot.pause()
        app.main.prompt.focus()
        await pilot.pause()

    assert snap_compare(_app(), terminal_size=(100, 44), run_before=run)
