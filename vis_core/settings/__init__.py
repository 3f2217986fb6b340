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
    "vis_core.settings.service": (
        "Resolution",
        "SaveResult",
        "SettingOwner",
        "SettingsService",
        "parse_toggles",
    ),
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
__all__ = [
    "CORE_SETTINGS",
    "EXTENSIONS_SECTION",
    "ExtensionGroup",
    "GlobalFile",
    "NOT_SET",
    "ProjectFiles",
    "ProjectValues",
    "REDACTED",
    "RedactingFilter",
    "Redactor",
    "Resolution",
    "RowState",
    "SAVED",
    "SCOPE_ORDER",
    "SaveResult",
    "SecretsFile",
    "SettingNode",
    "SettingOwner",
    "SettingsFileError",
    "SettingsService",
    "SettingsTree",
    "Source",
    "VIS_SECTION",
    "attach_log_file",
    "build_tree",
    "detach_log_file",
    "disabled_extensions",
    "display_value",
    "log_file",
    "nest",
    "parse_text",
    "parse_toggles",
    "read_stored",
    "row_state",
]

if TYPE_CHECKING:
    from vis_core.settings.core import CORE_SETTINGS
    from vis_core.settings.logfile import attach_log_file, detach_log_file, log_file
    from vis_core.settings.redact import Redactor
    from vis_core.settings.rows import NOT_SET, SAVED, RowState, display_value, row_state
    from vis_core.settings.service import (
        Resolution,
        SaveResult,
        SettingOwner,
        SettingsService,
        parse_toggles,
    )
    from vis_core.settings.storage import (
        GlobalFile,
        ProjectFiles,
        ProjectValues,
        SecretsFile,
        SettingsFileError,
        disabled_extensions,
    )
    from vis_core.settings.tree import (
        EXTENSIONS_SECTION,
        VIS_SECTION,
        ExtensionGroup,
        SettingNode,
        SettingsTree,
        build_tree,
        nest,
    )
    from vis_core.settings.values import SCOPE_ORDER, Source, parse_text, read_stored
    from vis_core.system.redaction import REDACTED, RedactingFilter


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
