"""Settings: the shared tree, scoped values (global → project → group → session → command line),
secrets, ``on_change`` and the resolver behind ``Setting.value()``."""

from __future__ import annotations

from vis_core.settings.core import CORE_SETTINGS
from vis_core.settings.logfile import attach_log_file, detach_log_file, log_file
from vis_core.settings.redact import REDACTED, RedactingFilter, Redactor
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

__all__ = [
    "CORE_SETTINGS",
    "EXTENSIONS_SECTION",
    "NOT_SET",
    "REDACTED",
    "SAVED",
    "SCOPE_ORDER",
    "VIS_SECTION",
    "ExtensionGroup",
    "GlobalFile",
    "ProjectFiles",
    "ProjectValues",
    "RedactingFilter",
    "Redactor",
    "Resolution",
    "RowState",
    "SaveResult",
    "SecretsFile",
    "SettingNode",
    "SettingOwner",
    "SettingsFileError",
    "SettingsService",
    "SettingsTree",
    "Source",
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
