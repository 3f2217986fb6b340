"""The jail's reading of git configuration files: the values it finds are the ones git itself
reads from the same file, in the syntax a hostile checkout may use to hide one."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from vis_core.system.git_control import GitLooks, config_entries

TRICKY = [
    '[core]\n\thooksPath = ".husky/_" # a comment\n',
    "[core] hooksPath = hooks ; on the header's line\n",
    "[CoRe]\n  HOOKSPATH= a\\\n b\n",
    '[include]\n\tpath = "../with \\"quote\\".cfg"\n',
    '[includeIf "gitdir:~/x]y/"]\n\tpath = ../cond.cfg\n',
    "[include]\n\tpath = one.cfg\n\tpath = two.cfg\n[core.sub]\n\thooksPath = nothere\n",
]


@pytest.mark.parametrize("text", TRICKY)
def test_it_reads_the_values_git_reads(tmp_path: Path, text: str) -> None:
    file = tmp_path / "config"
    file.write_text(text)
    wanted = {"core.hookspath", "include.path", "includeif.path"}
    ours = [
        f"{section}.{key}={value}"
        for section, key, value in config_entries(text)
        if f"{section}.{key}" in wanted
    ]
    listed = subprocess.run(
        ["git", "config", "--file", str(file), "--no-includes", "--list", "-z"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split("\0")
    theirs = []
    for entry in filter(None, listed):
        name, _, value = entry.partition("\n")
        section, key = name.split(".", 1)[0], name.rsplit(".", 1)[-1]
        if f"{section}.{key}" in wanted:
            theirs.append(f"{section}.{key}={value}")
    assert ours == theirs


def test_an_included_file_is_followed_and_one_not_there_is_absent(workspace: Path) -> None:
    """``.git/config`` includes ``a.cfg`` (in the workspace), which includes ``b.cfg`` (not
    there yet) and sets ``core.hooksPath``: both files and the hooks folder are found."""
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    (workspace / "a.cfg").write_text("[include]\n\tpath = b.cfg\n[core]\n\thooksPath = hooks\n")
    (workspace / "hooks").mkdir()
    subprocess.run(["git", "-C", str(workspace), "config", "include.path", "../a.cfg"], check=True)
    control = GitLooks().control(workspace)
    root = workspace.resolve()
    assert {root / "a.cfg", root / "hooks"} <= set(control.existing)
    assert control.absent == (root / "b.cfg",)
