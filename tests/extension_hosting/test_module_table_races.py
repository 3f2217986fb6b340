"""The worker loads extensions on a thread while its loop imports modules of its own (the direct
channel's, on pairing): forgetting an extension's modules must not fail when ``sys.modules``
changes meanwhile. It failed a worker's load once under load ("dictionary changed size during
iteration"), because it walked the live table in Python code, where threads switch."""

from __future__ import annotations

import sys
import types

from vis_core.extension_host.entry import forget_module


class _ImportsWhenCompared(str):
    """A module name whose comparison stands for another thread's import, at the exact moment
    a thread switch can happen in the walk."""

    def __eq__(self, other: object) -> bool:
        sys.modules["_vis_imported_meanwhile"] = types.ModuleType("_vis_imported_meanwhile")
        return str.__eq__(self, other)

    __hash__ = str.__hash__


def test_forgetting_a_module_while_another_import_lands() -> None:
    sys.modules["_vis_gone"] = types.ModuleType("_vis_gone")
    sys.modules["_vis_gone.sub"] = types.ModuleType("_vis_gone.sub")
    sys.modules[_ImportsWhenCompared("_vis_other")] = types.ModuleType("_vis_other")
    try:
        forget_module("_vis_gone")
        assert "_vis_gone" not in sys.modules
        assert "_vis_gone.sub" not in sys.modules
        assert "_vis_imported_meanwhile" in sys.modules  # what came meanwhile is not dropped
    finally:
        for name in ("_vis_gone", "_vis_gone.sub", "_vis_other", "_vis_imported_meanwhile"):
            sys.modules.pop(name, None)
