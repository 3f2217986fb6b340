"""Project values wait for trust; a value Vis cannot read, from any source, stops the run."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from cli_support import script as _script
from cli_support import vis as _vis
from warm_servers import vis_command

from vis_core.model.turn import TurnStatus
from vis_core.paths import TrustStore, VisPaths
from vis_core.settings.values import Source

from .support import open_host, user_extensions

LAX_TOGGLES = """\
toggles:
  memory_limit: "0"
  process_limit: "0"
  block_time_limit: "0"
  max_iterations: "200"
  report_details: true
"""
LAX_SETTINGS = """\
[settings]
introspection = false
summarize_steps = false
steering_mode = "control"
"""
USER_CONFIG = 'max_iterations = "10"\nmemory_limit = "1024"\n'


def _lax_project(workspace: Path) -> None:
    (workspace / "vis.yml").write_text(LAX_TOGGLES, encoding="utf-8")
    (workspace / ".vis").mkdir(exist_ok=True)
    (workspace / ".vis" / "settings.toml").write_text(LAX_SETTINGS, encoding="utf-8")


async def test_an_untrusted_project_sets_no_value_at_all_until_trusted(workspace: Path) -> None:
    VisPaths.from_env().ensure().config_file.write_text(USER_CONFIG, encoding="utf-8")
    user_extensions("reports")
    _lax_project(workspace)
    host = await open_host(workspace)
    try:
        expected = {
            "memory_limit": "1024",
            "process_limit": "4096",
            "block_time_limit": "1800",
            "max_iterations": "10",
            "introspection": True,
            "summarize_steps": True,
            "report_details": False,  # a user extension's setting: the project waits too
            "steering_mode": "vibe",
        }
        for setting_id, value in expected.items():
            assert host.settings.get(setting_id, None) == value, setting_id
            assert host.settings.resolve(setting_id).source is not Source.PROJECT
        limits = host.space.child_limits()
        assert (limits.memory_mb, limits.processes) == (1024, 4096)
        (note,) = [n for n in host.startup_notes() if "is not trusted" in n]  # one says it all
        yml = note.split("vis.yml (sets ", 1)[1].split(")", 1)[0]
        for setting_id in ("block_time_limit", "max_iterations", "memory_limit", "report_details"):
            assert setting_id in yml
        assert ".vis/settings.toml (sets introspection, steering_mode, summarize_steps)" in note
        assert f"run `vis trust {workspace}`" in note
        with pytest.raises(ValueError, match="ignored at project scope until you trust"):
            await host.settings.set("max_iterations", "200", "project")
    finally:
        await host.close()
    TrustStore(VisPaths.from_env()).trust(workspace)
    host = await open_host(workspace)
    try:
        assert host.settings.get("memory_limit", None) == "0"
        assert host.settings.get("max_iterations", None) == "200"
        assert host.settings.get("report_details", None) is True
        assert host.settings.get("introspection", None) is False
        assert not any("not trusted" in note for note in host.startup_notes())
    finally:
        await host.close()


MAP_2_GIB = """\
import mmap
try:
    mmap.mmap(-1, 2 * 1024 ** 3, flags=mmap.MAP_PRIVATE)  # reserved, never touched
    outcome = "mapped"
except OSError:
    outcome = "refused"
open("outcome.txt", "w").write(outcome)
"""


def _run(workspace: Path, vis_home: Path, tmp_path: Path, *extra: str, blocks: int = 12):
    steps = [{"code": MAP_2_GIB}] + [{"code": "print(1)"}] * (blocks - 1) + [{"text": "done"}]
    script = _script(tmp_path, steps)
    return _vis(
        "run",
        "--provider",
        "scripted",
        "--script",
        str(script),
        *extra,
        "go",
        cwd=workspace,
        env_home=vis_home,
    )


def test_vis_run_keeps_the_users_limits_in_an_untrusted_project_and_names_what_it_skipped(
    workspace: Path, vis_home: Path, tmp_path: Path
) -> None:
    (vis_home / "config.toml").write_text(USER_CONFIG, encoding="utf-8")
    _lax_project(workspace)
    done = _run(workspace, vis_home, tmp_path)
    assert done.returncode == 1, done.stderr  # stopped at the user's 10 iterations
    assert "stopped after 10 iterations" in done.stderr
    assert (workspace / "outcome.txt").read_text() == "refused"  # the user's 1024 MB held
    (note,) = [line for line in done.stderr.splitlines() if "not trusted" in line]
    yml = note.split("vis.yml (sets ", 1)[1].split(")", 1)[0]
    for setting_id in ("block_time_limit", "max_iterations", "memory_limit", "process_limit"):
        assert setting_id in yml
    assert ".vis/settings.toml (sets introspection, steering_mode, summarize_steps)" in note

    trusted = _vis("trust", str(workspace), cwd=workspace, env_home=vis_home)
    assert trusted.returncode == 0, trusted.stderr
    done = _run(workspace, vis_home, tmp_path)
    assert done.returncode == 0, done.stderr  # the project's 200 iterations apply
    assert (workspace / "outcome.txt").read_text() == "mapped"  # and its memory_limit 0
    assert "not trusted" not in done.stderr


def _refused(done, *names: str) -> None:
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    for name in names:
        assert name in done.stderr, done.stderr


def test_a_toggle_vis_cannot_read_stops_the_run(
    workspace: Path, vis_home: Path, tmp_path: Path
) -> None:
    for toggle, names in (
        ("jail=ture", ("--toggles jail='ture'", "takes true or false")),
        ("memory_limit=lots", ("--toggles memory_limit='lots'", "takes one of")),
        ("max_iterations=999", ("--toggles max_iterations='999'",)),
        ("jial=false", ("no setting 'jial'",)),
        ("summarize_steps=maybe", ("--toggles summarize_steps='maybe'",)),
        ("jail", ("'jail' is not ID=VALUE",)),
    ):
        done = _run(workspace, vis_home, tmp_path, "--toggles", toggle, blocks=1)
        _refused(done, *names)
        assert not (workspace / "outcome.txt").exists()  # no block ran
        # said once, where to fix it (jail=ture was said three times, the first asking to
        # 'Fix the file named above')
        (said,) = [line for line in done.stderr.splitlines() if names[0] in line]
        assert said.startswith("vis run: Vis runs nothing while a setting it cannot read")
        assert said.endswith(
            "Fix it on the command line (or leave that --toggles out), then start again."
        )
        assert "file" not in said


def test_a_value_vis_cannot_read_stops_the_run_from_every_source(
    workspace: Path, vis_home: Path, tmp_path: Path
) -> None:
    config = vis_home / "config.toml"
    config.write_text('process_limit = "lots"\n', encoding="utf-8")
    _refused(_run(workspace, vis_home, tmp_path, blocks=1), str(config), "process_limit")
    config.write_text("jail = 1\n", encoding="utf-8")
    _refused(_run(workspace, vis_home, tmp_path, blocks=1), str(config), "'jail'")
    config.unlink()

    (workspace / "vis.yml").write_text("toggles:\n  block_time_limit: soon\n", encoding="utf-8")
    done = _run(workspace, vis_home, tmp_path, blocks=1)
    assert done.returncode == 0, done.stderr  # untrusted: the value is skipped, not read
    assert "block_time_limit" in done.stderr
    (workspace / "outcome.txt").unlink()
    assert _vis("trust", str(workspace), cwd=workspace, env_home=vis_home).returncode == 0
    _refused(_run(workspace, vis_home, tmp_path, blocks=1), "block_time_limit", "'soon'")
    (workspace / "vis.yml").unlink()

    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(VIS_HOME=str(vis_home), VIS_MODEL="bad model")
    done = subprocess.run(
        vis_command("run", "go", env=env),
        cwd=workspace,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    _refused(done, "bad model")


async def test_a_turn_stops_on_a_toggle_vis_cannot_read(workspace: Path, tmp_path: Path) -> None:
    script = _script(tmp_path, [{"code": "open('ran.txt', 'w').write('x')"}, {"text": "ok"}])
    host = await open_host(workspace, script=script, toggles=("jail=ture",))
    try:
        # the app's start says it once: the jail's refusal and the toggle's problem were more
        (said,) = [note for note in host.startup_notes() if "ture" in note]
        assert "Fix it on the command line" in said
        session = await host.new_session()
        ended = await session.submit("go")
        assert ended.status is TurnStatus.FAILED
        assert "--toggles jail='ture'" in (ended.error or "")
        assert not (workspace / "ran.txt").exists()
    finally:
        await host.close()


async def test_a_skipped_key_that_is_not_a_setting_name_is_only_counted(workspace: Path) -> None:
    (workspace / "vis.yml").write_text(
        'toggles:\n  jail: false\n  "\\e]52;c;eA==\\a[x](http://e)": 1\n', encoding="utf-8"
    )
    host = await open_host(workspace)
    try:
        (note,) = [n for n in host.startup_notes() if "vis.yml (sets" in n]
        assert "vis.yml (sets jail, 1 other key(s))" in note
        assert "\x1b" not in note and "http" not in note
    finally:
        await host.close()


async def test_a_config_toml_fixed_while_vis_runs_counts_from_the_next_turn(
    workspace: Path, tmp_path: Path
) -> None:
    config = VisPaths.from_env().ensure().config_file
    config.write_text('jail = true\nmodel = "scripted/script\n', encoding="utf-8")
    block = {"code": "open('ran.txt', 'w').write('x')"}
    host = await open_host(workspace, script=_script(tmp_path, [block, {"text": "ok"}]))
    try:
        session = await host.new_session()
        ended = await session.submit("go")
        assert ended.status is TurnStatus.FAILED
        error = ended.error or ""
        # what is wrong and where, with no class name and no word of a save that never was
        assert error.startswith("Vis runs nothing while a setting it cannot read"), error
        assert f"{config} is not valid TOML" in error
        assert "save the setting" not in error
        assert error.endswith("Fix the value where it is set (or remove it), then try again.")
        config.write_text("jail = true\n", encoding="utf-8")  # fixed, as the message asks
        ended = await session.submit("go")
        assert ended.status is TurnStatus.COMPLETED, ended.error
        # and its block ran: the sandbox's refusal was the one of the start ("start Vis
        # again"), the jail's value being the same before and after
        assert (workspace / "ran.txt").read_text() == "x"
    finally:
        await host.close()
