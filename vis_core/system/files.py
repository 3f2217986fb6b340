"""Files written whole or not at all: a temporary file beside the target, renamed over it."""

from __future__ import annotations

import os
from pathlib import Path

from vis_core.system.temp_journal import journaled

TEMP_SUFFIX = ".vis-tmp"  # what an interrupted write leaves: ``.NAME.*.vis-tmp``


def atomic_write(target: Path, data: bytes, *, mode: int | None) -> None:
    """Write through a temporary file in the same folder and rename it over ``target``; the
    temporary file is named in the journal while it exists (a crash leaves it to the next
    start: :mod:`vis_core.system.temp_journal`)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    folder = Path(os.path.realpath(target.parent))  # as the journal names it
    temp = folder / f".{target.name}.{os.urandom(6).hex()}{TEMP_SUFFIX}"
    with journaled(str(temp)):
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        handle = os.open(temp, flags, 0o600)
        try:
            with os.fdopen(handle, "wb") as stream:
                stream.write(data)
            if mode is not None:
                os.chmod(temp, mode)
            os.replace(temp, target)
        except BaseException:
            temp.unlink(missing_ok=True)
            raise
