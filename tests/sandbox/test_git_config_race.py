"""Host git reads a repository whose configuration may include a file of the workspace: the
model's processes are held while Vis lists the drivers to switch off and while git runs, so a
file swapped in between cannot name a driver the listing missed (a filter then ran on the host,
outside the jail, found by an attacker)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
import yaml

from vis_core.events import TurnStatus
from vis_core.host import Host, HostOptions

from .hostile import BWRAP_PROBLEM, git, make_repo

pytestmark = pytest.mark.skipif(BWRAP_PROBLEM is not None, reason=BWRAP_PROBLEM or "")

TURNS = 30  # each takes a checkpoint: git reads the swapped file once in each

# the model's thread swaps the included file as fast as it can (a link and a rename, no
# process to start each time, so it swaps under load too): between two reads of it by git
# it has likely changed
FLIP = """
import os
import threading
open(".cfg-evil", "w").write('[filter "x"]\\n\\tclean = "sh -c \\'echo ran >> {marker}; cat\\'"\\n')
open(".cfg-plain", "w").write("[core]\\n\\tquotepath = true\\n")


def flip():
    while True:
        for name in (".cfg-evil", ".cfg-plain"):
            os.link(name, ".t")
            os.replace(".t", ".gitcfg")


threading.Thread(target=flip, daemon=True).start()
print("flipping")
"""


async def test_a_config_file_the_model_swaps_never_runs_a_driver_on_the_host(
    workspace: Path, tmp_path: Path
) -> None:
    make_repo(workspace)
    for n in range(3):
        (workspace / f"f{n}.txt").write_text(f"{n}\n")
    (workspace / ".gitattributes").write_text("* filter=x\n")
    git(workspace, "add", ".")
    git(workspace, "commit", "-q", "-m", "files")
    with (workspace / ".git" / "config").open("a") as config:
        config.write("[include]\n\tpath = ../.gitcfg\n")
    old = time.time() - 10 * 365 * 86400  # every entry racily clean: git hashes the files again
    os.utime(workspace / ".git" / "index", (old, old))
    marker = tmp_path / "ran-on-the-host"  # outside the jail: only a host process can write it
    steps = [{"code": FLIP.format(marker=marker)}, {"text": "flipping"}]
    steps += [s for n in range(TURNS) for s in ({"code": f"print({n})"}, {"text": "ok"})]
    script = tmp_path / "script.yaml"
    script.write_text(yaml.safe_dump(steps))
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted", script=script))
    try:
        session = await host.new_session()
        assert (await session.submit("start")).status == TurnStatus.COMPLETED
        for n in range(TURNS):
            assert (await session.submit(f"turn {n}")).status == TurnStatus.COMPLETED
        assert (workspace / ".gitcfg").exists()  # the model's loop did swap the file
    finally:
        await host.close()
    assert not marker.exists(), marker.read_text()
