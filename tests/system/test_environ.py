"""One builder of a child's environment: each kind of child gets exactly the names it got
before the builders were merged, the project's values and its own on top, and never a key."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from vis_core.system.environ import Audience, child_environment
from vis_core.system.git import git_environment
from vis_core.system.quiet import HOLD_ENV, hold_file
from vis_core.system.shell import ShellManager

HOST = {
    "PATH": "/usr/local/bin:/usr/bin",
    "HOME": "/home/person",
    "USER": "person",
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
    "LC_TIME": "en_GB.UTF-8",
    "TERM": "xterm",
    "COLORTERM": "truecolor",
    "VIRTUAL_ENV": "/home/person/.venv",
    "VIS_HOME": "/home/person/.vis",
    "XDG_CONFIG_HOME": "/home/person/.config",
    "LD_LIBRARY_PATH": "/opt/lib",
    "PYTHONPATH": "/checkout",
    "GIT_DIR": "/elsewhere/.git",
    "ANTHROPIC_API_KEY": "sk-ant-secret-value",
    "OPENAI_API_KEY": "sk-openai-secret-value",
    "GITHUB_TOKEN": "ghp_secret_value",
}
KEYS = {"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GITHUB_TOKEN"}
QUIET = {"PAGER": "cat", "GIT_PAGER": "cat", "PYTHONUNBUFFERED": "1"}


def test_the_models_children_get_the_base_quiet_pagers_project_then_their_own() -> None:
    env = child_environment({"ACME_URL": "https://acme", "PAGER": "less"}, {"X": "1"}, HOST)
    assert env == {
        "PATH": "/usr/local/bin:/usr/bin",
        "HOME": "/home/person",
        "USER": "person",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "LC_TIME": "en_GB.UTF-8",
        "TERM": "xterm",
        "COLORTERM": "truecolor",
        "VIRTUAL_ENV": "/home/person/.venv",
        **QUIET,
        "PAGER": "less",  # the project's value wins over the quiet default
        "ACME_URL": "https://acme",
        "X": "1",
    }


def test_vis_workers_get_where_vis_keeps_its_files_and_no_pagers() -> None:
    env = child_environment({"PROJECT_NAME": "acme"}, host=HOST, audience=Audience.VIS)
    assert env == {
        "PATH": "/usr/local/bin:/usr/bin",
        "HOME": "/home/person",
        "USER": "person",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "TERM": "xterm",
        "VIS_HOME": "/home/person/.vis",
        "XDG_CONFIG_HOME": "/home/person/.config",
        "VIRTUAL_ENV": "/home/person/.venv",
        HOLD_ENV: hold_file(),  # the file this Vis locks while it holds the model
        "PROJECT_NAME": "acme",
    }


def test_an_interpreter_helper_gets_the_default_path_and_its_libraries_only() -> None:
    env = child_environment(host=HOST, audience=Audience.INTERPRETER)
    assert env == {
        "PATH": os.defpath,
        "LD_LIBRARY_PATH": "/opt/lib",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
    }


def test_an_extensions_unjailed_child_inherits_its_process_environment() -> None:
    env = child_environment({"P": "1"}, {"E": "2"}, HOST, audience=Audience.INHERITED)
    assert env == {**HOST, **QUIET, "P": "1", "E": "2"}


@pytest.mark.parametrize("audience", [Audience.MODEL, Audience.VIS, Audience.INTERPRETER])
def test_no_key_and_no_python_or_git_override_of_the_host_passes(audience: Audience) -> None:
    env = child_environment(host=HOST, audience=audience)
    assert not KEYS & env.keys()
    assert "PYTHONPATH" not in env and "GIT_DIR" not in env


def test_git_gets_the_models_base_without_what_makes_git_run_programs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(os, "environ", dict(HOST))
    env = git_environment()
    assert not KEYS & env.keys()
    assert "GIT_DIR" not in env and "PAGER" not in env
    assert env["GIT_CONFIG_NOSYSTEM"] == "1" and env["GIT_PAGER"] == "cat"
    assert env["HOME"] == "/home/person"


async def test_a_real_shell_sees_exactly_what_the_builder_gives(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-secret-value")
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_secret_value")
    shells = ShellManager(environment={"ACME_URL": "https://acme"})
    dump = f"{sys.executable} -I -c 'import os, json; print(json.dumps(dict(os.environ)))'"
    handle = await shells.start(dump, cwd=tmp_path, output_dir=tmp_path)
    status = await handle.wait(30)
    await shells.close_all()
    seen = json.loads(status.output)
    for name in ("PWD", "SHLVL", "_"):  # what bash sets itself
        seen.pop(name, None)
    assert seen == child_environment({"ACME_URL": "https://acme"})
    assert not KEYS & seen.keys()
