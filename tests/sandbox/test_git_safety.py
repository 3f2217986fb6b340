"""Git that Vis runs for the model cannot be made to start programs by the repository."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

from vis_core.system.git import git_argv, run_git

from .hostile import BWRAP_PROBLEM, git, make_repo, run_blocks

# Sandbox code turns the repository hostile, then asks the bundled git tools to read it.
HOSTILE = """
import os, stat
marker = {marker!r}
script = os.path.abspath("x.sh")
open(script, "w").write("#!/bin/sh\\necho ran $0 >> " + marker + "\\ncat\\n")
os.chmod(script, 0o755)
os.makedirs(".git/hooks", exist_ok=True)
for hook in ("post-index-change", "post-checkout", "pre-commit", "fsmonitor-watchman"):
    open(".git/hooks/" + hook, "w").write("#!/bin/sh\\necho hook >> " + marker + "\\n")
    os.chmod(".git/hooks/" + hook, 0o755)
open(".gitattributes", "w").write("* filter=evil diff=evil\\n")
with open(".git/config", "a") as config:
    config.write(
        "[core]\\n\\tfsmonitor = " + script + "\\n\\tpager = " + script + "\\n"
        "\\tsshCommand = " + script + "\\n"
        "[diff]\\n\\texternal = " + script + "\\n"
        "[diff \\"evil\\"]\\n\\ttextconv = " + script + "\\n\\tcommand = " + script + "\\n"
        "[filter \\"evil\\"]\\n\\tclean = " + script + "\\n\\tsmudge = " + script + "\\n"
        "[log]\\n\\tshowSignature = true\\n[gpg]\\n\\tprogram = " + script + "\\n"
    )
open("notes.txt", "a").write("two\\n")
"""
READ = """
status = await git.status()
diff = await git.diff()
log = await git.log()
blame = await git.blame("notes.txt")
print(len(status.files), diff.added, len(log.commits), len(blame.lines))
"""


@pytest.mark.usefixtures("jail_off")  # explicitly: a block writes .git
async def test_hostile_repo_config_runs_nothing_on_the_host(
    workspace: Path, tmp_path: Path
) -> None:
    make_repo(workspace)
    marker = tmp_path / "escaped.txt"
    outcome = await run_blocks(workspace, tmp_path, HOSTILE.format(marker=str(marker)), READ)
    written, read = outcome.blocks
    assert written.error is None, written.error
    assert read.error is None, read.error
    assert read.stdout.split() == ["3", "1", "1", "2"]  # x.sh, .gitattributes, notes.txt
    assert not marker.exists(), marker.read_text()


@pytest.mark.skipif(BWRAP_PROBLEM is not None, reason=str(BWRAP_PROBLEM))
async def test_with_the_jail_on_git_runs_jailed_and_git_config_is_read_only(
    workspace: Path, tmp_path: Path, vis_home: Path
) -> None:
    make_repo(workspace)
    (vis_home / "config.toml").write_text("jail = true\n")
    marker = tmp_path / "escaped.txt"
    outcome = await run_blocks(workspace, tmp_path, HOSTILE.format(marker=str(marker)), READ)
    written, read = outcome.blocks
    assert written.error is not None and "Read-only file system" in written.error
    assert read.error is None, read.error
    assert not marker.exists()
    assert "fsmonitor" not in (workspace / ".git" / "config").read_text()


def test_git_argv_switches_off_every_program_key_and_repository_drivers(workspace: Path) -> None:
    make_repo(workspace)
    git(workspace, "config", "filter.lfsish.process", "evil")
    git(workspace, "config", "diff.pic.textconv", "evil")
    argv = git_argv(["status"], workspace)
    pairs = {argv[i + 1] for i, a in enumerate(argv) if a == "-c"}
    for pair in (
        "core.fsmonitor=",
        "core.hooksPath=/dev/null",
        "diff.external=",
        "core.pager=cat",
        "core.sshCommand=false",
        "filter.lfsish.process=",
        "diff.pic.textconv=cat",
        "protocol.allow=never",
    ):
        assert pair in pairs
    assert argv[:2] == [shutil.which("git"), "--no-pager"]  # never a checkout's ./git


@pytest.mark.skipif(BWRAP_PROBLEM is not None, reason=str(BWRAP_PROBLEM))
def test_jailed_git_starts_under_bubblewrap_and_cannot_write_git_config(workspace: Path) -> None:
    make_repo(workspace)
    argv = git_argv(["config", "core.fsmonitor", "evil"], workspace, jail_workspace=workspace)
    assert argv[0].endswith("bwrap")
    done = run_git(["config", "core.fsmonitor", "evil"], workspace, jail_workspace=workspace)
    assert done.returncode != 0
    assert "evil" not in (workspace / ".git" / "config").read_text()


def test_vis_own_git_runs_nothing_a_hostile_commondir_names(tmp_path: Path) -> None:
    """A ``.git/commondir`` (what a block could write without the jail) points git at another
    config with ``core.fsmonitor`` and ``core.hooksPath``: the person's own git runs it; Vis's
    git calls (status, checkpoints and /undo) do not."""
    from vis_core.tools.checkpoints import Checkpoints

    workspace = tmp_path / "ws"
    workspace.mkdir()
    make_repo(workspace)
    marker = tmp_path / "ran.txt"
    evil = tmp_path / "evil"
    shutil.copytree(workspace / ".git", evil / "common")
    (evil / "run.sh").write_text(f"#!/bin/sh\necho ran >> {marker}\n")
    (evil / "run.sh").chmod(0o755)
    with (evil / "common" / "config").open("a") as config:
        config.write(f"[core]\n\tfsmonitor = {evil / 'run.sh'}\n\thooksPath = {evil}\n")
    (workspace / ".git" / "commondir").write_text(f"{evil / 'common'}\n")
    points = Checkpoints(workspace, tmp_path / "private")
    points.take("t1", 1)
    (workspace / "notes.txt").write_text("changed\n")
    points.take("t2", 2)
    assert points.restore().turns == (2,)
    assert run_git(["status", "--short"], workspace).returncode == 0
    assert not marker.exists()
    git(workspace, "status", "--short")  # the person's own git: the attack is real
    assert marker.exists()


def test_a_driver_added_later_to_an_included_config_file_is_switched_off(tmp_path: Path) -> None:
    """``.git/config`` includes a file that does not exist yet; drivers written into it later
    (``.git/config`` itself unchanged) are switched off all the same: each git call reads the
    configuration again, so no listing kept from an earlier call (by repository and config
    file time) could let them run."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    make_repo(workspace)
    included, marker = tmp_path / "drivers.inc", tmp_path / "ran.txt"
    git(workspace, "config", "include.path", str(included))
    config = workspace / ".git" / "config"
    before = config.stat().st_mtime_ns
    assert run_git(["status", "--short"], workspace).returncode == 0

    script = tmp_path / "run.sh"
    script.write_text(f"#!/bin/sh\necho ran >> {marker}\ncat\n")
    script.chmod(0o755)
    included.write_text(
        f'[filter "evil"]\n\tclean = {script}\n[diff "evil"]\n\ttextconv = {script}\n'
    )
    (workspace / ".gitattributes").write_text("* filter=evil diff=evil\n")
    (workspace / "notes.txt").write_text("two\n")
    for args in (["diff", "--no-ext-diff"], ["add", "notes.txt"], ["status", "--short"]):
        assert run_git(args, workspace).returncode == 0
    assert config.stat().st_mtime_ns == before
    assert not marker.exists()
    git(workspace, "diff", "--cached")  # the person's own git: the attack is real
    assert marker.exists()


def test_git_diff_shows_the_diff_with_diff_external_switched_off(workspace: Path) -> None:
    """``diff.external`` is set empty on the command line, which plain ``git diff`` tried to
    run ("external diff died"): ``vis.git("diff")`` in an extension failed on every change.
    A repository's own ``diff.external`` still runs nothing."""
    make_repo(workspace)
    marker = workspace.parent / "ran.txt"
    script = workspace.parent / "run.sh"
    script.write_text(f"#!/bin/sh\necho ran >> {marker}\n")
    script.chmod(0o755)
    git(workspace, "config", "diff.external", str(script))
    (workspace / "notes.txt").write_text("one\ntwo\n")
    for args in (["diff"], ["--literal-pathspecs", "diff", "HEAD", "--", "notes.txt"]):
        done = run_git(args, workspace)
        assert done.returncode == 0, done.stderr
        assert b"+two" in done.stdout
    assert not marker.exists()


# The model's code makes a repository of its own in the workspace, whose config names a filter
# that git runs when it compares a file whose stat changed: what a submodule's config can do.
NESTED = """
import os
os.makedirs("sub", exist_ok=True)
open("sub/a.txt", "w").write("a\\n")
open("sub/.gitattributes", "w").write("* filter=evil\\n")
made = await shell(
    "cd sub && git init -q && git add -A && git -c user.name=m -c user.email=m@x commit -qm s"
    " && git config filter.evil.clean 'sh -c \\"echo ran >> ../escaped.txt; cat\\"'"
)
print((await made.wait(30)).exit_code)
open("sub/.git/HEAD", "w").write("{head}\\n")  # what the workspace's gitlink says
os.utime("sub/a.txt", (1, 1))
"""


async def test_a_submodules_own_config_runs_nothing_when_vis_looks_at_the_workspace(
    workspace: Path, tmp_path: Path
) -> None:
    """A checkout with a submodule whose own .git/config names a filter (no trust given, no
    model's help): the checkpoint before the first block ran ``git diff-files`` on the host,
    and git ran ``git status`` in the submodule, which ran the filter. git now never looks
    into a submodule for Vis."""
    make_repo(workspace)
    sub = workspace / "sub"
    sub.mkdir()
    git(sub, "init", "-q")
    (sub / "a.txt").write_text("a\n")
    (sub / ".gitattributes").write_text("* filter=evil\n")
    git(sub, "add", "-A")
    git(sub, "-c", "user.name=m", "-c", "user.email=m@x", "commit", "-q", "-m", "s")
    marker = tmp_path / "escaped.txt"
    git(sub, "config", "filter.evil.clean", f"sh -c 'echo ran >> {marker}; cat'")
    git(workspace, "add", "sub")
    git(workspace, "commit", "-q", "-m", "a submodule")
    os.utime(sub / "a.txt", (1, 1))  # its stat differs from its index
    outcome = await run_blocks(workspace, tmp_path, "print('any block')")
    assert outcome.blocks[0].stdout == "any block\n", outcome.blocks[0].error
    assert not marker.exists(), marker.read_text()


@pytest.mark.skipif(BWRAP_PROBLEM is not None, reason=str(BWRAP_PROBLEM))
async def test_a_jailed_block_that_makes_a_submodule_runs_nothing_on_the_host(
    workspace: Path, tmp_path: Path, vis_home: Path
) -> None:
    """The jail leaves ``sub/.git`` writable: the model's code made a repository there with a
    filter in its config, under an uninitialised submodule; the next checkpoint's git ran the
    filter on the host, outside the jail, where it could read Vis's environment and the
    person's files."""
    make_repo(workspace)
    head = "1111111111111111111111111111111111111111"
    git(workspace, "update-index", "--add", "--cacheinfo", f"160000,{head},sub")
    git(workspace, "commit", "-q", "-m", "an uninitialised submodule")
    (vis_home / "config.toml").write_text("jail = true\n")
    planted = await run_blocks(workspace, tmp_path, NESTED.format(head=head))
    assert planted.blocks[0].stdout == "0\n", planted.blocks[0].error
    again = await run_blocks(workspace, tmp_path, "print('next turn')")
    assert again.blocks[0].stdout == "next turn\n", again.blocks[0].error
    marker = workspace / "escaped.txt"  # the filter writes beside the submodule
    assert not marker.exists(), marker.read_text()


def test_git_in_a_folder_that_is_gone_says_so_not_that_git_is_missing(tmp_path: Path) -> None:
    """Before, a missing working folder (a draft's deleted workspace) read 'git is not on
    PATH; install git to use these tools' (found by a tester)."""
    from vis_core.system.git import GitFailed

    gone = tmp_path / "gone"
    with pytest.raises(GitFailed) as failed:
        run_git(["status"], gone)
    assert str(failed.value) == f"git cannot run in {gone}: that folder is gone"


def test_only_a_command_that_may_start_a_driver_lists_them_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every git command ran ``git config --list`` first, for the drivers to switch off: 102
    of 213 git processes in one drafts test. One that reads no file of the working tree and
    compares, merges and fetches nothing cannot start one, and now runs alone; one that may
    (a ``cat-file`` asked to convert, a ``worktree add``, a diff) still lists them first, and
    the filter the repository names does not run."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    make_repo(workspace)
    marker = tmp_path / "ran.txt"
    (workspace / "clean.sh").write_text(f"#!/bin/sh\necho ran >> {marker}\ncat\n")
    (workspace / "clean.sh").chmod(0o755)
    (workspace / ".gitattributes").write_text("* filter=x diff=x merge=x\n")
    for key in ("filter.x.clean", "filter.x.smudge", "diff.x.textconv", "merge.x.driver"):
        git(workspace, "config", key, str(workspace / "clean.sh"))
    wrapper, log = tmp_path / "bin" / "git", tmp_path / "git.log"
    wrapper.parent.mkdir()
    wrapper.write_text(f'#!/bin/sh\necho "$@" >> {log}\nexec {shutil.which("git")} "$@"\n')
    wrapper.chmod(0o755)
    monkeypatch.setenv("PATH", f"{wrapper.parent}{os.pathsep}{os.environ['PATH']}")
    (workspace / "new.txt").write_text("new\n")  # staged: a command that writes the index
    git(workspace, "-c", "filter.x.clean=cat", "add", "new.txt")  # (write-tree) writes it
    old = time.time() - 10 * 365 * 86400  # every entry racily clean: compared through the filter
    os.utime(workspace / ".git" / "index", (old, old))
    head = git(workspace, "rev-parse", "HEAD").strip()
    tree = git(workspace, "rev-parse", "HEAD^{tree}").strip()
    steps = [  # the commands Vis runs without a listing, each as it runs them
        (["symbolic-ref", "-q", "HEAD"], False),
        (["--literal-pathspecs", "cat-file", "blob", "HEAD:notes.txt"], False),
        (["cat-file", "--batch-check"], False),
        (["worktree", "list", "--porcelain"], False),
        (["worktree", "prune"], False),
        (["check-ignore", "-v", "-z", "--stdin"], False),
        (["commit-tree", tree, "-p", head, "-m", "probe"], False),
        (["config", "user.email"], False),
        (["for-each-ref"], False),
        (["show-ref"], False),
        (["ls-tree", "-r", "-z", "--full-tree", tree], False),
        (["merge-base", head, head], False),
        (["update-ref", "refs/heads/probe", head], False),
        (["cat-file", "--filters", "HEAD:notes.txt"], True),
        (["write-tree"], True),
        (["worktree", "add", str(tmp_path / "tree")], True),
        (["diff-files", "--name-only"], True),
    ]
    for args, listed in steps:
        log.unlink(missing_ok=True)
        feed = b"notes.txt\0" if "--stdin" in args else f"{head}\n".encode()
        assert run_git(args, workspace, feed=feed).returncode in (0, 1), args
        ran = log.read_text().splitlines()
        assert len(ran) == 1 + listed and ("config --list" in ran[0]) == listed, (args, ran)
    assert not marker.exists(), marker.read_text()


# A block makes a repository of its own, whose configuration names a filter and a textconv.
INNER = """
import os, subprocess
subprocess.run(["git", "init", "-q", "inner"], check=True)
script = os.path.abspath("run.sh")
open(script, "w").write("#!/bin/sh\\necho ran $0 >> " + {marker!r} + "\\ncat\\n")
os.chmod(script, 0o755)
open("inner/.gitattributes", "w").write("* filter=x diff=x\\n")
with open("inner/.git/config", "a") as config:
    config.write(
        '[filter "x"]\\n\\tclean = ' + script + '\\n[diff "x"]\\n\\ttextconv = ' + script + "\\n"
    )
open("inner/notes.txt", "w").write("one\\n")
"""
# An extension that passes git's arguments on, as one may from the model.
PASS_ON = '''
import vis_core.extension as vis


def run(args: list[str]) -> int:
    """git ``args`` in the workspace, through Vis's git."""
    return vis.git(*args).returncode


vis.register_extension(vis.Extension(
    name="passon", alias="passon", description="Runs git.", symbols=[vis.Symbol(run)],
))
'''
GIT_IN_INNER = """
for args in (["add", "."], ["status"], ["diff", "--cached"], ["diff"]):
    print(await passon.run(["-C", "inner", *args]))
    if args == ["add", "."]:
        open("inner/notes.txt", "a").write("two\\n")
"""


@pytest.mark.usefixtures("jail_off")  # git runs on the host
async def test_git_minus_c_into_a_repository_a_block_made_runs_none_of_its_drivers(
    workspace: Path, tmp_path: Path, vis_home: Path
) -> None:
    """``vis.git("-C", "inner", …)`` listed the drivers to switch off in the workspace, not in
    ``inner``, where git ran: the filter and textconv a block wrote into ``inner``'s
    configuration ran on the host. Now they are listed where git runs, and switched off."""
    (vis_home / "extensions").mkdir()
    (vis_home / "extensions" / "passon.py").write_text(PASS_ON)
    marker = tmp_path / "ran.txt"
    outcome = await run_blocks(workspace, tmp_path, INNER.format(marker=str(marker)), GIT_IN_INNER)
    made, ran = outcome.blocks
    assert made.error is None and ran.error is None, (made.error, ran.error)
    assert ran.stdout.split() == ["0", "0", "0", "0"]
    assert not marker.exists(), marker.read_text()
    git(workspace, "-C", "inner", "diff")  # the person's own git: the attack is real
    assert marker.exists()


@pytest.mark.parametrize(
    "where",
    [
        ["-C", "inner"],
        ["--git-dir=inner/.git", "--work-tree=inner"],
        ["--git-dir", "inner/.git", "--work-tree", "inner"],
        ["-C", "in", "-C", "ner"],
    ],
)
def test_git_run_in_another_repository_runs_none_of_its_drivers(
    tmp_path: Path, where: list[str]
) -> None:
    """However git is sent to another repository than the one of its working folder (``-C``,
    ``--git-dir`` and ``--work-tree``, as one option or two), the drivers that repository's
    configuration names are switched off."""
    workspace, marker = tmp_path / "ws", tmp_path / "ran.txt"
    inner = workspace / "in" / "ner"
    inner.mkdir(parents=True)
    make_repo(workspace)
    make_repo(inner)
    for name in (Path("inner"), Path("in") / "ner"):
        if not (workspace / name).exists():
            (workspace / name).symlink_to(inner)
    script = tmp_path / "run.sh"
    script.write_text(f"#!/bin/sh\necho ran >> {marker}\ncat\n")
    script.chmod(0o755)
    (inner / ".gitattributes").write_text("* filter=x diff=x\n")
    git(inner, "config", "filter.x.clean", str(script))
    git(inner, "config", "diff.x.textconv", str(script))
    (inner / "notes.txt").write_text("two\n")
    for args in (["add", "notes.txt"], ["status", "--short"], ["diff", "HEAD"]):
        assert run_git([*where, *args], workspace).returncode == 0, args
    assert not marker.exists(), marker.read_text()
    git(inner, "diff", "HEAD")  # the person's own git: the attack is real
    assert marker.exists()


@pytest.mark.parametrize(
    "args",
    [
        ["--config-env", "core.editor=HOME", "diff-files"],  # as two arguments, as git takes it
        ["--attr-source", "config", "diff"],  # git 2.40 and later: a tree named "config"
        ["--super-prefix", "config/", "diff"],
    ],
)
def test_a_valued_option_of_git_is_not_taken_for_its_command(
    workspace: Path, args: list[str]
) -> None:
    """git takes ``--config-env``, ``--attr-source`` and ``--super-prefix`` with their value
    as the next argument too. Vis took that value for git's command: ``config`` named no
    driver to switch off, and a ``diff-files`` (which reads no ``diff.ignoreSubmodules``)
    got no ``--ignore-submodules=all`` and looked into submodules. Now the command after the
    value is guarded as any other."""
    make_repo(workspace)
    git(workspace, "config", "diff.x.textconv", "evil")
    argv = git_argv(args, workspace)
    command = argv.index(args[2])
    assert argv[command + 1] == "--ignore-submodules=all"
    assert "diff.x.textconv=cat" in argv[:command]
