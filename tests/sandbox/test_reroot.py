"""Moving a running jail onto a new root refuses a process that shares Vis's mounts."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from vis_core.sandbox.reroot import RerootFailed, reroot


def test_a_process_outside_any_jail_is_never_remounted(tmp_path: Path) -> None:
    (tmp_path / "new").mkdir()
    with pytest.raises(RerootFailed, match="not in a jail of its own"):
        reroot(os.getpid(), tmp_path, tmp_path / "new", [])
    (tmp_path / "still-writable").write_text("yes\n")
