"""What `vis run` says fits where the person is: overflow advice without the app's /new, a
--script that would be ignored, one compact JSON line per command."""

from __future__ import annotations

import json
import re
from pathlib import Path

from cli_support import script, vis

DOC = Path(__file__).resolve().parents[1] / "docs" / "json-events.md"


def _scripted(tmp_path: Path) -> list[str]:
    return ["--provider", "scripted", "--script", str(script(tmp_path, [{"text": "ok"}]))]


def test_a_request_too_long_for_the_model_gets_advice_vis_run_can_follow(
    workspace: Path, vis_home: Path, tmp_path: Path
) -> None:
    (vis_home / "config.toml").write_text('[models."scripted/script"]\ninput_limit = 5000\n')
    big = "word " * 8000
    first = vis("run", *_scripted(tmp_path), "-", cwd=workspace, env_home=vis_home, input=big)
    assert first.returncode == 1, first.stderr
    assert "Send less" in first.stderr and "vis run --model PROVIDER/MODEL" in first.stderr
    # the app's /new and /compact, and settled work a first request does not have
    assert "/new" not in first.stderr and "/compact" not in first.stderr
    assert vis("run", *_scripted(tmp_path), "hi", cwd=workspace, env_home=vis_home).returncode == 0
    again = vis(
        "run", "--continue", *_scripted(tmp_path), "-", cwd=workspace, env_home=vis_home, input=big
    )
    assert again.returncode == 1, again.stderr
    # Vis folded the earlier turn and it is still too long: folding more is no advice
    assert "still too long after Vis folded" in again.stderr and "Send less" in again.stderr
    assert "/new" not in again.stderr


def test_a_script_without_the_scripted_provider_is_said(
    workspace: Path, vis_home: Path, tmp_path: Path
) -> None:
    given = script(tmp_path, [{"text": "ok"}])
    result = vis("run", "--script", str(given), "hi", cwd=workspace, env_home=vis_home)
    assert result.returncode == 2
    assert "--script FILE is read by the scripted provider only" in result.stderr
    assert "add --provider scripted" in result.stderr
    assert "No model is configured" not in result.stderr
    named = vis(
        "run",
        "--model",
        "scripted/script",
        "--script",
        str(given),
        "hi",
        cwd=workspace,
        env_home=vis_home,
    )
    assert named.returncode == 0 and named.stdout == "ok\n", named.stderr


def test_a_command_prints_one_compact_json_line(
    workspace: Path, vis_home: Path, tmp_path: Path
) -> None:
    result = vis("run", "--json", *_scripted(tmp_path), "/goal é", cwd=workspace, env_home=vis_home)
    assert result.returncode == 0, result.stderr
    (line,) = result.stdout.splitlines()
    assert line == (
        '{"type":"CommandResult","command":"/goal é","ok":true,"title":"Goal set","body":"é"}'
    )
    documented = re.search(r"^\| `CommandResult` \| ([^|]*) \|", DOC.read_text(), re.MULTILINE)
    assert documented is not None
    keys = list(json.loads(line))
    assert ["type", *re.findall(r"`(\w+)`", documented.group(1))] == keys
