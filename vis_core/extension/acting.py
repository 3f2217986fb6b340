"""Which extension Vis is running now: the acting extension of a call, callback or load."""

from __future__ import annotations

import threading

from vis_core.extension.context import current_call


def loading_extension() -> tuple[bool, str | None]:
    """``(loading, name)``: whether an entry file is being loaded, and its registered name."""
    from vis_core.extension.declarations import _loading

    registration = _loading.get()
    if registration is None:
        return False, None
    declaration = registration.declaration
    return True, None if declaration is None else declaration.name


def current_extension() -> str | None:
    """The extension Vis runs now, or ``None`` outside Vis (and for Vis's own tools); in a
    thread an extension started (see :func:`follow_threads`), that extension."""
    call = current_call()
    if call is not None and call.owner != "vis":
        return call.owner
    loading = loading_extension()[1]
    if loading is not None:
        return loading
    return getattr(threading.current_thread(), _STARTED_BY, None)


_STARTED_BY = "_vis_started_by"  # the Thread attribute naming the extension that started it


def follow_threads() -> None:
    """Make each thread an extension starts act for it (``vis.log`` names it, its output goes
    to its log): ``Thread.start`` notes the extension running then. Once per process, in the
    processes that run extension code; Vis's own threads (named ``vis-…``) are left out."""
    original = threading.Thread.start
    if getattr(original, _STARTED_BY, False):
        return

    def start(self: threading.Thread) -> None:
        if not self.name.startswith("vis-") and getattr(self, _STARTED_BY, None) is None:
            owner = current_extension()
            if owner is not None:
                setattr(self, _STARTED_BY, owner)
        original(self)

    setattr(start, _STARTED_BY, True)
    threading.Thread.start = start  # type: ignore[method-assign]
