"""A huge control file (a sparse ``.env.big`` a jailed block can make in a second) is not read
whole to check trust: the fingerprint takes its size, change time and inode instead, so Vis's
start and ``vis trust`` stay quick, and a change of it still asks again."""

from __future__ import annotations

from pathlib import Path

from processes import bytes_read

from vis_core.paths import TrustStore, VisPaths, take_snapshot

HUGE = 2 << 30  # sparse: no block on disk, yet 2 GiB to read


def test_a_huge_sparse_control_file_is_not_read_whole(workspace: Path) -> None:
    (workspace / ".env").write_text("A=1\n")
    with open(workspace / ".env.big", "wb") as big:
        big.truncate(HUGE)
    before = bytes_read()
    trusted = TrustStore(VisPaths.from_env()).trust(workspace)
    snapshot = take_snapshot(workspace)
    assert bytes_read() - before < 64 << 20  # the small .env, not the 2 GiB
    store = TrustStore(VisPaths.from_env())
    assert store.is_trusted(trusted) and snapshot.files.get(".env") == b"A=1\n"
    with open(workspace / ".env.big", "r+b") as big:  # a change of it asks again
        big.truncate(HUGE + 1)
    assert not store.is_trusted(trusted)
