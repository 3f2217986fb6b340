"""Pilot tests: vis.ask forms and vis.live views in the real app over a real Host."""

from __future__ import annotations

import asyncio
import contextvars
from pathlib import Path
from typing import Any

from pilot_keys import type_keys
from textual.widgets import Button, Checkbox, Input, Static
from tui.support import on_top, started, until, vis_app, write_script

from forms import served
from vis_core.extension import forms as F
from vis_core.extension import live_nodes as N
from vis_core.extension.context import CallContext
from vis_core.extension.forms import AnswerReason
from vis_core.extension.live import LiveView, live
from vis_core.interaction import FormRequest
from vis_core.model.activity import ActivityState
from vis_tui.app import VisApp
from vis_tui.screens.form import FormScreen, TuiFormPresenter
from vis_tui.widgets.activity import ActivityRow
from vis_tui.widgets.form import FieldWidget, RangeInput
from vis_tui.widgets.live import ConfirmStop, LiveViewWidget


def worker(app: VisApp, fn: Any) -> asyncio.Future[Any]:
    """Run ``fn`` as an extension call does: in its worker, bound to the app's session, its
    SDK calls served by the core on its loop."""
    assert app.core is not None and app.session is not None
    host = app.core._host  # the SDK's runtime is the core's own, behind the façade
    context = CallContext(
        app.session.id,
        host.space.root,
        host.space.project_root,
        owner="deploy",
        runtime=host.runtime,
    )
    return asyncio.ensure_future(served.in_worker(context, fn))


def _deploy_form() -> Any:
    return lambda: F.ask(
        "Deploy",
        [
            F.heading("Target"),
            F.row(
                F.plaintext("service", is_required=True),
                F.select("env", options=["staging", "prod"], is_required=True),
            ),
            F.password("token", is_required=True, min_length=4),
            F.slider("replicas", min=1, max=5),
            F.checkbox("confirm", "I checked the changelog", is_required=True),
        ],
        description="Ships the current build.",
    )


async def test_a_form_filled_and_submitted(workspace: Path) -> None:
    app = vis_app(workspace)
    async with app.run_test(size=(100, 40)) as pilot:
        await started(app, pilot)
        asking = worker(app, _deploy_form())
        await on_top(pilot, FormScreen)
        screen = app.screen
        assert isinstance(screen, FormScreen)
        await until(pilot, lambda: app.focused is screen.body.fields["service"].input)
        await type_keys(pilot, *"api")
        await pilot.click("#form-submit")
        await pilot.pause()
        assert set(screen.errors) == {"env", "token", "confirm"}
        summary = screen.query_one("#form-summary", Static)
        assert "Check these 3 fields: Env, Token, I checked the changelog" in str(summary.content)
        assert screen.body.fields["env"].has_class("-invalid")
        assert screen.body.fields["service"].value == "api"  # kept
        assert app.focused is screen.body.fields["env"].input
        screen.body.fields["env"].input.value = "prod"  # type: ignore[attr-defined]
        screen.body.fields["token"].input.focus()
        await type_keys(pilot, *"s3cret")
        token_input = screen.body.fields["token"].input
        assert isinstance(token_input, Input) and token_input.password
        screen.query_one(RangeInput).focus()
        await pilot.press("right", "right")
        screen.body.fields["confirm"].input.focus()
        await pilot.press("space")
        await pilot.press("ctrl+s")
        answer = await asking
    assert answer and answer["service"] == "api" and answer["env"] == "prod"
    assert answer.reveal("token") == "s3cret" and answer["replicas"] == 3 and answer["confirm"]


async def test_a_form_cancelled(workspace: Path) -> None:
    app = vis_app(workspace)
    async with app.run_test(size=(100, 40)) as pilot:
        await started(app, pilot)
        asking = worker(app, lambda: F.ask("Name?", [F.plaintext("name")]))
        await on_top(pilot, FormScreen)
        await type_keys(pilot, *"half typed")
        await pilot.press("escape")
        answer = await asking
        assert not isinstance(app.screen, FormScreen)
        assert answer.reason is AnswerReason.CANCELLED

        # not cancellable and no time limit, so nothing but the person can end it
        locked = worker(
            app, lambda: F.ask("Must", [F.plaintext("x")], is_cancellable=False, timeout_ms=0)
        )
        await on_top(pilot, FormScreen)
        assert not app.screen.query("#form-cancel")
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, FormScreen) and not locked.done()  # Esc only explains
        await pilot.press("y", "ctrl+s")
        answer = await locked
        assert answer.reason is None and answer["x"] == "y"
        await until(pilot, lambda: not isinstance(app.screen, FormScreen))


async def test_a_form_asked_from_a_context_that_does_not_know_the_app(workspace: Path) -> None:
    """An extension's vis.ask can be served from a worker's pipe, in a context Textual never
    set: the form still shows (its compose failed with NoActiveAppError) and answers."""
    app = vis_app(workspace)
    async with app.run_test(size=(100, 40)) as pilot:
        await started(app, pilot)
        request = FormRequest("r1", F.Form("Name?", [F.plaintext("name")]), None, "deploy")
        present = TuiFormPresenter(app).present(request)
        loop = asyncio.get_running_loop()
        asking = loop.create_task(present, context=contextvars.Context())  # knows no app
        await on_top(pilot, FormScreen)
        await type_keys(pilot, *"ada", "ctrl+s")
        assert await asking == {"name": "ada"}


TITLE = "Fix [WIP] [/] [@click=app.quit]now[/]"  # markup in an extension's text


async def test_titles_are_shown_as_written_not_read_as_markup(workspace: Path) -> None:
    """A form's title, a group's label and a live view's title reach the borders as text: a
    bracket neither hides words, nor breaks the form, nor makes an action."""
    app = vis_app(workspace)
    async with app.run_test(size=(100, 40)) as pilot:
        await started(app, pilot)
        pick = F.select("pick", options=[F.option("v", "V")], placeholder="lint [/]")
        group = F.group(F.plaintext("a"), pick, label=TITLE)
        asking = worker(
            app,
            lambda: F.ask(TITLE, [group], timeout_ms=0, submit_label=TITLE, cancel_label=TITLE),
        )
        await on_top(pilot, FormScreen)
        assert str(app.screen.query_one("#form-submit", Button).label) == TITLE
        assert str(app.screen.query_one("#form-cancel", Button).label) == TITLE
        dialog = app.screen.query_one("#form-dialog")
        assert dialog._border_title is not None and dialog._border_title.plain == TITLE
        prompt = app.screen.query_one("SelectCurrent Static#label", Static).render()
        assert (
            getattr(prompt, "plain", None) == "lint [/]"
        )  # the placeholder ended the app (MarkupError)
        box = app.screen.query_one(".group")
        assert box._border_title is not None and box._border_title.plain == TITLE
        await pilot.press("escape")
        await asking
        nodes = [
            N.status("s", "on"),
            N.output("log", TITLE),
            N.button("b", TITLE),
            N.disclosure("d", TITLE, N.status("in", TITLE)),
            F.checkbox("c", TITLE),
            F.select("pick", options=[F.option("v", TITLE)]),
            F.multiselect("many", options=[F.option("v", TITLE)]),
        ]
        opened = worker(app, lambda: live(TITLE, nodes))
        live_view = await opened
        await worker(app, lambda: live_view["log"].write("line"))  # the title is drawn again
        await until(pilot, lambda: bool(app.main.query(LiveViewWidget)))
        view = app.main.query_one(LiveViewWidget)
        assert view._border_title is not None and view._border_title.plain == TITLE
        # each label of a live view (and of a form's fields) is text: these ended the app
        await until(pilot, lambda: "(1 line)" in str(view.widgets["log"].title))
        assert str(view.widgets["log"].title) == f"{TITLE} (1 line)"
        assert str(view.widgets["b"].label) == str(view.widgets["d"].title) == TITLE
        assert str(view.query_one(Checkbox).label) == TITLE
        assert app.is_running


async def test_a_live_view_updated_and_stopped(workspace: Path) -> None:
    app = vis_app(workspace)
    async with app.run_test(size=(100, 40)) as pilot:
        await started(app, pilot)
        opened = worker(
            app,
            lambda: live(
                "Indexing",
                [
                    N.status("state", "Starting"),
                    N.progress("bar", 4),
                    N.button("skip", "Skip"),
                    N.output("log", default_expanded=True),
                ],
                flush_ms=20,
            ),
        )
        view: LiveView = await opened
        await until(pilot, lambda: bool(app.screen.query(LiveViewWidget)))
        widget = app.screen.query_one(LiveViewWidget)
        assert widget.border_title == "Indexing"

        def work() -> None:
            view["state"].set("Indexing files", tone="running")
            view["bar"].set(value=2)
            view["log"].write("a.py", "b.py")

        await worker(app, work)
        await until(pilot, lambda: "Indexing files" in str(widget.widgets["state"].content))
        await until(pilot, lambda: "50%" in str(widget.widgets["bar"].content))
        await until(pilot, lambda: "b.py" in str(widget.widgets["log"].lines.content))

        await pilot.click(widget.widgets["skip"])
        # the click's event, however loaded the machine; then none more within half a second
        first = await asyncio.to_thread(lambda: next(view.events(timeout=60)))
        events = [first, *await asyncio.to_thread(lambda: list(view.events(timeout=0.5)))]
        assert [(e.kind.value, e.node_id) for e in events] == [("button", "skip")]

        widget.focus()
        await pilot.press("escape")
        await on_top(pilot, ConfirmStop)
        await pilot.press("n")
        await pilot.pause()
        assert not view.is_interrupted and widget.state == "open"
        await pilot.press("escape")
        await on_top(pilot, ConfirmStop)
        await pilot.press("y")
        await until(pilot, lambda: view.is_interrupted)
        assert widget.state == "stopping"
        await worker(app, lambda: view.close("stopped", "Stopped after 2 of 4 files"))
        await until(pilot, lambda: widget.state == "closed")
        assert "Stopped after 2 of 4 files" in str(widget.query_one(".live-footer", Static).content)
        assert all(b.disabled for b in widget.query(Button))


async def test_panel_views_replace_by_key(workspace: Path) -> None:
    app = vis_app(workspace)
    async with app.run_test(size=(120, 40)) as pilot:
        await started(app, pilot)
        await worker(
            app, lambda: live("Queue 1", [N.status("s", "one")], placement="panel", key="queue")
        )
        await until(pilot, lambda: bool(app.screen.query("#live-panel")))
        await worker(
            app, lambda: live("Queue 2", [N.status("s", "two")], placement="panel", key="queue")
        )
        await until(
            pilot, lambda: [w.view_title for w in app.screen.query(LiveViewWidget)] == ["Queue 2"]
        )
        fields = app.screen.query(FieldWidget)
        assert not fields


async def test_the_side_panel_closes_and_opens_again(workspace: Path) -> None:
    app = vis_app(workspace)
    async with app.run_test(size=(120, 40)) as pilot:
        await started(app, pilot)
        await pilot.press("f3")  # no panel yet: a note, nothing breaks
        full = app.main.transcript.region.width
        await worker(app, lambda: live("Queue", [N.status("s", "one")], placement="panel"))
        await until(pilot, lambda: bool(app.screen.query("#live-panel")))
        panel = app.screen.query_one("#live-panel")
        await until(pilot, lambda: panel.region.width > 0)
        await until(pilot, lambda: app.main.transcript.region.width < full)
        await pilot.press("f3")
        assert not panel.display
        await until(pilot, lambda: app.main.transcript.region.width == full)  # it takes the room
        await worker(app, lambda: live("Builds", [N.status("s", "two")], placement="panel"))
        await until(pilot, lambda: len(panel.query(LiveViewWidget)) == 2)
        assert not panel.display  # a new view is announced, not forced open
        await pilot.press("ctrl+x", "p")
        assert panel.display
        assert app.main.prompt.has_focus


async def test_the_side_panel_leaves_the_transcript_most_of_a_narrow_terminal(
    workspace: Path,
) -> None:
    """At 80 columns the panel took 44, and the transcript wrapped at about 36. It takes a
    share of the width now (at most 44 columns, as before on a wide terminal)."""
    for columns, most in ((80, 30), (160, 44)):
        panel, transcript = await _panel_beside_transcript(workspace, columns)
        assert panel <= most, (columns, panel)
        assert transcript >= columns - most - 2


async def _panel_beside_transcript(workspace: Path, columns: int) -> tuple[int, int]:
    """The widths of a side panel and of the transcript beside it, ``columns`` wide."""
    app = vis_app(workspace)
    async with app.run_test(size=(columns, 30)) as pilot:
        await started(app, pilot)
        await worker(app, lambda: live("Queue", [N.status("s", "one")], placement="panel"))
        await until(pilot, lambda: bool(app.screen.query("#live-panel")))
        panel = app.screen.query_one("#live-panel")
        await until(pilot, lambda: panel.region.width > 0)
        return panel.region.width, app.main.transcript.region.width


async def test_enter_moves_to_the_next_field_and_submits_from_the_last(workspace: Path) -> None:
    """A form (of 30 fields, say) used to be sent by the first Enter, with the others empty;
    four fields show each Enter but the last one's moving on."""
    names = [f"field_{n:02}" for n in range(4)]
    app = vis_app(workspace)
    async with app.run_test(size=(100, 40)) as pilot:
        await started(app, pilot)
        asking = worker(app, lambda: F.ask("Many", [F.plaintext(name) for name in names]))
        await on_top(pilot, FormScreen)
        screen = app.screen
        assert isinstance(screen, FormScreen)
        await until(pilot, lambda: app.focused is screen.body.fields[names[0]].input)
        for n, name in enumerate(names[:-1]):
            await type_keys(pilot, *f"v{n}", "enter")
            await until(pilot, lambda name=name: app.focused is not screen.body.fields[name].input)
            assert app.focused is screen.body.fields[names[n + 1]].input
            assert not asking.done() and app.screen is screen
        await type_keys(pilot, *"last", "enter")
        answer = await asking
    assert answer.values == {names[0]: "v0", names[1]: "v1", names[2]: "v2", names[3]: "last"}


PANEL_JOB = '''
import vis_core.extension as vis


def panel(n: int, seconds: float | None) -> str:
    """Show n rows in a panel and wait for Go (``seconds`` at most; None: until pressed)."""
    view = vis.live(
        "Panel job",
        [vis.status("st", "waiting", "running"), vis.button("go", "Go"),
         vis.table("t", ["Name", "State"], [])],
        placement="panel", key="job",
    )
    for i in range(n):
        view["t"].upsert(f"r{i}", [f"row{i}", "ok"], tone="ok")
    for event in view.events(timeout=seconds):
        view["st"].set(text=f"got {event.kind}", tone="ok")
        break
    return "panel done"


vis.register_extension(vis.Extension(
    name="paneljob", alias="paneljob", description="A panel job.", symbols=[vis.Symbol(panel)],
))
'''


async def test_a_panel_job_ends_at_its_timeout_and_one_cancelled_stays_not_waiting(
    workspace: Path, tmp_path: Path, vis_home: Path
) -> None:
    """A tool waiting on events(timeout) of a panel view waited forever (its end never
    crossed back from the host); one cancelled with Esc left its panel open, "● waiting"."""
    (vis_home / "extensions").mkdir()
    (vis_home / "extensions" / "paneljob.py").write_text(PANEL_JOB, encoding="utf-8")
    responses: list[dict[str, object]] = [
        {"code": "print(await panel(3, 0.01))"},
        {"text": "first done"},
        {"code": "print(await panel(2, None))"},
        {"text": "never"},
    ]
    app = vis_app(workspace, write_script(tmp_path, responses))
    async with app.run_test(size=(120, 40)) as pilot:
        await started(app, pilot)

        def panel() -> LiveViewWidget | None:
            views = app.screen.query("#live-panel LiveViewWidget").results(LiveViewWidget)
            return next(iter(views), None)

        await type_keys(pilot, *"go", "enter")
        await until(pilot, lambda: app.main.transcript.last_answer == "first done")
        (row,) = app.main.query(ActivityRow)
        assert row.record.state is ActivityState.SUCCEEDED
        first = panel()
        assert first is not None and first.state == "open"  # a panel outlives its call

        await type_keys(pilot, *"again", "enter")
        await until(pilot, lambda: panel() not in (None, first))
        second = panel()
        assert second is not None
        await until(pilot, lambda: "waiting" in str(second.widgets["st"].content))
        await pilot.press("escape")
        await until(pilot, lambda: second.state == "closed", seen=lambda: second.state)
        assert second.has_class("-failed")
        assert "cancelled" in str(second.query_one(".live-footer", Static).content)


def test_a_live_table_shows_its_text_as_written() -> None:
    """A table's cells, columns and group labels are the extension's data, drawn as text: a
    cell 'lint [/]' ended the app (Rich read it as a closing markup tag), '[red]…' coloured."""
    from rich.console import Console

    from vis_tui.widgets.live import NodeView

    view = live("Jobs", [N.table("jobs", ["Job [/]", "[b]State"])])
    view["jobs"].group("ci", "[red]CI")
    view["jobs"].upsert("j1", ["lint [/]", "[bold]ok"], group="ci")
    view["jobs"].upsert("j2", ["unit", "[/x]"], parent="j1")
    console = Console(width=80, record=True)
    console.print(NodeView.draw(NodeView(view.node_of("jobs")), view.node_of("jobs")))
    text = console.export_text()
    for shown in ("Job [/]", "[b]State", "[red]CI", "lint [/]", "[bold]ok", "└ unit", "[/x]"):
        assert shown in text, text
