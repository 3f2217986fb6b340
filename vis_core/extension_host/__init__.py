"""Extension discovery, loading, ``reload()``, load errors and per-extension call locks."""

from __future__ import annotations

from vis_core.extensions.discovery import (
    ENTRY_POINT_GROUP,
    Candidate,
    ExtensionSource,
    bundled_dir,
    discover,
)
from vis_core.extensions.doctor import ExtensionRow, describe
from vis_core.extensions.entry import LoadError, compile_entry, execute_entry
from vis_core.extensions.loaded import (
    ExtensionStatus,
    LoadedExtension,
    LoadedExtensions,
    LoadOptions,
)
from vis_core.extensions.loader import load_extensions, reload
from vis_core.extensions.prompts import (
    active_extensions,
    extension_context,
    extension_prompts,
    is_active,
)

__all__ = [
    "ENTRY_POINT_GROUP",
    "Candidate",
    "ExtensionRow",
    "ExtensionSource",
    "ExtensionStatus",
    "LoadError",
    "LoadOptions",
    "LoadedExtension",
    "LoadedExtensions",
    "active_extensions",
    "bundled_dir",
    "compile_entry",
    "describe",
    "discover",
    "execute_entry",
    "extension_context",
    "extension_prompts",
    "is_active",
    "load_extensions",
    "reload",
]
