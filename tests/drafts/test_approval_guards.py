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


def bare_plant(label: str, folder: str, marker: Path) -> str:
    """A block that works in draft ``label`` and makes ``folder`` of it what git takes as a
    bare repository (HEAD, objects/, refs/) whose config runs a program at `git status`."""
    config = (
        "[core]\\n\\trepositoryformatversion = 0\\n\\tbare = false\\n\\tworktree = .\\n"
        f'\\tfsmonitor = \\"touch {marker}; false\\"\\n'
    )
    return (
        "import os\n"
        f"await draft_create({label!r})\n"
        f"os.makedirs({folder!r}, exist_ok=True)\n"
        f"os.chdir({folder!r})\n"
        'os.makedirs("objects/info"); os.makedirs("refs/heads")\n'
        'open("objects/info/.keep", "w").write(""); open("refs/heads/.keep", "w").write("")\n'
        'open("HEAD", "w").write("ref: refs/heads/main\\n")\n'
        f'open("config", "w").write("{config}")\n'
        'open("a.txt", "w").write("tidied\\n")\n'
    )


BARE_FILES = ("HEAD", "config", "objects/info/.keep", "refs/heads/.keep")


def test_approval_never_makes_a_bare_repository_of_a_copy_drafts_top(
    workspace: Path, tmp_path: Path, vis_home: Path
) -> None:
    """A copy draft (no git) whose top the model made a bare repository (HEAD, objects/,
    refs/, and a config naming a program): git status in the workspace after approval would
    run it. Vis says a git repository appeared in the draft; the model's draft_approve and
    the person's vis drafts approve refuse, name the files and write nothing (jail on)."""
    (workspace / "a.txt").write_text("hi\n")
    marker = tmp_path / "fsmonitor-ran"
    code = bare_plant("tidy", ".", marker) + "print(await draft_approve())\n"
    responses = script(tmp_path, [{"code": code}, {"text": "Tidied a.txt."}])
    ran = vis(
        "run",
        "--allow-approve",
        "--provider",
        "scripted",
        "--script",
        str(responses),
        "tidy a.txt",
        cwd=workspace,
        env_home=vis_home,
    )
    said = ran.stdout + ran.stderr
    assert "makes a git repository of the top folder" in said, said
    assert (
        "a git repository (HEAD, objects/ and refs/ git takes as one) appeared in draft tidy"
        in (ran.stderr)
    )

    refused = vis("drafts", "approve", "tidy", cwd=workspace, env_home=vis_home)

    assert refused.returncode == 1, refused.stdout + refused.stderr
    for name in BARE_FILES:
        assert name in refused.stderr
    assert "a.txt" not in refused.stderr  # the files that make the repository are named
    assert sorted(p.name for p in workspace.iterdir() if p.name != ".vis") == ["a.txt"]
    assert (workspace / "a.txt").read_text() == "hi\n"
    subprocess.run(["git", "status"], cwd=workspace, capture_output=True)
    assert not marker.exists()


def test_approval_never_makes_a_bare_repository_of_a_folder_in_a_git_draft(
    workspace: Path, tmp_path: Path, vis_home: Path
) -> None:
    """A git workspace, its worktree draft: the model makes tools/ a bare repository. The
    person's vis drafts approve refuses, commits nothing, and /draft says it will."""
    from .conftest import git, make_repo

    repo = make_repo(workspace)
    (repo / "tools").mkdir()
    (repo / "tools" / "t.py").write_text("x = 1\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "tools")
    head = git(repo, "rev-parse", "HEAD")
    marker = tmp_path / "fsmonitor-ran"
    code = bare_plant("evil", "tools", marker)
    responses = script(tmp_path, [{"code": code}, {"text": "done"}])
    vis(
        "run",
        "--provider",
        "scripted",
        "--script",
        str(responses),
        "go",
        cwd=repo,
        env_home=vis_home,
    )

    refused = vis("drafts", "approve", "evil", cwd=repo, env_home=vis_home)

    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert "makes a git repository of tools/" in refused.stderr
    for name in BARE_FILES:
        assert f"tools/{name}" in refused.stderr
    assert git(repo, "rev-parse", "HEAD") == head  # nothing committed
    assert sorted(p.name for p in (repo / "tools").iterdir()) == ["t.py"]
    subprocess.run(["git", "status"], cwd=repo / "tools", capture_output=True)
    assert not marker.exists()
    store = Store(vis_home / "vis.db")
    [draft] = store.drafts()
    store.close()
    assert draft.session_id is not None
    shown = vis("run", "--resume", draft.session_id, "/draft", cwd=repo, env_home=vis_home)
    assert "Approval will be refused: the draft makes a git repository of `tools/`" in (
        shown.stdout
    ), shown.stdout + shown.stderr


def test_a_project_with_a_head_file_or_a_refs_folder_is_approved_as_before(
    workspace: Path, vis_home: Path
) -> None:
    """Only all of git's parts make a repository: a folder with HEAD (naming a ref) and
    refs/ but no objects/, and one with all three names but a HEAD that names no ref, are
    approved as any files."""
    from vis_core.drafts import Drafts

    (workspace / "a.txt").write_text("hi\n")
    store = Store(vis_home / "vis.db")
    draft = Drafts(store, vis_home).create(workspace, None, "plain")
    store.close()
    tree = Path(draft.root)
    for folder, head in (("half", "ref: refs/heads/main\n"), ("prose", "the list's head\n")):
        (tree / folder / "refs").mkdir(parents=True)
        (tree / folder / "refs" / "r.md").write_text("refs\n")
        (tree / folder / "HEAD").write_text(head)
        (tree / folder / "config").write_text("[core]\n")
    (tree / "prose" / "objects").mkdir()
    (tree / "prose" / "objects" / "o.md").write_text("objects\n")

    approved = vis("drafts", "approve", "plain", cwd=workspace, env_home=vis_home)

    assert approved.returncode == 0, approved.stderr
    assert (workspace / "half" / "HEAD").read_text() == "ref: refs/heads/main\n"
    assert (workspace / "prose" / "objects" / "o.md").read_text() == "objects\n"


def test_a_head_that_completes_objects_and_refs_already_in_the_workspace_is_refused(
    workspace: Path, vis_home: Path
) -> None:
    """objects/ and refs/ lie untracked in the live workspace (the draft brings your
    uncommitted files along, not as its change); the draft adds HEAD beside them: approval
    would make vendor/ a repository, and refuses, naming the file that does."""
    from vis_core.drafts import Drafts

    from .conftest import make_repo

    repo = make_repo(workspace)
    for part in ("objects", "refs"):
        (repo / "vendor" / part).mkdir(parents=True)
        (repo / "vendor" / part / "x").write_text("x\n")
    store = Store(vis_home / "vis.db")
    draft = Drafts(store, vis_home).create(repo, None, "head")
    store.close()
    (Path(draft.root) / "vendor" / "HEAD").write_text("ref: refs/heads/main\n")

    refused = vis("drafts", "approve", "head", cwd=repo, env_home=vis_home)

    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert "makes a git repository of vendor/ (vendor/HEAD:" in refused.stderr
    assert not (repo / "vendor" / "HEAD").exists()
