"""Files written whole or not at all: a temporary file beside the target, renamed over it."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

TEMP_SUFFIX = ".vis-tmp"  # what an interrupted write leaves: ``.NAME.*.vis-tmp``


def atomic_write(target: Path, data: bytes, *, mode: int | None) -> None:
    """Write through a temporary file in the same folder and rename it over ``target``."""
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temp = tempfile.mkstemp(
        prefix=f".{target.name}.", suffix=TEMP_SUFFIX, dir=target.parent
    )
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
        if mode is not None:
            os.chmod(temp, mode)
        os.replace(temp, target)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
