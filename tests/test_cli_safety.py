"""`vis run` and `vis doctor` against hostile text and broken input: text, named errors."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from cli_support import script as _script
from cli_support import vis as _vis
from warm_servers import vis_command

OSC52 = "\x1b]52;c;cm0gLXJmIH4=\x07"
HOSTILE = OSC52 + "\x1b]0;owned\x07\x1b[2J\x9b2J"


def vis(*args: str, cwd: Path, home: Path | str) -> subprocess.CompletedProcess[bytes]:
    """``vis ARGS`` with its output as bytes: what reaches the terminal, byte for byte."""
    return _vis(*args, cwd=cwd, env_home=home, text=False)


def test_vis_run_prints_control_sequences_as_text(
    workspace: Path, vis_home: Path, tmp_path: Path
) -> None:
    (workspace / f"file{HOSTILE[:8]}.txt").write_text("x")
    script = _script(
        tmp_path,
        [{"code": f"print({HOSTILE!r})\nprint(await ls('.'))"}, {"text": f"see {HOSTILE}"}],
    )
    for extra in ([], ["--json"]):
        done = vis(
            "run",
            *extra,
            "--provider",
            "scripted",
            "--script",
            str(script),
            "go",
            cwd=workspace,
            home=vis_home,
        )
        assert done.returncode == 0, done.stderr
        for stream in (done.stdout, done.stderr):
            assert b"\x1b" not in stream and b"\x07" not in stream
            assert "\x9b".encode() not in stream
        if extra:
            events = [json.loads(line) for line in done.stdout.decode().splitlines()]
            deltas = "".join(e.get("text", "") for e in events if e["type"] == "AssistantDelta")
            assert HOSTILE in deltas  # the JSON keeps the text exactly, escaped
        else:
            assert "\\x1b]52;c;" in done.stdout.decode()


@pytest.mark.parametrize(
    "content",
    [b'jail = true\nmodel = "\xff"\n', b"jail = [\n", b'jail = "yes"\n'],
    ids=["non-utf8", "malformed", "wrong-type"],
)
def test_doctor_reports_an_unreadable_jail_setting(
    workspace: Path, vis_home: Path, content: bytes
) -> None:
    (vis_home / "config.toml").write_bytes(content)
    done = vis("doctor", cwd=workspace, home=vis_home)
    out = done.stdout.decode()
    assert done.returncode == 1, out
    assert "jail        unknown" in out and str(vis_home / "config.toml") in out
    assert "uses its defaults" not in out  # the config line said so, the jail's said nothing runs
    assert b"Traceback" not in done.stderr + done.stdout
    assert (vis_home / "config.toml").read_bytes() == content


@pytest.mark.parametrize(
    ("relative", "content"),
    [
        ("vis.yml", b"toggles:\n  jail: \xfe\n"),
        (".vis/settings.toml", b'[settings]\nmax_iterations = "\xff"\n'),
        (".vis/settings.toml", b'[settings]\nmax_iterations = "many"\n'),
    ],
    ids=["vis.yml-non-utf8", "settings-non-utf8", "wrong-type"],
)
def test_bad_project_files_get_a_named_error_and_stay_as_they_are(
    workspace: Path, vis_home: Path, tmp_path: Path, relative: str, content: bytes
) -> None:
    target = workspace / relative
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(content)
    script = _script(tmp_path, [{"text": "hello"}])
    done = vis(
        "run", "--provider", "scripted", "--script", str(script), "hi", cwd=workspace, home=vis_home
    )
    err = done.stderr.decode()
    assert b"Traceback" not in done.stderr, err
    assert done.returncode == 0, err
    assert str(target) in err or relative in err, err
    if b"many" in content:  # the project is not trusted: its value is skipped, by name
        assert "max_iterations" in err and "not trusted" in err
    assert target.read_bytes() == content


def test_wrong_type_in_config_names_file_key_and_type(
    workspace: Path, vis_home: Path, tmp_path: Path
) -> None:
    (vis_home / "config.toml").write_text('max_iterations = "many"\n# keep me\n')
    script = _script(tmp_path, [{"text": "hello"}])
    done = vis(
        "run", "--provider", "scripted", "--script", str(script), "hi", cwd=workspace, home=vis_home
    )
    err = done.stderr.decode()  # a limit Vis cannot read stops the run (fail closed)
    assert done.returncode == 2 and b"Traceback" not in done.stderr, err
    assert str(vis_home / "config.toml") in err and "max_iterations" in err
    assert "one of" in err and "'many'" in err
    assert (vis_home / "config.toml").read_text() == 'max_iterations = "many"\n# keep me\n'


@pytest.mark.skipif(os.geteuid() == 0, reason="root can write a read-only folder")
def test_read_only_vis_home_is_a_named_error(workspace: Path, tmp_path: Path) -> None:
    home = tmp_path / "ro-home"
    home.mkdir()
    home.chmod(0o500)
    done = vis("run", "--provider", "scripted", "hi", cwd=workspace, home=home)
    assert b"Traceback" not in done.stderr, done.stderr.decode()
    assert done.returncode != 0 and str(home) in done.stderr.decode()


def test_empty_vis_home_uses_the_platform_folders(workspace: Path, tmp_path: Path) -> None:
    home = tmp_path / "user-home"
    home.mkdir()
    env_home = {"HOME": str(home), "XDG_CONFIG_HOME": "", "XDG_DATA_HOME": ""}
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(env_home, VIS_HOME="")
    done = subprocess.run(
        vis_command("doctor", env=env),
        cwd=workspace,
        env=env,
        capture_output=True,
        timeout=120,
    )
    assert b"Traceback" not in done.stderr + done.stdout, done.stderr.decode()
    assert str(home) in done.stdout.decode()


def test_unusable_vis_home_is_a_named_error(workspace: Path, tmp_path: Path) -> None:
    home = tmp_path / "a-file"
    home.write_text("not a folder")
    done = vis("run", "--provider", "scripted", "--script", "x", "hi", cwd=workspace, home=home)
    assert b"Traceback" not in done.stderr, done.stderr.decode()
    assert done.returncode == 2 and str(home) in done.stderr.decode()
    assert "VIS_HOME" in done.stderr.decode()
