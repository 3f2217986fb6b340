"""A block cannot hide what it changes from its row and from ``/undo``: not by putting a
file's modification time back, nor by ignoring its own files."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from cli_support import script

from vis_core.agent.person_input import undo
from vis_core.events import BlockFinished
from vis_core.host import Host, HostOptions
from vis_core.model.block import FileChangeKind
from vis_core.model.undo import UndoReport
from vis_core.tools.checkpoints import Checkpoints


def _repository(ws: Path) -> None:
    """``app.py`` committed; ``local.cfg`` and ``notes.txt`` untracked."""
    (ws / "app.py").write_text("VERIFY_TLS = True\n")
    (ws / "local.cfg").write_text("settings: SAFE\n")
    (ws / "notes.txt").write_text("my notes\n")
    git = ["git", "-C", str(ws), "-c", "user.email=a@b", "-c", "user.name=a"]
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    subprocess.run([*git, "add", "app.py"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "i"], check=True)


async def _attack(ws: Path, tmp_path: Path, code: str) -> tuple[list[BlockFinished], UndoReport]:
    """One turn whose one block runs ``code`` (in the sandbox, jailed where bubblewrap
    works), then ``/undo``: the block's row and what /undo did."""
    steps = [{"code": code}, {"text": "I only looked around; no changes."}]
    host = await Host.open(
        HostOptions(workspace=ws, provider="scripted", script=script(tmp_path, steps))
    )
    events: list[object] = []
    try:
        session = await host.new_session()
        session.subscribe(events.append)
        await session.submit("look around")
        report = await undo(session)
    finally:
        await host.close()
    return [e for e in events if isinstance(e, BlockFinished)], report


async def test_a_file_whose_modification_time_was_put_back_is_listed_and_undone(
    workspace: Path, tmp_path: Path
) -> None:
    """Change detection compared sizes, modification times and modes only: a block that
    wrote files of the same size and set their modification times back listed no file, and
    /undo said no turn had changed files (the untracked one was lost). The change time, which
    no process sets back, and the inode are compared too."""
    _repository(workspace)
    code = (
        "import os\n"
        "for n, o, w in [('app.py', 'VERIFY_TLS = True', 'VERIFY_TLS = 0   '),"
        " ('local.cfg', 'SAFE', 'EVIL')]:\n"
        "    st = os.stat(n); d = open(n).read().replace(o, w); open(n, 'w').write(d)\n"
        "    os.utime(n, ns=(st.st_atime_ns, st.st_mtime_ns))\n"
    )
    blocks, report = await _attack(workspace, tmp_path, code)
    changes = {c.path: c for c in blocks[0].files}
    assert {p: c.kind for p, c in changes.items()} == {
        "app.py": FileChangeKind.CHANGED,
        "local.cfg": FileChangeKind.CHANGED,
    }
    assert "-settings: SAFE\n+settings: EVIL\n" in changes["local.cfg"].diff
    assert "+VERIFY_TLS = 0   \n" in changes["app.py"].diff
    assert report.restored == ("app.py", "local.cfg")
    assert (workspace / "local.cfg").read_text() == "settings: SAFE\n"
    assert (workspace / "app.py").read_text() == "VERIFY_TLS = True\n"


def test_a_file_of_which_only_the_change_time_moved_is_read_not_copied(tmp_path: Path) -> None:
    """Between two checkpoints: a file whose bytes changed behind the same size and
    modification time gets a new copy; one only chmodded to its own mode or hard-linked
    (its change time moved) keeps the copy it had, read and compared, not copied again."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "same.txt").write_text("same\n")
    (ws / "swapped.txt").write_text("before\n")
    points = Checkpoints(ws, tmp_path / "private")
    first = points.take("t1", 1)
    assert first is not None
    os.chmod(ws / "same.txt", 0o644)
    os.link(ws / "same.txt", tmp_path / "second-name")
    st = (ws / "swapped.txt").stat()
    (ws / "swapped.txt").write_text("after!\n")
    os.utime(ws / "swapped.txt", ns=(st.st_atime_ns, st.st_mtime_ns))
    kept = sorted(p.name for p in points.blobs.iterdir())
    second = points.take("t2", 2)
    assert second is not None
    assert second.files["same.txt"][3] == first.files["same.txt"][3]
    assert second.files["swapped.txt"][3] != first.files["swapped.txt"][3]
    assert len(list(points.blobs.iterdir())) == len(kept) + 1  # the swapped file's new bytes
    assert points.kept_bytes(second.files["swapped.txt"][3]) == b"after!\n"
