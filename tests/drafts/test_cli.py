"""``vis run --draft`` and ``vis drafts``: a turn in a draft, reviewed, approved or discarded
from a shell; approval by the model needs ``--allow-approve``."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from cli_support import script, vis

from vis_core.cli import main

from .conftest import git, make_repo

WRITE = {"code": 'open("b.txt", "w").write("from the run\\n")'}


def test_vis_run_in_a_draft_leaves_the_workspace_and_vis_drafts_approves_it(
    workspace: Path,
    tmp_path: Path,
    vis_home: Path,
    jail_off: None,
    capsys: pytest.CaptureFixture[str],
) -> None:
    repo = make_repo(workspace)
    responses = script(tmp_path, [WRITE, {"text": "done"}])
    ran = vis(
        "run",
        "--draft",
        "--provider",
        "scripted",
        "--script",
        str(responses),
        "edit b",
        cwd=repo,
        env_home=vis_home,
    )
    assert ran.returncode == 0, ran.stderr
    assert "working in draft" in ran.stderr and "vis drafts approve" in ran.stderr
    entered = next(line for line in ran.stderr.splitlines() if "✎ Entered draft" in line)
    assert str(vis_home) in entered  # its folder on the line, not cut at 80 columns
    assert "b.txt" in ran.stderr
    assert (repo / "b.txt").read_text() == "bee\n"

    listed = _drafts(capsys)
    assert listed.returncode == 0 and "1 file " in listed.stdout and "worktree" in listed.stdout
    label = listed.stdout.split()[0]

    approved = vis("drafts", "approve", label, "-m", "the run's edit", cwd=repo, env_home=vis_home)
    assert approved.returncode == 0, approved.stderr
    assert (repo / "b.txt").read_text() == "from the run\n"
    assert git(repo, "log", "-1", "--format=%s") == "the run's edit"
    assert _drafts(capsys).stdout.strip() == "No drafts."


def test_the_review_line_of_a_draft_run_is_a_command_a_shell_runs(
    tmp_path: Path, vis_home: Path
) -> None:
    """A folder with a space and ``$`` in its name (no git: the draft is a copy): the review
    line, pasted into a shell, shows the run's change."""
    folder = tmp_path / "my $work dir"
    folder.mkdir()
    (folder / "b.txt").write_text("bee\n")
    responses = script(tmp_path, [WRITE, {"text": "done"}])
    ran = vis(
        "run", "--draft", "--provider", "scripted", "--script", str(responses), "edit b",
        cwd=folder, env_home=vis_home,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    review = next(line for line in ran.stderr.splitlines() if "review:" in line)
    shown = subprocess.run(
        ["bash", "-c", review.split("review:", 1)[1]], capture_output=True, text=True
    )
    assert shown.returncode == 1, shown.stderr  # diff: the folders differ
    assert "+from the run" in shown.stdout and "-bee" in shown.stdout


def test_vis_run_refuses_the_models_approval_unless_allowed(
    workspace: Path,
    tmp_path: Path,
    vis_home: Path,
    jail_off: None,
    capsys: pytest.CaptureFixture[str],
) -> None:
    repo = make_repo(workspace)
    approve = {"code": WRITE["code"] + "\nprint(await draft_approve('ship'))"}
    responses = script(tmp_path, [approve, {"text": "done"}])
    refused = vis(
        "run",
        "--draft",
        "--provider",
        "scripted",
        "--script",
        str(responses),
        "x",
        cwd=repo,
        env_home=vis_home,
    )
    assert "does not approve drafts unless --allow-approve" in refused.stdout + refused.stderr
    assert (repo / "b.txt").read_text() == "bee\n"
    label = _drafts(capsys).stdout.split()[0]
    discarded = _drafts(capsys, "discard", label)
    assert discarded.returncode == 0, discarded.stderr

    responses = script(tmp_path, [approve, {"text": "done"}])
    allowed = vis(
        "run",
        "--draft",
        "--allow-approve",
        "--provider",
        "scripted",
        "--script",
        str(responses),
        "x",
        cwd=repo,
        env_home=vis_home,
    )
    assert allowed.returncode == 0, allowed.stderr
    assert (repo / "b.txt").read_text() == "from the run\n"
    assert "approved or discarded during the run" in allowed.stderr


def test_vis_drafts_names_an_unknown_draft(capsys: pytest.CaptureFixture[str]) -> None:
    done = _drafts(capsys, "approve", "nope")
    assert done.returncode == 1 and "no draft 'nope'" in done.stderr


GUARD = """
import vis_core.extension as vis


def guard(call):
    if call["args"][0]["message"] == "forbidden":
        return vis.block("that message is not allowed")
    return None


vis.register_extension(vis.Extension(
    name="approvalguard", description="Guards approvals.",
    op_hooks=[vis.OpHook("draft/approve", guard)],
))
"""


def test_vis_drafts_approve_runs_the_extensions_hooks_in_the_drafts_session(
    workspace: Path,
    tmp_path: Path,
    vis_home: Path,
    jail_off: None,
    capsys: pytest.CaptureFixture[str],
) -> None:
    repo = make_repo(workspace)
    (vis_home / "extensions").mkdir()
    (vis_home / "extensions" / "approvalguard.py").write_text(GUARD)
    responses = script(tmp_path, [WRITE, {"text": "done"}])
    ran = vis(
        "run",
        "--draft",
        "--provider",
        "scripted",
        "--script",
        str(responses),
        "edit b",
        cwd=repo,
        env_home=vis_home,
    )
    assert ran.returncode == 0, ran.stderr
    label = _drafts(capsys).stdout.split()[0]

    refused = vis("drafts", "approve", label, "-m", "forbidden", cwd=repo, env_home=vis_home)
    assert refused.returncode == 1 and "that message is not allowed" in refused.stderr
    assert (repo / "b.txt").read_text() == "bee\n"

    approved = vis("drafts", "approve", label, "-m", "fine", cwd=repo, env_home=vis_home)
    assert approved.returncode == 0, approved.stderr
    assert (repo / "b.txt").read_text() == "from the run\n"


def test_a_draft_whose_session_was_deleted_is_still_approved(
    workspace: Path, tmp_path: Path, vis_home: Path, jail_off: None
) -> None:
    from vis_core.drafts import Drafts
    from vis_core.store import Store

    repo = make_repo(workspace)
    store = Store(vis_home / "vis.db")
    draft = Drafts(store, vis_home).create(repo, "gone-session", "orphan")
    store.close()
    (Path(draft.root) / "b.txt").write_text("orphaned\n")

    approved = vis("drafts", "approve", "orphan", cwd=repo, env_home=vis_home)

    assert approved.returncode == 0, approved.stderr
    assert (repo / "b.txt").read_text() == "orphaned\n"


def _drafts(capsys: pytest.CaptureFixture[str], *args: str) -> subprocess.CompletedProcess[str]:
    """``vis drafts ARGS`` in this process (its VIS_HOME: the autouse fixture's), as ``vis``
    runs it; approvals, which run the drafts' sessions, go through ``vis`` itself."""
    capsys.readouterr()
    code = main(["drafts", *args])
    out, err = capsys.readouterr()
    return subprocess.CompletedProcess(["vis", "drafts", *args], code, out, err)


def test_a_draft_whose_workspace_is_gone_is_listed_so_and_discarded(
    workspace: Path, tmp_path: Path, vis_home: Path
) -> None:
    """Before, a draft whose workspace was deleted (every `vis replay` of a session that made
    a draft left one, made from its deleted copy) was listed 'unreadable (git ls-files
    failed … not a git repository …)', and `vis drafts discard` failed with a traceback
    ending 'git is not on PATH; install git' (found by a tester)."""
    gone = make_repo(tmp_path / "gone")
    responses = script(tmp_path, [WRITE, {"text": "done"}])
    ran = vis(
        "run", "--draft", "--provider", "scripted", "--script", str(responses), "edit b",
        cwd=gone, env_home=vis_home,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    shutil.rmtree(gone)

    listed = vis("drafts", cwd=workspace, env_home=vis_home)
    assert "its workspace is gone (`vis drafts discard` removes the draft)" in listed.stdout
    label = listed.stdout.split()[0]
    approve = vis("drafts", "approve", label, cwd=workspace, env_home=vis_home)
    assert approve.returncode == 1
    assert f"vis drafts: the workspace of draft {label}, {gone}, is gone: there is nothing" in (
        approve.stderr
    )
    removed = vis("drafts", "discard", label, cwd=workspace, env_home=vis_home)
    assert removed.returncode == 0, removed.stdout + removed.stderr
    assert removed.stdout == f"Discarded draft {label}; its workspace {gone} was gone.\n"
    assert removed.stderr == ""  # no traceback of a thread or of git
    assert vis("drafts", cwd=workspace, env_home=vis_home).stdout == "No drafts.\n"
    assert not any((vis_home / "drafts").iterdir())
