"""Which files a search sees outside Git: the .gitignore walk agrees with Git itself."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from vis_core.tools.checkpoints import git_blob_id, git_held_files
from vis_core.tools.ignore import (
    git_toplevel,
    listed_files,
    no_repository_above,
    walk_files,
)
from vis_core.tools.regex_worker import matches_itself
from vis_core.tools.search import glob_rules

TREE = {
    ".gitignore": "*.log\n!keep.log\n/top.txt\nbuild/\ndocs/**/draft*\n\\#hash.txt\nspace\\ \n",
    "a.py": "",
    "top.txt": "",
    "x.log": "",
    "keep.log": "",
    "#hash.txt": "",
    "space ": "",
    "src/top.txt": "",
    "src/.gitignore": "*.py\n!main.py\n",
    "src/main.py": "",
    "src/other.py": "",
    "src/sub/deep.py": "",
    "src/sub/build/out.c": "",
    "build/gen.c": "",
    "docs/a/b/draft1.md": "",
    "docs/final.md": "",
}


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_walk_outside_git_sees_what_git_would_list(tmp_path: Path) -> None:
    for name, text in TREE.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    walked = sorted(os.path.relpath(p, tmp_path) for p in walk_files(str(tmp_path), hidden=True))
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    listed = subprocess.run(
        ["git", "-C", str(tmp_path), "ls-files", "-co", "--exclude-standard"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    assert walked == sorted(listed)
    assert "src/main.py" in walked and "src/other.py" not in walked and "keep.log" in walked


def test_a_glob_filter_selects_the_path_itself_not_what_is_under_a_folder() -> None:
    wire = glob_rules(("foo", "src/", "*.py"), ())["include"]  # what the worker gets
    spec = [(include, re.compile(pattern, flags)) for include, pattern, flags in wire]
    assert matches_itself(spec, "a/foo", False) and not matches_itself(spec, "foo/bar.txt", False)
    assert matches_itself(spec, "src", True) and not matches_itself(spec, "src", False)
    assert not matches_itself(spec, "src/a.txt", False) and matches_itself(spec, "src/a.py", False)


def test_a_pipe_named_gitignore_is_never_waited_on(workspace: Path) -> None:
    """A block that plants a pipe as ``.gitignore`` must not hang the host's listings (grep
    without ripgrep, every turn's /undo checkpoint) waiting for a writer."""
    import threading

    (workspace / "sub").mkdir()
    os.mkfifo(workspace / "sub" / ".gitignore")
    (workspace / "sub" / "a.txt").write_text("x\n")
    listed: list[list[str]] = []
    walker = threading.Thread(
        target=lambda: listed.append(sorted(walk_files(str(workspace), hidden=True))),
        daemon=True,  # on a hang, the test fails and the process can still end
    )
    walker.start()
    walker.join(60)
    assert listed == [[str(workspace / "sub" / "a.txt")]]


@pytest.mark.parametrize(
    ("glob", "name", "ignored"),
    [
        ("*a*a*a*a*a*a*a*a*a*a*b", "a" * 200, False),
        ("*a*a*a*a*a*a*a*a*a*a*b", "x" + "a" * 10 + "b", True),
        ("*a*a*a*a*a*a*a*a*a*a*b", "deep/er/" + "ya" * 10 + "b", True),
        ("a?b*c[xy]*", "a_bqqcx.txt", True),
        ("a?b*c[xy]*", "a_bqqcz.txt", False),
        ("*.min.*", "app.min.js", True),
        ("*.min.*", "app.js", False),
    ],
)
def test_rules_with_many_stars_match_without_backtracking(
    workspace: Path, glob: str, name: str, ignored: bool
) -> None:
    """A hostile .gitignore rule such as ``*a*a*…b`` on a long name took hours (the
    listing of ls, of grep without ripgrep, and of every turn's /undo checkpoint)."""
    import threading

    (workspace / ".gitignore").write_text(glob + "\n")
    (workspace / name).parent.mkdir(parents=True, exist_ok=True)
    (workspace / name).write_text("x\n")
    listed: list[list[str]] = []
    walker = threading.Thread(
        target=lambda: listed.append(list(walk_files(str(workspace), hidden=False))),
        daemon=True,  # on a hang, the test fails and the process can still end
    )
    walker.start()
    walker.join(60)
    assert listed == [[] if ignored else [str(workspace / name)]]
    if shutil.which("git"):  # git agrees
        subprocess.run(["git", "init", "-q", str(workspace)], check=True)
        check = ["git", "-C", str(workspace), "check-ignore", "-q", name]
        done = subprocess.run(check, check=False)
        assert (done.returncode == 0) is ignored


def test_a_gitignore_that_is_a_link_or_a_device_is_not_read(workspace: Path) -> None:
    """A checkout (or a jailed block) outside Git leaves ``.gitignore -> /dev/zero``: every
    listing on the host (each turn's checkpoint, ``ls``, ``grep``, the app's ``@`` list)
    read it without end until Vis ran out of memory. As Git does, a ``.gitignore`` that is
    a link is not followed; nor is anything but a regular file read. (Run in a process with
    1 GiB of address space, so the failing read ends in a MemoryError there.)"""
    import sys
    import textwrap

    (workspace / "a.txt").write_text("x\n")
    sub = workspace / "sub"
    sub.mkdir()
    (sub / "b.txt").write_text("x\n")
    os.symlink("/dev/zero", workspace / ".gitignore")
    os.symlink("/dev/zero", sub / ".gitignore")
    program = textwrap.dedent(
        f"""
        import resource, sys
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
        from vis_core.tools.ignore import walk_files
        print(sorted(walk_files({str(workspace)!r}, hidden=False)))
        """
    )
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-500:]
    assert done.stdout.strip() == str([str(workspace / "a.txt"), str(sub / "b.txt")])


def test_a_folder_swapped_for_a_link_during_the_walk_is_not_entered(tmp_path: Path) -> None:
    """The model's code runs while Vis lists the workspace (each block's file list, its
    checkpoint, ``grep`` without ripgrep). A folder listed as a folder, then swapped for a
    link to a folder outside before the walk entered it, was listed through the link: the
    outside files' names showed in the block's file list. The walk opens each folder from the
    one above by descriptor, without following a link, and so skips it."""
    workspace, outside = tmp_path / "ws", tmp_path / "outside"
    (workspace / "a").mkdir(parents=True)
    (workspace / "a" / "1.txt").write_text("x\n")
    (workspace / "z").mkdir()
    (workspace / "z" / "mine.txt").write_text("x\n")
    outside.mkdir()
    (outside / "secret.txt").write_text("hidden\n")
    walk = walk_files(str(workspace), hidden=False)
    assert next(walk) == str(workspace / "a" / "1.txt")  # the root is listed, z is a folder
    (workspace / "z").rename(workspace / "real-z")
    (workspace / "z").symlink_to(outside, target_is_directory=True)
    assert list(walk) == []  # z, a link now, is not entered


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_no_repository_above_agrees_with_git(tmp_path: Path) -> None:
    """Git runs only where a ``.git`` could make a repository: the check that skips it says
    "none" exactly where git finds none, through a ``.git`` file and a link into a repository
    too; git_toplevel and git_held_files still find the repository."""

    def git_finds(folder: Path) -> bool:
        done = subprocess.run(
            ["git", "rev-parse", "--git-dir"], cwd=folder, capture_output=True, check=False
        )
        return done.returncode == 0

    if git_finds(tmp_path):
        pytest.skip("the temporary folder is inside a git repository")
    plain = tmp_path / "plain" / "deep"
    plain.mkdir(parents=True)
    repo = tmp_path / "repo"
    (repo / "sub").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "kept.txt").write_text("kept\n")
    subprocess.run(["git", "-C", str(repo), "add", "kept.txt"], check=True)
    linked = tmp_path / "plain" / "into-repo"
    linked.symlink_to(repo / "sub")
    worktree = tmp_path / "by-file"
    worktree.mkdir()
    (worktree / ".git").write_text(f"gitdir: {repo / '.git'}\n")
    for folder in (plain, tmp_path / "plain", repo, repo / "sub", linked, worktree):
        assert no_repository_above(str(folder)) is not git_finds(folder), folder
    assert no_repository_above(str(plain)) and not no_repository_above(str(linked))
    assert git_toplevel(str(plain)) is None
    assert git_toplevel(str(repo / "sub")) == str(repo)
    assert git_held_files(plain, {"kept.txt": 5}) == {}
    assert git_held_files(repo, {"kept.txt": 5}) == {"kept.txt": git_blob_id(b"kept\n")}


def test_a_folder_outside_git_past_the_bound_is_not_listed(workspace: Path) -> None:
    """Outside Git a search's listing walked the whole folder, however big (a home folder):
    past its bound of files none is taken, as a checkpoint takes none."""
    for name in ("a.txt", "b.txt", "c.txt"):
        (workspace / name).write_text("x\n")
    listed = listed_files(str(workspace), hidden=False, most=3)
    assert listed is not None and sorted(os.path.basename(p) for p in listed) == [
        "a.txt",
        "b.txt",
        "c.txt",
    ]
    assert listed_files(str(workspace), hidden=False, most=2) is None
