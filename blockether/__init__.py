"""The spec's package name for Vis's SDK: only ``blockether.vis.extension`` lives under it."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from types import ModuleType

ONLY_MODULE = "blockether.vis.extension"
NOT_HERE = (
    "No module named {name!r}: `blockether.vis.extension` (the Vis extension SDK, "
    "`import blockether.vis.extension as vis`) is the only module under `blockether.vis`"
)


class _OnlyTheSdk:
    """Asked last: a ``blockether.*`` module no one else found gets an error that says why.
    (A meta path finder needs only ``find_spec``: ``importlib.abc`` and what it imports,
    ``importlib.resources``, ``tempfile``, ``shutil``, cost each sandbox child ~4.5 ms of CPU.)"""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if fullname.startswith("blockether.") and fullname != ONLY_MODULE:
            raise ModuleNotFoundError(NOT_HERE.format(name=fullname), name=fullname)
        return None


if not any(isinstance(finder, _OnlyTheSdk) for finder in sys.meta_path):
    sys.meta_path.append(_OnlyTheSdk())
