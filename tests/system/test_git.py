"""What Vis's git runner puts on git's command line, and a hostile checkout that every git
call Vis makes on it leaves unable to start a program (vis_core/system/git.py)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from sandbox.hostile import git, make_repo  # the person's own git, and a repository

from vis_core.system.git import NEUTRAL_CONFIG, GitFailed, git_argv, run_git


def _split(argv: list[str], command: str) -> tuple[list[str], list[str]]:
    """The ``-c`` pairs before git's ``command`` in ``argv``, and what follows the command."""
    at = argv.index(command)
    return [argv[i + 1] for i in range(at) if argv[i] == "-c"], argv[at + 1 :]


@pytest.mark.parametrize(
    ("args", "command", "after"),
    [
        (["status", "--short"], "status", ["--ignore-submodules=all", "--short"]),
        (["diff", "HEAD"], "diff", ["--ignore-submodules=all", "--no-ext-diff", "HEAD"]),
        (["diff-files", "-z"], "diff-files", ["--ignore-submodules=all", "-z"]),
        (["diff-index", "HEAD"], "diff-index", ["--ignore-submodules=all", "HEAD"]),
        (["--literal-pathspecs", "diff"], "diff", ["--ignore-submodules=all", "--no-ext-diff"]),
        (["-C", "sub", "status"], "status", ["--ignore-submodules=all"]),
        (["log", "-n", "1"], "log", ["-n", "1"]),
        (["ls-files", "-z"], "ls-files", ["-z"]),
        (["diff-tree", "-r", "HEAD"], "diff-tree", ["-r", "HEAD"]),  # trees only
    ],
)
def test_the_guards_follow_the_command_that_compares_the_working_tree(
    workspace: Path, args: list[str], command: str, after: list[str]
) -> None:
    """``--ignore-submodules=all`` right after a command that compares the working tree (so
    git never runs ``git status`` in a submodule, under the submodule's own configuration),
    ``--no-ext-diff`` after a ``diff`` too, nothing after any other; every neutral ``-c``
    pair before the command, where git reads them, and git's own options kept before it."""
    make_repo(workspace)
    (workspace / "sub").mkdir()
    argv = git_argv(args, workspace)
    pairs, rest = _split(argv, command)
    own = args[: args.index(command)]
    assert argv[:2] == [shutil.which("git"), "--no-pager"]
    assert pairs[: len(NEUTRAL_CONFIG)] == list(NEUTRAL_CONFIG)
    assert {"core.fsmonitor=", "core.hooksPath=/dev/null", "diff.external="} <= set(pairs)
    assert argv[argv.index(command) - len(own) : argv.index(command)] == own
    assert rest == after


def test_every_driver_the_configuration_names_is_switched_off_before_the_command(
    workspace: Path,
) -> None:
    """Each filter, diff, merge driver and credential helper the repository names (any
    name, any case) gets a ``-c`` pair that starts nothing: a filter's clean and smudge and a
    textconv become ``cat`` (the file passes unchanged), a process, command, driver or helper
    becomes empty; a command that cannot start one lists none; a driver whose name holds
    ``=`` (no pair could name it) makes Vis refuse to run git there."""
    make_repo(workspace)
    named = {
        "filter.Evil.clean": "cat",
        "filter.Evil.smudge": "cat",
        "filter.Evil.process": "",
        "diff.pic.textconv": "cat",
        "diff.pic.command": "",
        "merge.mine.driver": "",
        "credential.https://example.com.helper": "",
    }
    for key in named:
        git(workspace, "config", key, "evil")
    pairs, _ = _split(git_argv(["add", "notes.txt"], workspace), "add")
    assert pairs[len(NEUTRAL_CONFIG) :] == [f"{key}={value}" for key, value in named.items()]
    pairs, _ = _split(git_argv(["ls-tree", "HEAD"], workspace), "ls-tree")
    assert pairs == list(NEUTRAL_CONFIG)

    git(workspace, "config", "filter.a=b.clean", "evil")
    with pytest.raises(GitFailed, match=r"'filter\.a=b\.clean'.*cannot switch off"):
        git_argv(["status"], workspace)


# Keys of a hostile ``.git/config`` that name a program, and the name its program records.
PROGRAMS = {
    "core.fsmonitor": "fsmonitor",
    "core.pager": "pager",
    "core.sshCommand": "ssh",
    "core.editor": "editor",
    "sequence.editor": "sequence-editor",
    "core.alternateRefsCommand": "alternate-refs",
    "credential.helper": "credential",
    "gpg.program": "gpg",
    "diff.external": "external-diff",
    "diff.evil.textconv": "textconv",
    "diff.evil.command": "diff-command",
    "filter.evil.clean": "clean",
    "filter.evil.smudge": "smudge",
    "filter.evil.process": "process",
    "merge.evil.driver": "merge-driver",
}
HOOKS = (
    "pre-commit", "prepare-commit-msg", "commit-msg", "post-commit", "post-checkout",
    "post-merge", "pre-merge-commit", "post-rewrite", "reference-transaction",
    "post-index-change", "pre-auto-gc", "fsmonitor-watchman",
)  # fmt: skip


def _hostile(tmp_path: Path) -> tuple[Path, Path]:
    """A checkout whose configuration, hooks, an included config file and a submodule's own
    configuration each name a program that writes its name into the file returned."""
    ws, evil, ran = make_repo(tmp_path / "ws"), tmp_path / "evil", tmp_path / "ran.txt"
    evil.mkdir()

    def program(name: str) -> str:
        path = evil / name
        path.write_text(f"#!/bin/sh\necho {name} >> {ran}\nexec cat\n")
        path.chmod(0o755)
        return str(path)

    sub = make_repo(ws / "sub")  # a submodule with a filter and an fsmonitor of its own
    (sub / ".gitattributes").write_text("* filter=subevil\n")
    git(sub, "add", ".")
    git(sub, "commit", "-q", "-m", "attributes")
    (ws / ".gitattributes").write_text("* filter=evil diff=evil merge=evil\nb.txt filter=inc\n")
    (ws / "b.txt").write_text("bee\n")
    git(ws, "add", ".")
    git(ws, "commit", "-q", "-m", "attributes and a submodule")
    git(sub, "config", "filter.subevil.clean", program("sub-clean"))
    git(sub, "config", "core.fsmonitor", program("sub-fsmonitor"))
    for key, name in PROGRAMS.items():
        git(ws, "config", key, program(name))
    git(ws, "config", "commit.gpgSign", "true")
    git(ws, "config", "log.showSignature", "true")
    (evil / "more.inc").write_text(f'[filter "inc"]\n\tclean = {program("included-clean")}\n')
    git(ws, "config", "include.path", str(evil / "more.inc"))
    for hook in HOOKS:
        program(hook)
        shutil.copy(evil / hook, ws / ".git" / "hooks" / hook)
    old = (1, 1)  # every file's stat differs from its index entry: compared through filters
    for path in (ws / "notes.txt", ws / "b.txt", sub / "notes.txt", ws / ".git" / "index"):
        os.utime(path, old)
    return ws, ran


def test_no_git_call_vis_makes_on_a_hostile_checkout_starts_its_programs(
    tmp_path: Path, vis_home: Path
) -> None:
    """Through every git call Vis makes on a checkout (the bundled git tools' and
    ``vis.git``'s commands, the workspace listings, the check of ignored files, checkpoints
    and ``/undo``, a draft made, synced and approved), none of the
    programs its configuration, its hooks, an included file or a submodule's configuration
    name runs; the person's own git runs them."""
    from vis_core.drafts import Drafts
    from vis_core.drafts.gitrun import COMMIT_CONFIG
    from vis_core.store import Store
    from vis_core.tools.checkpoints import Checkpoints
    from vis_core.tools.ignore import git_files, git_toplevel, listed_files

    ws, ran = _hostile(tmp_path)
    (ws / "notes.txt").write_text("one\nTWO\nthree\n")
    for args in (  # the bundled git tools' commands, and vis.git's plainest
        ["rev-parse", "--show-toplevel"],
        ["status", "--porcelain=v2", "--branch", "-z", "--untracked-files=all"],
        ["diff", "--no-ext-diff", "--no-color", "--"],
        ["diff", "--no-ext-diff", "--no-color", "--cached", "HEAD", "--"],
        ["log", "--format=%H", "-n", "2", "HEAD", "--"],
        ["blame", "--porcelain", "--", "notes.txt"],
        ["diff"],
        ["status"],
        ["ls-files", "-z", "--cached", "--others", "--exclude-standard"],  # workspace_files()
    ):
        assert run_git(args, ws).returncode == 0, args
    assert git_toplevel(str(ws)) == str(ws)
    assert str(ws / "notes.txt") in (listed_files(str(ws), hidden=False) or [])
    assert str(ws / "b.txt") in git_files(str(ws), rules=True, standard=False)
    ignored = run_git(["check-ignore", "-v", "-z", "--stdin"], ws, feed=b"notes.txt\0")
    assert ignored.returncode == 1  # own_ignores: nothing ignored

    points = Checkpoints(ws, tmp_path / "points")
    points.take("t1", 1)
    (ws / "notes.txt").write_text("changed\n")  # turn t1's change, undone
    assert points.restore().turns == (1,)
    assert (ws / "notes.txt").read_text() == "one\nTWO\nthree\n"

    with Store(vis_home / "vis.db") as store:
        drafts = Drafts(store, vis_home)
        draft = drafts.create(ws, "s1", "fix")
        (Path(draft.root) / "c.txt").write_text("sea\n")
        assert drafts.changed_files(draft) == ["c.txt"]
        assert "+sea" in drafts.review(draft).diff
        moved = [*COMMIT_CONFIG, "commit", "-q", "-m", "moved", "--", "notes.txt"]
        assert run_git(moved, ws).returncode == 0  # the target moves on: sync merges
        assert drafts.sync(draft) == ["notes.txt"]
        assert drafts.approve(draft, "add c")["files"] == ["c.txt"]
        assert (ws / "c.txt").read_text() == "sea\n"  # and the draft removed, as discarded

    assert not ran.exists(), ran.read_text()
    (ws / "notes.txt").write_text("three\n")
    git(ws, "status")  # the person's own git: the attack is real
    git(ws, "diff")
    assert {"fsmonitor", "sub-fsmonitor", "diff-command"} <= set(ran.read_text().split())


def test_an_extensions_git_command_that_looks_into_a_submodule_starts_none_of_its_programs(
    tmp_path: Path, vis_home: Path
) -> None:
    """``vis.git``'s runner (jail off) switches off the drivers of each repository checked
    out inside too: ``git add -A``, ``describe --dirty`` and a caller's own
    ``--ignore-submodules=none`` run ``git status`` inside the submodule, with its filter."""
    from vis_core.extension.workspace import hardened_git

    ws, ran = _hostile(tmp_path)
    for args in (
        ("status", "--ignore-subm=none"),
        ("diff", "--ignore-submodules=none"),
        ("describe", "--always", "--dirty"),
        ("add", "-A"),
    ):
        os.utime(ws / "sub" / "notes.txt", (2, 2))
        assert hardened_git(args, ws).returncode == 0, args
        assert not ran.exists(), (args, ran.read_text())
    os.utime(ws / "sub" / "notes.txt", (3, 3))
    git(ws, "add", "-A")  # the person's own git: the attack is real
    assert "sub-clean" in ran.read_text().split()


def test_a_checkout_with_too_many_repositories_inside_runs_no_extension_git_command(
    tmp_path: Path, vis_home: Path
) -> None:
    """Past ``MAX_NESTED`` repositories checked out inside, an extension's git command is
    refused, naming the bound, rather than run with drivers not switched off; Vis's own
    commands, which never look into one, still run."""
    from vis_core.extension.workspace import hardened_git
    from vis_core.system.git import MAX_NESTED

    ws, inner = make_repo(tmp_path / "ws"), make_repo(tmp_path / "inner")
    head = git(inner, "rev-parse", "HEAD").strip()
    for n in range(MAX_NESTED + 1):  # gitlinks whose checkouts are links to one repository
        (ws / f"l{n}").symlink_to(inner)
        git(ws, "update-index", "--add", "--cacheinfo", f"160000,{head},l{n}")
    with pytest.raises(GitFailed, match=f"more than {MAX_NESTED} repositories inside"):
        hardened_git(("add", "-A"), ws)
    assert run_git(["status", "--porcelain"], ws).returncode == 0
