"""`vis run "/command"` in a new session leaves no session for what the command only showed
(`/undo` without --continue, `/context`), keeps one for what it kept (`/goal TEXT`), and
`--continue` resumes the latest session with work in it."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from cli_support import script, vis

from vis_core.store import Store


def _run(workspace: Path, vis_home: Path, s: Path, *args: str):
    return vis(
        "run", "--provider", "scripted", "--script", str(s), *args, cwd=workspace, env_home=vis_home
    )


def _sessions(vis_home: Path) -> list[tuple[str, int]]:
    with Store(vis_home / "vis.db") as store:
        return [(row.title, row.turn_count) for row in store.list_sessions()]


def test_undo_without_continue_leaves_no_session_and_continue_then_undoes(
    workspace: Path, vis_home: Path, tmp_path: Path
) -> None:
    subprocess.run(["git", "init", "-q"], cwd=workspace, check=True)
    (workspace / "f.txt").write_text("orig\n")
    change = [{"code": 'open("f.txt", "w").write("changed\\n")'}, {"text": "changed it"}]
    ok = script(tmp_path, [{"text": "ok"}])
    alone = _run(workspace, vis_home, ok, "/undo")  # no session yet: nothing to point to
    assert alone.returncode == 1 and "--continue" not in alone.stderr, alone.stderr
    assert _run(workspace, vis_home, script(tmp_path, change), "change f").returncode == 0
    forgot = _run(workspace, vis_home, ok, "/undo")
    assert forgot.returncode == 1, forgot.stderr
    assert "`vis run --continue /undo`" in forgot.stderr  # says where it went wrong
    assert _sessions(vis_home) == [("change f", 1)]  # no empty session above the real one
    undone = _run(workspace, vis_home, ok, "--continue", "/undo")
    assert undone.returncode == 0, undone.stderr
    assert (workspace / "f.txt").read_text() == "orig\n"


def test_the_continue_hint_is_a_command_a_shell_runs_as_it_reads(
    vis_home: Path, tmp_path: Path
) -> None:
    """A request and a ``-C`` folder with quotes, spaces, ``$`` and backquotes in them: a shell
    reads the hint as the very command that goes on in that workspace's latest session."""
    workspace = tmp_path / """it's "my" $HOME `dir`"""
    workspace.mkdir()
    s = script(tmp_path, [{"text": "ok"}])
    assert _run(tmp_path, vis_home, s, "-C", str(workspace), "hi").returncode == 0
    request = """/undo 1 it's "$HOME" `x`"""
    forgot = _run(tmp_path, vis_home, s, "-C", str(workspace), request)
    assert forgot.returncode == 1, forgot.stderr
    hint = re.search(r"ran in a new session; `(.*)` runs it in", forgot.stderr)
    assert hint is not None, forgot.stderr
    words = subprocess.run(  # the words a shell reads
        ["bash", "-c", f'set -- {hint[1]}; printf "%s\\0" "$@"'],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split("\0")[:-1]
    assert words == ["vis", "run", "--continue", "-C", str(workspace), request]


def test_a_command_keeps_a_new_session_only_for_what_it_kept(
    workspace: Path, vis_home: Path, tmp_path: Path
) -> None:
    ok = script(tmp_path, [{"text": "ok"}])
    assert _run(workspace, vis_home, ok, "hi").returncode == 0
    for command in ("/context", "/goal"):
        shown = _run(workspace, vis_home, ok, command)
        assert shown.returncode == 0, shown.stderr
    assert _sessions(vis_home) == [("hi", 1)]
    assert _run(workspace, vis_home, ok, "/goal finish the parser").returncode == 0
    assert len(_sessions(vis_home)) == 2  # the goal is kept with its session
    goal = _run(workspace, vis_home, ok, "--continue", "/goal")
    assert goal.returncode == 0 and "finish the parser" in goal.stdout, goal.stderr
