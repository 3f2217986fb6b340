"""What Textual keeps of a test's closed apps, let go after each test.

``StylesCache.get_inner_outer`` is an ``lru_cache`` on a method: its 1,024 entries keep
their ``StylesCache``, so the widgets' cached lines (``Strip`` objects with six caches each)
of the apps of earlier tests stay alive. A worker's heap grew by tens of thousands of
objects a TUI test, and every full collection Python runs in a later test walked all of
them again (8-10 s of CPU per xdist worker). A person's one app gains nothing from a
cleared cache, so this is test infrastructure: ``release()`` after each test's teardown.
tests/tui/test_closed_apps.py pins what this assumes about the installed Textual.
"""

from __future__ import annotations

from textual._styles_cache import StylesCache


def release() -> None:
    """Drop what Textual's module-wide caches hold of the apps that have closed."""
    StylesCache.get_inner_outer.cache_clear()
