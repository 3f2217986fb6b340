"""The look for git repositories made in a workspace's folders, on a real folder tree: what
it lists first when it cannot list everything at once, and what it says of its bounds."""

from __future__ import annotations

import subprocess
from pathlib import Path

from vis_core.system.nested_gits import NestedGits


def folders(root: Path, prefix: str, count: int) -> None:
    for i in range(count):
        (root / f"{prefix}{i:02d}").mkdir()


def test_a_repository_left_waiting_is_listed_before_folders_made_after_it(
    workspace: Path,
) -> None:
    """Listing 5 folders a look: the top, 4 new folders and zz/.git (named after them) are
    more than one look lists; the next look lists zz before 10 folders made meanwhile."""
    looks = NestedGits(workspace, limit=5)
    assert looks.new() == []
    folders(workspace, "d", 4)
    subprocess.run(["git", "init", "-q", str(workspace / "zz")], check=True)
    assert looks.new() == []  # zz waits
    folders(workspace, "e", 10)
    assert looks.new() == [workspace / "zz" / ".git"]


def test_a_bare_repository_is_told_once_and_not_entered(workspace: Path) -> None:
    """A bare repository made is told once; its folders (objects/, refs/…) are not walked."""
    looks = NestedGits(workspace)
    assert looks.new() == []
    subprocess.run(["git", "init", "-q", "--bare", str(workspace / "new.git")], check=True)
    assert looks.new() == [workspace / "new.git"]
    assert looks.new() == []
    assert looks.looked_in == 2  # the top and new.git


def test_other_agents_settings_in_a_bare_repository_are_told(workspace: Path) -> None:
    """A block that gave a folder a bare repository's shape (HEAD, objects/, refs/) hid
    the ``.claude/`` it made in a subfolder of it from the look that tells them: a bare
    repository was not entered, though Claude Code started in that subfolder reads it. The
    workspace's look enters one, but for its objects/ and refs/."""
    looks = NestedGits(workspace, enter=True, names=[".claude"])
    assert looks.new() == []
    repo = workspace / "evil"
    subprocess.run(["git", "init", "-q", "--bare", str(repo)], check=True)
    (repo / "sub" / ".claude").mkdir(parents=True)
    (repo / "objects" / "x" / ".claude").mkdir(parents=True)  # git's store: not looked in
    assert looks.new() == [repo, repo / "sub" / ".claude"]


def test_past_its_bound_it_says_that_folders_made_during_the_session_were_left_out(
    workspace: Path,
) -> None:
    """At most 10 folders known: 20 made during the session are more, and a repository made
    in one left out would not be told: that is said."""
    looks = NestedGits(workspace, known=10)
    looks.new()
    assert not looks.full
    (workspace / "new").mkdir()
    folders(workspace / "new", "d", 20)
    looks.new()
    looks.new()
    assert looks.full
