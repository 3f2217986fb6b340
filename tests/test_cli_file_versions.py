"""Version numbers outlive the process: a `vis run --continue` numbers on from the versions the
session showed before, so a patch against one is checked against that content."""

from __future__ import annotations

from pathlib import Path

from cli_support import script, vis

SOURCE = "def f():\n    return 1\n\n\ndef g():\n    return 10\n"


def _run(tmp_path: Path, name: str, code: str, *args: str, cwd: Path, home: Path):
    given = script(tmp_path, [{"code": code}, {"text": "ok"}])
    done = vis(
        "run", *args, "--provider", "scripted", "--script", str(given), name, cwd=cwd, env_home=home
    )
    assert done.returncode == 0, done.stderr
    return done


def test_a_resumed_session_numbers_on_and_checks_a_patch_against_the_earlier_read(
    workspace: Path, vis_home: Path, tmp_path: Path
) -> None:
    (workspace / "a.py").write_text(SOURCE)
    first = 'r = await cat("a.py")\nassert r.startswith("a.py @1\\n"), r\nprint("read")'
    _run(tmp_path, "read", first, cwd=workspace, home=vis_home)
    changed = "import os\nimport sys\n" + SOURCE
    (workspace / "a.py").write_text(changed)  # outside Vis
    second = (
        'r = await cat("a.py", 1, 1)\nassert r.startswith("a.py @2 "), r\n'
        "try:\n"
        '    await patch("a.py", 1, [{"start": 6, "end": 6, "text": "    return 20\\n"}])\n'
        "except Exception as e:\n"
        '    assert "changed since you read @1 (it is @2 now)" in str(e), e\n'
        '    print("refused")'
    )
    done = _run(tmp_path, "go", second, "--continue", cwd=workspace, home=vis_home)
    assert "refused" in done.stdout, done.stdout
    assert (workspace / "a.py").read_text() == changed  # not line 6 of the new file
