"""The public extension SDK, used as ``import vis_core.extension as vis``."""

from __future__ import annotations

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
    "CommandResult",
    "Extension",
    "OpHook",
    "Setting",
    "SettingScope",
    "SettingType",
    "SlashCommand",
    "SymbolTag",
    "build_metadata",
    "err",
    "ok",
    "publish_activity",
    "register_extension",
]

# Modules that other parts of the SDK land in; each adds its names when it exists.
try:
    from vis_core.records.sequence import sequence

    __all__ += ["sequence"]
except ImportError:  # pragma: no cover - until vis_core.records lands
    pass

try:
    from vis_core.extension.symbols import Symbol, method

    __all__ += ["Symbol", "method"]
except ImportError:  # pragma: no cover - until symbols.py lands
    pass

try:
    from vis_core.extension.catalog import (
        Catalog,
        FieldSpec,
        HelpDocument,
        NamespaceSpec,
        ParameterSpec,
        ToolSpec,
        TypeSpec,
    )

    __all__ += [
        "Catalog", "FieldSpec", "HelpDocument", "NamespaceSpec", "ParameterSpec", "ToolSpec",
        "TypeSpec",
    ]
except ImportError:  # pragma: no cover - until catalog.py lands
    pass

try:
    from vis_core.extension import testing

    __all__ += ["testing"]
except ImportError:  # pragma: no cover - until testing.py lands
    pass
