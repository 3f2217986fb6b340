"""An unjailed block cannot read Vis's environment (API keys) through ``/proc``; doctor says so."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from cli_support import script, vis

# The block walks up from its own parent to the process running vis_core.cli (Vis) and reads
# its environment: the way a model's code would reach the keys Vis holds.
READ_VIS_ENVIRON = """
import os
pid = os.getppid()
while pid > 1:
    if b"vis_core.cli" in open(f"/proc/{pid}/cmdline", "rb").read():
        break
    pid = int(open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[1])
try:
    data = open(f"/proc/{pid}/environ", "rb").read()
    print("READ", data.decode("utf-8", "replace"))
except PermissionError as exc:
    print("DENIED", type(exc).__name__)
"""


def _without_capabilities() -> list[str]:
    """As root, run Vis with no capabilities, as a plain user runs it: root keeps
    CAP_SYS_PTRACE and reads any process (``vis doctor`` says so); a plain user has none."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    assert setpriv is not None, "setpriv (util-linux) is needed to run this test as root"
    return [setpriv, "--inh-caps=-all", "--bounding-set=-all"]


def test_an_unjailed_block_cannot_read_the_vis_process_environment(
    workspace: Path, vis_home: Path, tmp_path: Path
) -> None:
    path = script(tmp_path, [{"code": READ_VIS_ENVIRON}, {"text": "done"}])
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env |= {"VIS_HOME": str(vis_home), "ANTHROPIC_API_KEY": "sk-ant-visible-marker-4711"}
    argv = [sys.executable, "-m", "vis_core.cli", "run", "--json", "--toggles", "jail=false"]
    argv += ["--provider", "scripted", "--script", str(path), "go"]
    result = subprocess.run(
        _without_capabilities() + argv,
        cwd=workspace,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    outputs = [
        json.loads(line)
        for line in result.stdout.splitlines()
        if '"ActivityEnded"' in line or '"BlockFinished"' in line
    ]
    text = json.dumps(outputs)
    assert "sk-ant-visible-marker" not in text
    assert "visible-marker" not in result.stdout + result.stderr
    assert "DENIED PermissionError" in text, text


def test_doctor_says_what_the_jail_off_mode_does_not_protect(
    workspace: Path, vis_home: Path
) -> None:
    (vis_home / "config.toml").write_text("jail = false\n")
    result = vis("doctor", cwd=workspace, env_home=vis_home)
    assert "jail        off" in result.stdout, result.stdout
    assert "with the jail off, the model's code runs as you" in result.stdout
    assert ("Vis runs as root" in result.stdout) == (os.geteuid() == 0)
