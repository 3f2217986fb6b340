"""Live view nodes and updates, the view handle, and vis.testing.LiveRecorder."""

from __future__ import annotations

import threading

import pytest

from vis_core.extension import forms as F
from vis_core.extension import live_nodes as N
from vis_core.extension.forms import FormDeclarationError
from vis_core.extension.live import LiveEventKind, LiveRecorder, live
from vis_core.extension.live_nodes import Tone, from_plain, to_plain
from vis_core.extension.live_updates import LiveUpdateError


def _every_node() -> list[object]:
    return [
        N.status("state", "Starting", "running", detail="queue"),
        N.progress("bar", 10),
        N.stat("counts", "files", 0),
        N.steps("plan", [N.step("fetch", "Fetch"), N.step("build", "Build")]),
        N.output("log", "Log", default_expanded=True),
        N.table("jobs", ["Job", "State"], groups=[N.TableGroup("ci", "CI")]),
        N.link("links", ["https://example.com"]),
        F.paragraph("Hello", id="para"),
        F.heading("Title", 3, id="head"),
        N.code("src", "x = 1", "python"),
        N.divider(),
        N.spinner("spin", "dots"),
        N.button("retry", "Retry"),
        N.disclosure("more", "Details", N.status("inner", "deep")),
        F.row(N.button("ok", "OK"), F.column(F.plaintext("query")), id="actions"),
    ]


def test_every_node_updates_and_the_state_follows() -> None:
    with LiveRecorder() as recorder:
        view = live("Build", _every_node())
        view["state"].set("Building", tone="running", detail=None)
        view["bar"].set(value=4, total=8)
        view["bar"].set(done=True)
        view["counts"].set("files", 3).set("errors", 1)
        view["counts"].remove("errors")
        view["plan"].set("fetch", tone="ok").set("test", "Test", tone="running")
        view["plan"].remove("build")
        view["log"].write("one\ntwo", tone="warn").write("three")
        view["jobs"].group("cd", "CD")
        view["jobs"].upsert("j1", ["lint", "ok"], tone="ok", group="ci")
        view["jobs"].upsert("j2", ["unit", "running"], parent="j1")
        view["jobs"].upsert("j1", ["lint", "done"], group="ci")
        view["jobs"].select("j2")
        view["links"].add("https://vis.dev/run/1", "Run 1")
        view["para"].set("Bye")
        view["head"].set("New title", level=2)
        view["src"].set("x = 2")
        view["spin"].set(is_active=False)
        view["retry"].set(is_disabled=True)
        view["more"].set(is_expanded=True)
        view["inner"].set("changed", tone="ok")
        view.add(N.status("late", "added"), after="state")
        view.add(N.button("cancel", "Cancel"), parent="actions")
        view.add(N.button("help", "Help"), after="ok")
        view.drop("spin")
        view.close("done", "All good")
    rec = recorder.view
    assert rec.closed and rec.reason == "done" and rec.summary == "All good"
    assert rec.node("state") == N.Status("state", "Building", Tone.RUNNING, None)
    assert rec.node("bar") == N.Progress("bar", 8, 4, True)
    assert rec.node("counts").items == (N.StatItem("files", 3),)
    plan = rec.node("plan").items
    assert [(s.id, s.label, s.tone) for s in plan] == [
        ("fetch", "Fetch", Tone.OK),
        ("test", "Test", Tone.RUNNING),
    ]
    assert [(line.text, line.tone) for line in rec.node("log").lines] == [
        ("one", Tone.WARN),
        ("two", Tone.WARN),
        ("three", None),
    ]
    jobs = rec.node("jobs")
    assert [g.id for g in jobs.groups] == ["ci", "cd"]
    assert [(r.id, r.cells, r.parent) for r in jobs.rows] == [
        ("j1", ("lint", "done"), None),
        ("j2", ("unit", "running"), "j1"),
    ]
    assert jobs.selected == "j2"
    assert rec.node("links").links[-1] == N.LinkItem("https://vis.dev/run/1", "Run 1")
    assert rec.node("para").text == "Bye" and rec.node("head").level == 2
    assert rec.node("inner").text == "changed" and rec.node("more").is_expanded
    assert [N.node_id(n) for n in rec.nodes][:2] == ["state", "late"]
    assert [N.node_id(n) for n in rec.node("actions").fields] == ["ok", "help", None, "cancel"]
    assert "spin" not in [N.node_id(n) for n in N.walk(rec.nodes)]
    assert rec.ops("bar") == [("bar", "set"), ("bar", "set")]
    assert from_plain(to_plain(rec.nodes)) == rec.nodes


def test_misuse_is_refused_where_it_happens() -> None:
    view = live(
        "Check",
        [N.status("s"), N.output("log"), N.table("t", ["a"]), N.divider("d"), N.progress("p", 4)],
    )
    with pytest.raises(LiveUpdateError, match=r"status 's' has no \.write\(\); it has \.set\(\)"):
        view["s"].write("x")
    with pytest.raises(LiveUpdateError, match=r"status 's'.set\(\) takes text, tone, detail"):
        view["s"].set(colour="red")
    with pytest.raises(LiveUpdateError, match="tone must be one of"):
        view["s"].set(tone="purple")
    with pytest.raises(LiveUpdateError, match=r"has 2 cells for 1 columns"):
        view["t"].upsert("r", ["a", "b"])
    with pytest.raises(LiveUpdateError, match=r"no group 'g'; add it with \.group"):
        view["t"].upsert("r", ["a"], group="g")
    with pytest.raises(LiveUpdateError, match="divider 'd' has no .set"):
        view["d"].set()
    with pytest.raises(LiveUpdateError, match="text must be text, got None"):
        view["s"].set(None)
    with pytest.raises(LiveUpdateError, match="tone must be one of"):
        view["s"].set(tone=None)  # a status always has a tone
    with pytest.raises(LiveUpdateError, match="value must be a number, got None"):
        view["p"].set(value=None)
    with pytest.raises(KeyError, match="no node 'nope'"):
        view["nope"]
    with pytest.raises(LiveUpdateError, match="already has a node 's'"):
        view.add(N.status("s"))
    view.close()
    with pytest.raises(RuntimeError, match="is closed"):
        view["s"].set("late")


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: live("", []), "needs a title"),
        (lambda: live("T", [], placement="side"), "placement must be 'inline' or 'panel'"),
        (lambda: live("T", [], key="k"), "key names a panel view"),
        (lambda: live("T", [], flush_ms=-5), "flush_ms must be"),
        (lambda: live("T", [], flush_ms=True), "flush_ms must be"),
        (lambda: live("T", [N.status("a"), N.button("a")]), "two nodes have the id 'a'"),
        (lambda: live("T", ["text"]), "is not a live view component"),
        (lambda: N.status("", "x"), "needs an id"),
        (lambda: N.spinner("s", "wobble"), "variant must be one of"),
        (lambda: N.table("t", []), "needs at least one column"),
        # what a widget draws as text or as a number: each of these ended the TUI when drawn
        (lambda: N.status("s", None), "status 's': text must be text, got None"),
        (lambda: N.status("s", "x", detail=5), "detail must be text or None, got 5"),
        (lambda: N.progress("p", "10"), "progress 'p': total must be a number above 0"),
        (lambda: N.progress("p", value=None), "progress 'p': value must be a number, got None"),
        (lambda: N.progress("p", value=float("nan")), "value must be a number, got nan"),
        (lambda: N.button("b", 5), "button 'b': label must be text, got 5"),
        (lambda: N.output("o", None), "output 'o': label must be text"),
        (lambda: N.disclosure("d", None), "disclosure 'd': label must be text"),
        (lambda: N.code("c", None), "code 'c': text must be text"),
        (lambda: N.link("l", [{"url": "https://x", "label": 5}]), "link: label must be text"),
        (lambda: F.paragraph(None), "paragraph: text must be text"),
        (lambda: F.heading(5), "heading: text must be text"),
        (lambda: F.checkbox("c", 5), "field 'c': label must be text"),
        (lambda: F.option("v", 5), "option 'v': label must be text"),
    ],
)
def test_wrong_views_say_what_to_fix(call: object, message: str) -> None:
    with pytest.raises(FormDeclarationError, match=message):
        call()  # type: ignore[operator]


def test_output_keeps_the_newest_lines() -> None:
    view = live("Log", [N.output("log")])
    view["log"].write(*[str(i) for i in range(N.OUTPUT_LINE_LIMIT + 5)])
    node = view.node_of("log")
    assert len(node.lines) == N.OUTPUT_LINE_LIMIT and node.dropped == 5
    assert node.lines[0].text == "5"


def test_person_events_reach_the_extension() -> None:
    seen = []
    with LiveRecorder() as recorder:
        view = live(
            "Ask",
            [N.button("go", "Go"), F.plaintext("query"), F.password("token")],
            on_event=seen.append,
        )
        recorder.press("go")
        recorder.type("query", "needle")
        recorder.type("token", "hunter22")
        events = list(view.events(timeout=0.01))
        assert [(e.kind, e.node_id) for e in events] == [
            (LiveEventKind.BUTTON, "go"),
            (LiveEventKind.INPUT, "query"),
            (LiveEventKind.INPUT, "token"),
        ]
        assert seen == events
        values = view.values()
        assert values["query"] == "needle" and values["token"].reveal() == "hunter22"
        assert "hunter22" not in repr(values)
        assert not view.is_interrupted
        recorder.stop()
        assert view.is_interrupted
        assert view.sleep(5) is False  # returns at once when interrupted


def test_sleep_returns_early_when_stopped_from_another_thread() -> None:
    with LiveRecorder() as recorder:
        view = live("Wait", [N.status("s")])
        timer = threading.Timer(0.05, recorder.stop)
        timer.start()
        assert view.sleep(30) is False
        timer.join()


def test_events_end_when_the_view_closes() -> None:
    view = live("Close", [N.button("b")])
    threading.Timer(0.05, view.close).start()
    assert list(view.events()) == []


def test_the_context_manager_closes_with_the_error() -> None:
    with LiveRecorder() as recorder, pytest.raises(ValueError):
        with live("Fails", [N.status("s")]):
            raise ValueError("disk full")
    assert recorder.view.reason == "error" and recorder.view.summary == "ValueError: disk full"
