"""Where the worker program starts (a session's worker, or its load-only mode): Vis's kept
dataclass code first (:mod:`vis_core.codegen_cache`, read from Vis's cache folder), so the
modules the worker imports next define their classes without compiling that code again."""

from __future__ import annotations

from vis_core import codegen_cache


def main(load_only: bool = False) -> None:
    """A session's worker, or its load-only mode for registration
    (:func:`~vis_core.extension_host.session_worker.main`)."""
    codegen_cache.install()
    from vis_core.extension_host import session_worker

    session_worker.main(load_only)


def load_only() -> None:
    """The load-only mode: :func:`main` for registration."""
    main(load_only=True)
