"""The public extension SDK, used as ``import vis_core.extension as vis``."""

from __future__ import annotations

from vis_core.contracts.specs import (
    FieldSpec,
    HelpDocument,
    NamespaceSpec,
    ParameterSpec,
    ToolSpec,
    TypeSpec,
)
from vis_core.extension import testing
from vis_core.extension.activity import (
    Activity,
    ActivityAudio,
    ActivityCode,
    ActivityDiff,
    ActivityFile,
    ActivityHeading,
    ActivityImage,
    ActivityMarkdown,
    ActivityPresentation,
    ActivityProgress,
    ActivitySection,
    ActivityTable,
    ActivityTerminal,
    ActivityTerminalLine,
    ActivityText,
    ActivityVideo,
    SymbolTag,
)
from vis_core.extension.catalog import Catalog
from vis_core.extension.context import publish_activity
from vis_core.extension.declarations import (
    CommandResult,
    Extension,
    OpHook,
    Setting,
    SettingScope,
    SettingType,
    SlashCommand,
    err,
    ok,
    register_extension,
)
from vis_core.extension.metadata import build_metadata
from vis_core.extension.roots import project_root, workspace_root
from vis_core.extension.symbols import Symbol, method
from vis_core.records.sequence import sequence

__all__ = [
    "Activity",
    "ActivityAudio",
    "ActivityCode",
    "ActivityDiff",
    "ActivityFile",
    "ActivityHeading",
    "ActivityImage",
    "ActivityMarkdown",
    "ActivityPresentation",
    "ActivityProgress",
    "ActivitySection",
    "ActivityTable",
    "ActivityTerminal",
    "ActivityTerminalLine",
    "ActivityText",
    "ActivityVideo",
    "Catalog",
    "CommandResult",
    "Extension",
    "FieldSpec",
    "HelpDocument",
    "NamespaceSpec",
    "OpHook",
    "ParameterSpec",
    "Setting",
    "SettingScope",
    "SettingType",
    "SlashCommand",
    "Symbol",
    "SymbolTag",
    "ToolSpec",
    "TypeSpec",
    "build_metadata",
    "err",
    "method",
    "ok",
    "project_root",
    "publish_activity",
    "register_extension",
    "sequence",
    "testing",
    "workspace_root",
]
