"""Drafts of a git repository: a worktree on vis/draft/<label>, approved or discarded."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from vis_core.drafts import DraftConflict, DraftError, DraftHooks, Drafts
from vis_core.drafts.service import check_label
from vis_core.extension.hooks import OperationBlocked
from vis_core.model.draft import DraftBackend

from .conftest import git, unwritable


def test_a_draft_starts_where_the_person_is_and_leaves_the_live_tree_alone(
    repo: Path, drafts: Drafts, vis_home: Path
) -> None:
    (repo / "a.txt").write_text("one\nTWO\nthree\n")  # a change not committed
    git(repo, "add", "a.txt")  # staged, even
    (repo / "new.txt").write_text("untracked\n")
    (repo / "ignored").mkdir()
    (repo / "ignored" / "big.bin").write_text("never carried")
    status_before = git(repo, "status", "--porcelain")

    draft = drafts.create(repo, "s1", "fix")

    root = Path(draft.root)
    assert draft.backend is DraftBackend.WORKTREE and draft.branch == "vis/draft/fix"
    assert draft.target_branch == "main"
    assert root.is_relative_to(vis_home) and not root.is_relative_to(repo)
    assert (root / "a.txt").read_text() == "one\nTWO\nthree\n"
    assert (root / "new.txt").read_text() == "untracked\n"
    assert not (root / "ignored").exists()
    assert git(repo, "status", "--porcelain") == status_before  # index and tree untouched
    assert git(root, "status", "--porcelain") == ""  # the carried changes are its base
    assert drafts.changed_files(draft) == []  # the person's changes are not the draft's
    assert drafts.of_session("s1") == draft


def test_approval_commits_the_drafts_change_on_the_branch_and_updates_the_live_workspace(
    repo: Path, drafts: Drafts
) -> None:
    (repo / "a.txt").write_text("one\nTWO\nthree\n")  # carried into the draft
    draft = drafts.create(repo, "s1", "work")
    root = Path(draft.root)
    (root / "b.txt").write_text("bee edited\n")
    (root / "c.txt").write_text("sea\n")
    git(repo, "commit", "-q", "--allow-empty", "-m", "the person goes on")  # no fast-forward
    tip = git(repo, "rev-parse", "main")

    result = drafts.approve(draft, "edit b, add c")

    assert sorted(result["files"]) == ["b.txt", "c.txt"]
    assert (repo / "b.txt").read_text() == "bee edited\n"
    assert (repo / "c.txt").read_text() == "sea\n"
    assert git(repo, "status", "--porcelain") == "M a.txt"  # still the person's, uncommitted
    assert (repo / "a.txt").read_text() == "one\nTWO\nthree\n"
    assert git(repo, "log", "-1", "--format=%s %P") == f"edit b, add c {tip}"
    assert not root.exists() and drafts.listed() == []
    assert git(repo, "branch", "--list", "vis/draft/*") == ""
    assert git(repo, "worktree", "list", "--porcelain").count("worktree ") == 1


def test_approval_refuses_files_the_person_changed_since_and_changes_nothing(
    repo: Path, drafts: Drafts
) -> None:
    draft = drafts.create(repo, "s1", "work")
    (Path(draft.root) / "b.txt").write_text("the draft's bee\n")
    (repo / "b.txt").write_text("the person's bee\n")
    head = git(repo, "rev-parse", "main")

    with pytest.raises(DraftConflict) as refused:
        drafts.approve(draft)

    assert refused.value.files == ("b.txt",)
    assert (repo / "b.txt").read_text() == "the person's bee\n"
    assert git(repo, "rev-parse", "main") == head
    assert (Path(draft.root) / "b.txt").read_text() == "the draft's bee\n"
    assert drafts.listed() == [draft]


def test_a_conflict_with_the_target_is_named_and_nothing_is_half_merged(
    repo: Path, drafts: Drafts
) -> None:
    draft = drafts.create(repo, "s1", "work")
    (Path(draft.root) / "a.txt").write_text("one\ndraft\nthree\n")
    (Path(draft.root) / "b.txt").write_text("bee too\n")
    (repo / "a.txt").write_text("one\nperson\nthree\n")
    git(repo, "commit", "-qam", "the person's a")
    head = git(repo, "rev-parse", "main")

    with pytest.raises(DraftConflict) as refused:
        drafts.approve(draft)

    assert refused.value.files == ("a.txt",)
    assert git(repo, "rev-parse", "main") == head
    assert git(repo, "status", "--porcelain") == ""
    assert (repo / "b.txt").read_text() == "bee\n"
    assert drafts.changed_files(draft) == ["a.txt", "b.txt"]  # still usable

    with pytest.raises(DraftConflict) as sync_refused:
        drafts.sync(draft)
    assert sync_refused.value.files == ("a.txt",)
    assert (Path(draft.root) / "a.txt").read_text() == "one\ndraft\nthree\n"


def test_sync_brings_the_targets_new_commits(repo: Path, drafts: Drafts) -> None:
    draft = drafts.create(repo, "s1", "work")
    (Path(draft.root) / "a.txt").write_text("one\ntwo\nthree\nfour\n")
    (repo / "b.txt").write_text("bee from main\n")
    git(repo, "commit", "-qam", "main moves")

    assert drafts.sync(draft) == ["b.txt"]

    assert (Path(draft.root) / "b.txt").read_text() == "bee from main\n"
    assert (Path(draft.root) / "a.txt").read_text() == "one\ntwo\nthree\nfour\n"
    drafts.approve(draft)
    assert (repo / "a.txt").read_text() == "one\ntwo\nthree\nfour\n"
    assert git(repo, "status", "--porcelain") == ""


def test_discard_deletes_the_draft_and_its_branch_only(repo: Path, drafts: Drafts) -> None:
    (repo / "a.txt").write_text("dirty\n")
    draft = drafts.create(repo, "s1", "gone")
    (Path(draft.root) / "b.txt").write_text("never lands\n")

    drafts.discard(draft)

    assert not Path(draft.root).exists()
    assert (repo / "a.txt").read_text() == "dirty\n" and (repo / "b.txt").read_text() == "bee\n"
    assert git(repo, "branch", "--list", "vis/draft/*") == ""
    assert drafts.listed() == [] and drafts.of_session("s1") is None


def test_a_draft_of_a_subfolder_is_the_same_subfolder_of_the_worktree(
    repo: Path, drafts: Drafts
) -> None:
    (repo / "pkg").mkdir()
    (repo / "pkg" / "m.py").write_text("x = 1\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "pkg")

    draft = drafts.create(repo / "pkg", "s1")

    assert Path(draft.root).name == "pkg" and (Path(draft.root) / "m.py").exists()
    assert draft.repo_root == str(repo)


def test_two_sessions_in_two_drafts_edit_the_same_file(repo: Path, drafts: Drafts) -> None:
    first = drafts.create(repo, "s1", "first")
    second = drafts.create(repo, "s2", "second")
    (Path(first.root) / "a.txt").write_text("ONE\ntwo\nthree\n")
    (Path(second.root) / "a.txt").write_text("one\ntwo\nTHREE\n")
    assert (Path(first.root) / "a.txt").read_text() != (Path(second.root) / "a.txt").read_text()

    drafts.approve(first)
    drafts.approve(second)  # other lines: merges cleanly

    assert (repo / "a.txt").read_text() == "ONE\ntwo\nTHREE\n"
    third = drafts.create(repo, "s3", "third")
    fourth = drafts.create(repo, "s4", "fourth")
    (Path(third.root) / "b.txt").write_text("third\n")
    (Path(fourth.root) / "b.txt").write_text("fourth\n")
    drafts.approve(third)
    with pytest.raises(DraftConflict) as refused:
        drafts.approve(fourth)
    assert refused.value.files == ("b.txt",)
    assert (repo / "b.txt").read_text() == "third\n"


def test_the_repositorys_configuration_runs_nothing(repo: Path, drafts: Drafts) -> None:
    marker = repo.parent / "ran"
    script = repo.parent / "hook.sh"
    script.write_text(f"#!/bin/sh\ntouch {marker}\n")
    script.chmod(0o755)
    for hook in (
        "post-checkout",
        "pre-commit",
        "post-commit",
        "post-merge",
        "reference-transaction",
    ):
        (repo / ".git" / "hooks" / hook).write_text(f"#!/bin/sh\ntouch {marker}\n")
        (repo / ".git" / "hooks" / hook).chmod(0o755)
    git(repo, "config", "core.fsmonitor", str(script))
    git(repo, "config", "commit.gpgsign", "true")
    git(repo, "config", "gpg.program", str(script))
    (repo / "a.txt").write_text("dirty\n")

    draft = drafts.create(repo, "s1", "safe")
    (Path(draft.root) / "b.txt").write_text("edited\n")
    drafts.approve(draft)

    assert not marker.exists()
    assert (repo / "b.txt").read_text() == "edited\n"


def test_a_repository_the_model_makes_in_the_draft_runs_nothing_and_stays_out(
    repo: Path, drafts: Drafts
) -> None:
    """The draft is the model's workspace: its code can make ``sub/.git`` with a filter in its
    config. ``git add -A`` added it as a gitlink, and the next one ran ``git status`` in it,
    which ran the filter on the host. Vis stages the draft's files without looking into a
    repository of its own, and leaves that repository out of the draft."""
    marker = repo.parent / "ran"
    draft = drafts.create(repo, "s1", "nested")
    root = Path(draft.root)
    sub = root / "sub"
    sub.mkdir()
    git(sub, "init", "-q")
    (sub / "a.txt").write_text("a\n")
    (sub / ".gitattributes").write_text("* filter=evil\n")
    git(sub, "add", "-A")
    git(sub, "commit", "-q", "-m", "s")
    git(sub, "config", "filter.evil.clean", f"sh -c 'echo ran >> {marker}; cat'")
    (root / "b.txt").write_text("edited\n")
    (root / "a.txt").unlink()
    (root / "c.txt").mkdir()  # a new folder where no file was
    (root / "c.txt" / "inner.txt").write_text("in\n")
    for _ in range(2):
        os.utime(sub / "a.txt", (1, 1))
        assert sorted(drafts.changed_files(draft)) == ["a.txt", "b.txt", "c.txt/inner.txt"]
    result = drafts.approve(draft, "edit b")
    assert sorted(result["files"]) == ["a.txt", "b.txt", "c.txt/inner.txt"]
    assert not marker.exists(), marker.read_text()
    assert git(repo, "ls-tree", "-r", "--name-only", "HEAD").split() == [
        ".gitignore",
        "b.txt",
        "c.txt/inner.txt",
    ]


def test_a_taken_label_and_a_second_draft_of_a_session_are_refused(
    repo: Path, drafts: Drafts
) -> None:
    drafts.create(repo, "s1", "one")
    with pytest.raises(DraftError, match="already in draft one"):
        drafts.create(repo, "s1", "two")
    with pytest.raises(DraftError, match="exists already"):
        drafts.create(repo, "s2", "one")
    with pytest.raises(DraftError, match="not usable"):
        drafts.create(repo, "s3", "../x")
    with pytest.raises(DraftError, match="not usable"):  # the rule's '$' let a final \n pass
        check_label("fix\n")
    with pytest.raises(DraftError, match="draft label 5 is not usable"):
        drafts.create(repo, "s3", 5)  # type: ignore[arg-type]  # was re's TypeError


def test_hooks_see_the_spec_arguments_and_a_commit_guard_refuses_approval(
    repo: Path, drafts: Drafts
) -> None:
    seen: list[tuple[str, str, dict[str, Any]]] = []

    def before(op: str, args: list[Any]) -> None:
        seen.append(("before", op, args[0]))
        if op == "git/commit" and "secret.txt" in args[0]["files"]:
            raise OperationBlocked(op, "guard", "no secrets in commits")

    def after(op: str, args: list[Any], result: Any) -> None:
        seen.append(("after", op, args[0]))

    hooks = DraftHooks(before, after)
    draft = drafts.create(repo, "s1", "hooked", hooks=hooks)
    (Path(draft.root) / "secret.txt").write_text("k\n")
    head = git(repo, "rev-parse", "main")

    with pytest.raises(OperationBlocked, match="no secrets"):
        drafts.approve(draft, "add it", hooks=hooks)

    assert git(repo, "rev-parse", "main") == head and not (repo / "secret.txt").exists()
    create_args = seen[0][2]
    assert seen[0][:2] == ("before", "draft/create")
    assert {k: create_args[k] for k in ("label", "backend", "repo_root")} == {
        "label": "hooked",
        "backend": "worktree",
        "repo_root": str(repo),
    }
    assert create_args["workspace_id"] == draft.id and create_args["root"] == draft.root
    approve_args = next(a for phase, op, a in seen if op == "draft/approve")
    assert approve_args["branch"] == "vis/draft/hooked"
    assert approve_args["target_branch"] == "main"
    assert approve_args["files"] == ["secret.txt"] and approve_args["message"] == "add it"

    (Path(draft.root) / "secret.txt").unlink()
    (Path(draft.root) / "ok.txt").write_text("fine\n")
    drafts.approve(draft, "fine", hooks=hooks)
    commits = [a for phase, op, a in seen if op == "git/commit" and phase == "after"]
    assert commits and commits[-1]["branch"] == "main"  # approval's commit is main's
    assert (repo / "ok.txt").read_text() == "fine\n"


def test_vis_home_inside_the_repository_never_enters_a_draft(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vis_core.paths import VisPaths
    from vis_core.store import Store

    home = repo / ".vis-home"
    home.mkdir()
    (home / "secrets").write_text('{"token": "s3cr3t"}')
    monkeypatch.setenv("VIS_HOME", str(home))
    paths = VisPaths.from_env()
    drafts = Drafts(Store(paths.data_dir / "vis.db"), paths.data_dir)

    draft = drafts.create(repo, "s1", "inside")

    assert not (Path(draft.root) / ".vis-home").exists()
    assert (Path(draft.root) / "a.txt").exists()
    assert "diff --git" not in drafts.review(draft).diff
    (Path(draft.root) / "a.txt").write_text("changed\n")
    assert "+changed" in drafts.review(draft).diff


def test_a_draft_of_a_detached_head_is_not_approved_but_can_be_discarded(
    repo: Path, drafts: Drafts
) -> None:
    git(repo, "checkout", "-q", "--detach")
    draft = drafts.create(repo, "s1", "detached")
    (Path(draft.root) / "b.txt").write_text("edited\n")
    assert draft.target_branch is None

    with pytest.raises(DraftError, match="detached HEAD"):
        drafts.approve(draft)

    assert (repo / "b.txt").read_text() == "bee\n"
    drafts.discard(draft)
    assert drafts.listed() == []


def test_a_draft_whose_folder_was_deleted_does_not_block_a_new_one(
    repo: Path, drafts: Drafts
) -> None:
    import shutil

    gone = drafts.create(repo, "s1", "gone")
    shutil.rmtree(drafts.tree(gone))

    again = drafts.create(repo, "s1", "again")

    assert drafts.of_session("s1") == again and drafts.listed() == [again]
    assert git(repo, "branch", "--list", "vis/draft/gone") != ""  # its commits stay reachable


def test_a_write_failing_midway_leaves_no_file_and_no_branch_moved(
    repo: Path, drafts: Drafts
) -> None:
    draft = drafts.create(repo, "s1", "work")
    root = Path(draft.root)
    (root / "a.txt").write_text("one\ndraft\nthree\n")  # written first (sorted)
    (root / "b.txt").write_text("the draft's bee\n")  # this one fails
    (root / "new" / "c.txt").parent.mkdir()
    (root / "new" / "c.txt").write_text("sea\n")
    head = git(repo, "rev-parse", "main")

    with unwritable(repo / "b.txt"), pytest.raises(DraftError, match="b.txt") as failed:
        drafts.approve(draft, "three files")

    assert "nothing in the workspace changed" in str(failed.value)
    assert (repo / "a.txt").read_text() == "one\ntwo\nthree\n"
    assert (repo / "b.txt").read_text() == "bee\n"
    assert not (repo / "new").exists()
    assert git(repo, "rev-parse", "main") == head
    assert git(repo, "status", "--porcelain", "--ignored") == ""  # no temporary left
    assert drafts.listed() == [draft]

    result = drafts.approve(draft, "three files")  # the cause fixed: it lands whole

    assert sorted(result["files"]) == ["a.txt", "b.txt", "new/c.txt"]
    assert (repo / "b.txt").read_text() == "the draft's bee\n"
    assert git(repo, "status", "--porcelain") == ""


def test_a_sparse_terabyte_file_is_refused_before_git_stores_it(repo: Path, drafts: Drafts) -> None:
    """Before, approval's `git add -A` hashed and compressed every byte of a sparse terabyte
    file the model's code made in the draft, with the model's processes held meanwhile."""
    with (repo / "disk.img").open("wb") as out:
        out.truncate(1 << 40)
    with pytest.raises(DraftError, match=r"^disk\.img is 1\.0 TB, over the 256\.0 MB a draft"):
        drafts.create(repo, "s1", "big")
    assert drafts.listed() == [] and git(repo, "branch", "--list", "vis/draft/*") == ""
    (repo / "disk.img").unlink()

    draft = drafts.create(repo, "s1", "big")
    root = Path(draft.root)
    (root / "b.txt").write_text("bee edited\n")
    (root / "sub").mkdir()
    with (root / "sub" / "disk.img").open("wb") as out:
        out.truncate(1 << 40)
    with pytest.raises(DraftError, match=r"^sub/disk\.img is 1\.0 TB"):
        drafts.approve(draft, "too big")
    assert (repo / "b.txt").read_text() == "bee\n"
    (root / "sub" / "disk.img").unlink()  # the draft stays usable
    drafts.approve(draft, "edit b")
    assert (repo / "b.txt").read_text() == "bee edited\n"


def test_a_sparse_untracked_file_stays_sparse_in_the_draft(repo: Path, drafts: Drafts) -> None:
    """Before, the worktree draft's copy of the person's untracked files wrote every zero
    of a sparse one (a block's 1 GiB file cost the host 1 GiB of disk)."""
    with (repo / "disk.img").open("wb") as out:
        out.write(b"boot")
        out.truncate(16 << 20)  # its zeros, written, would take 16 times the room allowed
    draft = drafts.create(repo, "s1", "sparse")
    copy = Path(draft.root) / "disk.img"
    with copy.open("rb") as copied:
        assert copy.stat().st_size == 16 << 20 and copied.read(4) == b"boot"
    assert copy.stat().st_blocks * 512 <= (repo / "disk.img").stat().st_blocks * 512 + (1 << 20)


def test_changes_past_what_a_draft_copies_in_all_are_refused_before_git_stores_them(
    repo: Path, drafts: Drafts
) -> None:
    """17 names of one 256 MiB file (hard links: free to make) in the draft: git would hash
    each and approval write each in full; the name that takes them past 4 GiB is refused."""
    draft = drafts.create(repo, "s1", "links")
    root = Path(draft.root)
    with (root / "a00.img").open("wb") as out:
        out.truncate(256 << 20)
    for number in range(1, 17):
        os.link(root / "a00.img", root / f"a{number:02}.img")
    with pytest.raises(DraftError, match=r"^a\d\d\.img \(256\.0 MB\) takes what a draft copies"):
        drafts.approve(draft, "too much")
    assert not (repo / "a00.img").exists()


def test_a_target_branch_checked_out_in_another_worktree_is_not_moved(
    repo: Path, drafts: Drafts, tmp_path: Path
) -> None:
    """The person moved on to another branch and has main checked out in a second worktree:
    approval refuses, naming it, as ``git branch -f`` does (before, main moved and that
    worktree's files no longer matched its HEAD); once it is on another branch, approval
    lands."""
    draft = drafts.create(repo, "s1", "elsewhere")
    (Path(draft.root) / "a.txt").write_text("drafted\n")
    git(repo, "switch", "-q", "-c", "side")
    other = tmp_path / "other-worktree"
    git(repo, "worktree", "add", "-q", str(other), "main")
    tip = git(repo, "rev-parse", "main")

    with pytest.raises(DraftError, match=f"main is checked out in another worktree, {other}"):
        drafts.approve(draft)

    assert git(repo, "rev-parse", "main") == tip
    assert git(other, "status", "--porcelain") == "" and drafts.listed() == [draft]
    git(other, "switch", "-q", "--detach")
    drafts.approve(draft)
    assert git(repo, "show", "main:a.txt") == "drafted"


def test_a_target_branch_being_rebased_is_not_moved(repo: Path, drafts: Drafts) -> None:
    """The person's rebase of main stopped on a conflict (HEAD detached meanwhile): approval
    refuses, naming the worktree and how to end the rebase, as ``git branch -f`` does (before,
    main moved under the rebase); after ``git rebase --abort`` it lands."""
    draft = drafts.create(repo, "s1", "rebasing")
    (Path(draft.root) / "b.txt").write_text("drafted\n")
    git(repo, "switch", "-q", "-c", "side")
    (repo / "a.txt").write_text("side\n")
    git(repo, "commit", "-qam", "side")
    git(repo, "switch", "-q", "main")
    (repo / "a.txt").write_text("main\n")
    git(repo, "commit", "-qam", "main")
    tip = git(repo, "rev-parse", "main")
    stopped = subprocess.run(["git", "rebase", "side"], cwd=repo, capture_output=True)
    assert stopped.returncode != 0  # a conflict in a.txt

    with pytest.raises(
        DraftError, match=f"main is being rebased in the worktree {repo}: .*--abort"
    ):
        drafts.approve(draft)

    assert git(repo, "rev-parse", "main") == tip and drafts.listed() == [draft]
    git(repo, "rebase", "--abort")
    drafts.approve(draft)
    assert (repo / "b.txt").read_text() == "drafted\n"


def test_a_sync_where_main_replaced_a_folder_with_a_file_says_so(
    repo: Path, drafts: Drafts
) -> None:
    """Before: "2 files conflict: sub/f.txt, sub~<commit>", a name git merge-tree made."""
    (repo / "sub").mkdir()
    (repo / "sub" / "f.txt").write_text("f\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "sub")
    draft = drafts.create(repo, "s1", "kinds")
    (Path(draft.root) / "sub" / "f.txt").write_text("drafted\n")
    git(repo, "rm", "-rq", "sub")
    (repo / "sub").write_text("a file now\n")
    git(repo, "add", "sub")
    git(repo, "commit", "-qm", "sub is a file")

    with pytest.raises(DraftConflict) as refused:
        drafts.sync(draft)

    assert str(refused.value) == (
        "sync of draft kinds with main (main replaced the folder sub with a file): "
        "2 files conflict: sub, sub/f.txt"
    )
    assert (Path(draft.root) / "sub" / "f.txt").read_text() == "drafted\n"
