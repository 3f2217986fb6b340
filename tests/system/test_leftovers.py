"""The temporary folders of a Vis killed with SIGKILL are swept by the next one; nothing else
is: not a live process's, not one being made, not an older Vis's, not what a link points to."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from vis_core.system.leftovers import LOCK_NAME, owned_folder, release, sweep

# A process that makes its folders as Vis does (the model's hold file, a network proxy's
# folder), says where, and waits to be killed.
_OWNER = """\
import asyncio, sys
from vis_core.sandbox.network_proxy import NetworkProxy
from vis_core.system.quiet import hold_file

class Allow:
    async def request(self, request): ...

async def main():
    proxy = NetworkProxy(Allow())
    print(hold_file(), await proxy.start(), flush=True)
    await asyncio.sleep(300)

asyncio.run(main())
"""


def _owner(tmp: Path) -> tuple[subprocess.Popen[str], Path, Path]:
    env = {**os.environ, "TMPDIR": str(tmp)}
    proc = subprocess.Popen(
        [sys.executable, "-c", _OWNER], env=env, stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    hold, net = proc.stdout.readline().split()
    return proc, Path(hold), Path(net)


def test_the_folders_of_a_killed_vis_are_swept_and_a_live_ones_are_kept(tmp_path: Path) -> None:
    tmp_path = tmp_path / "tmp"  # the processes' temporary folder
    tmp_path.mkdir()
    killed, hold, net = _owner(tmp_path)
    alive, alive_hold, alive_net = _owner(tmp_path)
    try:
        assert hold.parent.name.startswith("vis-hold-") and net.name.startswith("vis-net-")
        assert {hold.parent.parent, net.parent} == {tmp_path}
        assert sweep(tmp_path) == []  # both processes run: nothing goes
        killed.send_signal(signal.SIGKILL)
        killed.wait(20)
        assert hold.exists() and net.exists()  # a kill runs no clean-up
        assert sorted(sweep(tmp_path)) == sorted([hold.parent, net])
        assert not hold.parent.exists() and not net.exists()
        assert alive_hold.exists() and alive_net.exists()
    finally:
        for proc in (killed, alive):
            proc.kill()
            proc.wait(20)
    assert sorted(sweep(tmp_path)) == sorted([alive_hold.parent, alive_net])
    assert list(tmp_path.iterdir()) == []


def test_a_folder_being_made_or_of_an_older_vis_is_left(tmp_path: Path) -> None:
    older = tmp_path / "vis-net-older"  # no lock file: an older Vis's, maybe still running
    older.mkdir()
    (older / "proxy.sock").touch()
    making = tmp_path / "vis-hold-making"  # its lock file not renamed in yet
    making.mkdir()
    (making / (LOCK_NAME + ".new")).touch()
    assert sweep(tmp_path) == []
    assert older.is_dir() and making.is_dir()


def test_a_link_or_a_file_in_the_swept_places_is_not_followed(tmp_path: Path) -> None:
    """Another user's (or the model's, without the jail) planted names: a link named like a
    folder of Vis to a folder that would pass, a lock file that is a link, a plain file."""
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / LOCK_NAME).touch()  # an unlocked lock file: a sweep of it would remove it
    (victim / "precious").write_text("keep", encoding="utf-8")
    root = tmp_path / "tmp"
    root.mkdir()
    (root / "vis-net-link").symlink_to(victim)
    linked = root / "vis-hold-linked"
    linked.mkdir()
    (linked / LOCK_NAME).symlink_to(victim / LOCK_NAME)
    (root / "vis-net-file").write_text("a file", encoding="utf-8")
    assert sweep(root) == []
    assert (victim / "precious").read_text(encoding="utf-8") == "keep"
    assert linked.is_dir() and (root / "vis-net-file").is_file()


def test_a_released_folder_is_gone_and_its_lock_dropped(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    folder = owned_folder("vis-net-")
    assert (folder / LOCK_NAME).is_file() and sweep(tmp_path) == []
    release(folder)
    assert not folder.exists()
