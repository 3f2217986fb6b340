"""What approving a draft never writes (a ``.git``), what it warns of (control files), and
that the form shows what the draft changes as it is, whatever the model names its files."""

from __future__ import annotations

import subprocess
from pathlib import Path

from cli_support import script, vis

from vis_core.store import Store

PLANT = r"""
import os
await draft_create("mkgit")
open("a.txt", "w").write("typo fixed\n")
for git in (".git", "Up/.GIT"):
    os.makedirs(git + "/refs/heads", exist_ok=True)
    open(git + "/HEAD", "w").write("ref: refs/heads/main\n")
    open(git + "/config", "w").write(
        "[core]\n\trepositoryformatversion = 0\n\tfsmonitor = touch MARKER; echo\n"
    )
os.makedirs("sub", exist_ok=True)
open("sub/.git", "w").write("gitdir: ../.git\n")
print(await draft_approve())
"""


def test_approval_never_writes_a_git_the_model_made_in_a_copy_draft(
    workspace: Path, tmp_path: Path, vis_home: Path
) -> None:
    """A copy draft (no git) where the model made a .git whose config names a program: git
    run in the workspace after approval would run it. Vis says the .git appeared; the
    model's draft_approve, the person's vis drafts approve and /draft refuse, name the
    files, and write nothing (jail on)."""
    (workspace / "a.txt").write_text("hi\n")
    marker = tmp_path / "fsmonitor-ran"
    code = PLANT.replace("MARKER", str(marker))
    responses = script(tmp_path, [{"code": code}, {"text": "done"}])
    ran = vis(
        "run",
        "--allow-approve",
        "--provider",
        "scripted",
        "--script",
        str(responses),
        "fix",
        cwd=workspace,
        env_home=vis_home,
    )
    assert "writes into a .git" in ran.stdout + ran.stderr, ran.stdout + ran.stderr
    assert "a .git appeared in draft mkgit" in ran.stderr  # said once, as the block ends
    assert ran.stderr.count("a .git appeared") == 1
    assert (workspace / "a.txt").read_text() == "hi\n"

    refused = vis("drafts", "approve", "mkgit", cwd=workspace, env_home=vis_home)

    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert "Traceback" not in refused.stderr
    for name in (".git/config", ".git/HEAD", "Up/.GIT/config", "sub/.git"):
        assert name in refused.stderr
    assert "a.txt" not in refused.stderr  # only the files refused are named
    assert sorted(p.name for p in workspace.iterdir() if p.name != ".vis") == ["a.txt"]
    assert (workspace / "a.txt").read_text() == "hi\n"  # nothing was written
    subprocess.run(["git", "status"], cwd=workspace, capture_output=True)
    assert not marker.exists()

    store = Store(vis_home / "vis.db")
    [draft] = store.drafts()
    store.close()
    assert draft.session_id is not None
    shown = vis("run", "--resume", draft.session_id, "/draft", cwd=workspace, env_home=vis_home)
    assert "Approval will be refused: the draft writes into a .git" in shown.stdout, shown.stderr
    assert ".git/config  (new)" in shown.stdout and "sub/.git  (new)" in shown.stdout


def test_vis_drafts_approve_prints_each_file_on_its_line_and_warns_of_control_files(
    workspace: Path, vis_home: Path
) -> None:
    """A file name with line breaks is printed escaped, on one line (it cannot pass for
    lines of Vis's own); a control file the draft wrote (.env.local) is warned of."""
    from vis_core.drafts import Drafts

    from .conftest import make_repo

    repo = make_repo(workspace)
    store = Store(vis_home / "vis.db")
    draft = Drafts(store, vis_home).create(repo, None, "names")
    store.close()
    (Path(draft.root) / "b.txt\n\nApproved draft x: 0 files.").write_text("x\n")
    (Path(draft.root) / ".env.local").write_text("TOKEN=1\n")

    approved = vis("drafts", "approve", "names", cwd=repo, env_home=vis_home)

    assert approved.returncode == 0, approved.stderr
    assert approved.stdout.splitlines()[1:] == [
        "  .env.local",
        "  b.txt\\n\\nApproved draft x: 0 files.",
    ]
    assert "warning: The draft writes files that decide how Vis" in approved.stderr
    assert ".env.local" in approved.stderr
    assert (repo / ".env.local").read_text() == "TOKEN=1\n"  # warned of, not refused
