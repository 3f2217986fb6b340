"""Child sessions from the command line: ``vis run`` folds them under the call, ``--max-cost``
counts their cost, ``vis sessions`` lists them under their parent."""

from __future__ import annotations

import textwrap
from pathlib import Path

from cli_support import vis

from vis_core.store import Store

from .support import PRICES, script, write_config

GATHER = textwrap.dedent(
    """\
    import asyncio
    print(await asyncio.gather(run_session("look a"), run_session("look b")))
    """
)
LOOK = [{"code": 'print(await ls("."))'}, {"text": "looked"}]


def test_vis_run_folds_children_and_vis_sessions_lists_them(
    workspace: Path, vis_home: Path, tmp_path: Path
):
    path = script(
        tmp_path / "s.yaml",
        [{"code": GATHER}, {"text": "both looked"}],
        {"look a": LOOK, "look b": LOOK},
    )
    run = vis(
        "run", "--provider", "scripted", "--script", str(path), "look twice",
        cwd=workspace, env_home=vis_home,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    calls = [line for line in lines if "Child session" in line]
    assert len(calls) == 2, run.stdout
    assert lines.count("  ⋯ in the child session: 1 observation") == 2, run.stdout
    assert not any("List files" in line for line in lines)  # folded: counted, not listed
    assert sorted(calls) == [
        "✓ Child session · look a → looked",
        "✓ Child session · look b → looked",
    ]

    listed = vis("sessions", cwd=workspace, env_home=vis_home)
    assert listed.returncode == 0, listed.stderr
    rows = listed.stdout.splitlines()
    assert len(rows) == 3 and rows[0].endswith("  look twice")
    assert sorted(row.split(" turn  ", 1)[1] for row in rows[1:]) == ["↳ look a", "↳ look b"]
    with Store(vis_home / "vis.db") as store:  # `vis run --continue` goes on in the parent
        latest = store.latest_session(workspace.resolve())
    assert latest is not None and latest.title == "look twice"


def test_max_cost_counts_what_the_children_cost(workspace: Path, vis_home: Path, tmp_path: Path):
    """Each child's request costs $1.50, under the limit of $2 alone: the run stops once both
    are counted, while each child's block still waits (so neither can end on its own)."""
    write_config(vis_home, PRICES)
    expensive = [
        {
            "code": "import asyncio\nawait asyncio.Event().wait()  # until the run is stopped",
            "usage": {"input": 500_000, "output": 0},
        },
        {"text": "looked"},
    ]
    path = script(
        tmp_path / "s.yaml",
        [{"code": GATHER, "usage": {"input": 10, "output": 1}}, {"text": "never"}],
        {"look a": expensive, "look b": expensive},
    )
    run = vis(
        "run", "--provider", "scripted", "--script", str(path), "--max-cost", "2", "look twice",
        cwd=workspace, env_home=vis_home,
    )  # fmt: skip
    assert run.returncode == 4, run.stderr
    assert "vis run: stopped by --max-cost 2" in run.stderr
    with Store(vis_home / "vis.db") as store:
        (parent,) = [row for row in store.list_sessions() if row.parent_id is None]
        (turn,) = store.turns(parent.id)
        children = store.children(parent.id)
    assert turn.status == "cancelled" and len(children) == 2
    assert all(store_turn_status(vis_home, c.id) == "cancelled" for c in children)


def store_turn_status(vis_home: Path, session_id: str) -> str:
    with Store(vis_home / "vis.db") as store:
        (turn,) = store.turns(session_id)
        return turn.status
