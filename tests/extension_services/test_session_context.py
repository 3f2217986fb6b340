"""``ctx`` results deep-merged into the model's ``session`` dict before each block."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vis_core.extension_host.session_context import clean_contribution, deep_merge

ALPHA = """
import vis_core.extension as vis

def ctx(env):
    vis.state["calls"] = vis.state.get("calls", 0) + 1
    return {
        "tasks": {"open": 2, "calls": vis.state["calls"], "session": env["session_id"]},
        "shared": {"a": 1, "both": "alpha"},
        "session_env": {"tools": {"alpha": True}},
        "engine_mode": "x",
        "session_title": "x",
        "id": "not-the-id",
    }

vis.register_extension(vis.Extension(name="alpha", description="A.", ctx=ctx))
"""

BETA = """
import vis_core.extension as vis

vis.register_extension(vis.Extension(
    name="beta", description="B.",
    ctx=lambda env: {"shared": {"b": 2, "both": "beta"}, "session_env": {"tools": {"beta": 1}}},
))
"""

FAILING = """
import vis_core.extension as vis

def boom(env):
    raise RuntimeError("ctx bug")

vis.register_extension(vis.Extension(name="failing", description="F.", ctx=boom))
"""

ODD = """
import vis_core.extension as vis

vis.register_extension(vis.Extension(
    name="odd", description="O.", ctx=lambda env: ["not", "a", "dict"],
))
"""

HIDDEN = """
import vis_core.extension as vis

vis.register_extension(vis.Extension(
    name="hidden", description="H.", activation=lambda env: False,
    ctx=lambda env: {"hidden": True},
))
"""

DUMP = "import json\nprint(json.dumps(session, sort_keys=True))"


async def test_ctx_results_merge_into_session(extension, scripted, workspace: Path):
    for name, source in (
        ("alpha", ALPHA),
        ("beta", BETA),
        ("failing", FAILING),
        ("odd", ODD),
        ("hidden", HIDDEN),
    ):
        extension(name, source)
    run = await scripted(
        [
            {"code": DUMP},
            {"code": "session['tasks'] = 'changed by the model'"},
            {"code": DUMP},
            {"text": "done"},
        ]
    )
    session = await run.session()
    ended = await session.submit("show the session")
    assert ended.error is None
    first, _, third = run.blocks()
    assert first.error is None, first.error
    data = json.loads(first.stdout)
    assert data["id"] == session.id and data["turn"] == 1
    assert data["workspace_root"] == str(workspace) and data["channel"] == "tui"
    assert data["tasks"] == {"open": 2, "calls": 1, "session": session.id}
    assert data["shared"] == {"a": 1, "b": 2, "both": "beta"}  # deep-merged, later wins
    assert data["env"] == {"tools": {"alpha": True, "beta": 1}}  # session_env nests under env
    for refused in ("engine_mode", "session_title", "session_env", "hidden"):
        assert refused not in data
    budget = data["utilization"]
    # the scripted model's input limit is unknown: the soft budget is 200k
    assert budget["model_input_limit"] is None and budget["auto_compress_above"] == 200_000
    # Vis rebuilds session before every block: ctx ran again, the model's edit is gone
    again = json.loads(third.stdout)
    assert again["tasks"]["calls"] == 3


def test_clean_contribution_refusals():
    assert clean_contribution("x", ["a"]) is None
    assert clean_contribution("x", {1: "a"}) is None
    assert clean_contribution("x", {"a": {1, 2}}) is None  # not plain data: nothing added
    assert clean_contribution("x", {"session_env": "flat", "ok": 1}) == {"ok": 1}
    assert clean_contribution("x", {"model": "m", "engine_": 1, "mine": {"k": 1}}) == {
        "mine": {"k": 1}
    }


@pytest.mark.parametrize(
    ("into", "extra", "expected"),
    [
        ({"a": {"x": 1}}, {"a": {"y": 2}}, {"a": {"x": 1, "y": 2}}),
        ({"a": 1}, {"a": {"y": 2}}, {"a": {"y": 2}}),
        ({"a": {"x": 1}}, {"a": 3}, {"a": 3}),
    ],
)
def test_deep_merge(into, extra, expected):
    assert deep_merge(into, extra) == expected
