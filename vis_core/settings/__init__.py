"""Settings: the shared tree, scoped values (global → project → group → session → command line),
secrets, ``on_change`` and the values ``Setting.value()`` reads (through the host's runtime).

Names load on first use (PEP 562), so ``vis --version`` and the CLI parser stay light.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_EXPORTS: dict[str, tuple[str, ...]] = {
    "vis_core.settings.core": ("CORE_SETTINGS",),
    "vis_core.settings.logfile": (
        "attach_log_file",
        "detach_log_file",
        "log_file",
    ),
    "vis_core.settings.redact": ("Redactor",),
    "vis_core.system.redaction": (
        "REDACTED",
        "RedactingFilter",
    ),
    "vis_core.settings.rows": (
        "NOT_SET",
        "SAVED",
        "RowState",
        "display_value",
        "row_state",
    ),
    "vis_core.settings.owners": ("SettingOwner",),
    "vis_core.settings.reading": ("Resolution", "SettingsReader"),
    "vis_core.settings.service": ("SaveResult", "SettingsService"),
    "vis_core.settings.storage": (
        "GlobalFile",
        "ProjectFiles",
        "ProjectValues",
        "SecretsFile",
        "SettingsFileError",
        "disabled_extensions",
    ),
    "vis_core.settings.tree": (
        "EXTENSIONS_SECTION",
        "VIS_SECTION",
        "ExtensionGroup",
        "SettingNode",
        "SettingsTree",
        "build_tree",
        "nest",
    ),
    "vis_core.settings.values": (
        "SCOPE_ORDER",
        "Source",
        "parse_text",
        "read_stored",
    ),
}
_MODULE_OF = {name: module for module, names in _EXPORTS.items() for name in names}
__all__ = sorted(_MODULE_OF)  # pyright: ignore[reportUnsupportedDunderAll]

if TYPE_CHECKING:  # what a type checker sees; at run time names load on first use
    from vis_core.settings.core import CORE_SETTINGS as CORE_SETTINGS
    from vis_core.settings.logfile import attach_log_file as attach_log_file
    from vis_core.settings.logfile import detach_log_file as detach_log_file
    from vis_core.settings.logfile import log_file as log_file
    from vis_core.settings.owners import SettingOwner as SettingOwner
    from vis_core.settings.reading import Resolution as Resolution
    from vis_core.settings.reading import SettingsReader as SettingsReader
    from vis_core.settings.redact import Redactor as Redactor
    from vis_core.settings.rows import NOT_SET as NOT_SET
    from vis_core.settings.rows import SAVED as SAVED
    from vis_core.settings.rows import RowState as RowState
    from vis_core.settings.rows import display_value as display_value
    from vis_core.settings.rows import row_state as row_state
    from vis_core.settings.service import SaveResult as SaveResult
    from vis_core.settings.service import SettingsService as SettingsService
    from vis_core.settings.storage import GlobalFile as GlobalFile
    from vis_core.settings.storage import ProjectFiles as ProjectFiles
    from vis_core.settings.storage import ProjectValues as ProjectValues
    from vis_core.settings.storage import SecretsFile as SecretsFile
    from vis_core.settings.storage import SettingsFileError as SettingsFileError
    from vis_core.settings.storage import disabled_extensions as disabled_extensions
    from vis_core.settings.tree import EXTENSIONS_SECTION as EXTENSIONS_SECTION
    from vis_core.settings.tree import VIS_SECTION as VIS_SECTION
    from vis_core.settings.tree import ExtensionGroup as ExtensionGroup
    from vis_core.settings.tree import SettingNode as SettingNode
    from vis_core.settings.tree import SettingsTree as SettingsTree
    from vis_core.settings.tree import build_tree as build_tree
    from vis_core.settings.tree import nest as nest
    from vis_core.settings.values import SCOPE_ORDER as SCOPE_ORDER
    from vis_core.settings.values import Source as Source
    from vis_core.settings.values import parse_text as parse_text
    from vis_core.settings.values import read_stored as read_stored
    from vis_core.system.redaction import REDACTED as REDACTED
    from vis_core.system.redaction import RedactingFilter as RedactingFilter


def __getattr__(name: str) -> Any:
    """Import the module that defines ``name`` on first use and keep the value here."""
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
