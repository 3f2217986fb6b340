"""The public extension SDK, used as ``import blockether.vis.extension as vis`` (the spec's
name, the same module) or ``import vis_core.extension as vis``.

Names load on first use (PEP 562): importing one submodule, e.g. ``vis_core.model.activity``,
no longer imports the whole SDK. ``from vis_core.extension import X`` and ``vis.X`` work as before.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

_EXPORTS: dict[str, tuple[str, ...]] = {
    "vis_core.contracts.specs": (
        "FieldSpec",
        "HelpDocument",
        "NamespaceSpec",
        "ParameterSpec",
        "ToolSpec",
        "TypeSpec",
    ),
    "vis_core.model.activity": (
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
        "SymbolTag",
    ),
    "vis_core.extension.attachments": (
        "attach",
        "get_attachment",
        "list_attachments",
        "read_attachment",
        "show_attachment",
    ),
    "vis_core.extension.catalog": ("Catalog",),
    "vis_core.extension.context": ("publish_activity",),
    "vis_core.extension.declarations": (
        "CommandResult",
        "Extension",
        "OpHook",
        "Setting",
        "SlashCommand",
        "err",
        "ok",
        "register_extension",
    ),
    "vis_core.extension.fs": (
        "fs",
        "jailed_shell",
        "shell",
    ),
    "vis_core.extension.errors": ("GatewayError", "VisToolError"),
    "vis_core.extension.settings_decl": ("SettingScope", "SettingType"),
    "vis_core.system.git": ("GitFailed",),
    "vis_core.extension.grants": ("Grant",),
    "vis_core.extension.providers": ("Provider", "ProviderModel"),
    "vis_core.extension.network": ("NetworkFilter", "rewrite_headers"),
    "vis_core.model.network": ("NetworkRequest", "NetworkResponse"),
    "vis_core.model.conversation": (
        "ImagePart",
        "Message",
        "ModelRequest",
        "ResponseDone",
        "StopReason",
        "TextDelta",
        "ThinkingDelta",
        "ThinkingPart",
        "ToolCall",
        "ToolCallReady",
        "ToolDefinition",
        "UsageUpdate",
    ),
    "vis_core.model.usage": ("Usage",),
    "vis_core.extension.mutation": ("file_mutation_queue",),
    "vis_core.extension.hooks": (
        "OperationBlocked",
        "block",
        "repair",
        "strings_of",
    ),
    "vis_core.extension.logs": (
        "log",
        "notify",
    ),
    "vis_core.extension.mcp_servers": ("McpServer", "mcp_server"),
    "vis_core.extension.metadata": ("build_metadata",),
    "vis_core.extension.roots": (
        "project_root",
        "workspace_root",
    ),
    "vis_core.extension.sessions": (
        "council",
        "list_sessions",
        "read_session",
        "run",
        "session",
        "sessions",
        "speech",
    ),
    "vis_core.extension.state": ("state",),
    "vis_core.extension.unavailable": ("SpeechUnavailable",),
    "vis_core.extension.symbols": (
        "Symbol",
        "method",
    ),
    "vis_core.extension.tools_proxy": ("tools",),
    "vis_core.extension.workspace": (
        "git",
        "python_environment",
        "workspace_files",
    ),
    "vis_core.contracts.sequence": ("sequence",),
    "vis_core.extension.truncation": (
        "DEFAULT_MAX_BYTES",
        "DEFAULT_MAX_LINES",
        "fit_output",
        "save_full_output",
        "truncate_head",
        "truncate_line",
        "truncate_tail",
    ),
    "vis_core.text_limits": ("format_size",),
    "vis_core.extension.forms": (
        "Answer",
        "AnswerReason",
        "Field",
        "FieldType",
        "FormDeclarationError",
        "Option",
        "Secret",
        "ask",
        "checkbox",
        "column",
        "group",
        "heading",
        "multiline",
        "multiselect",
        "option",
        "otp",
        "paragraph",
        "password",
        "plaintext",
        "row",
        "select",
        "slider",
    ),
    "vis_core.extension.live": (
        "LiveEvent",
        "LiveEventKind",
        "LiveView",
        "live",
    ),
    "vis_core.extension.live_nodes": (
        "Tone",
        "button",
        "code",
        "disclosure",
        "divider",
        "link",
        "output",
        "progress",
        "spinner",
        "stat",
        "status",
        "step",
        "steps",
        "table",
    ),
    "vis_core.extension.live_updates": ("LiveUpdateError",),
}
_MODULE_OF = {name: module for module, names in _EXPORTS.items() for name in names}

if TYPE_CHECKING:  # what a type checker sees; at run time names load on first use
    from vis_core.contracts.sequence import sequence
    from vis_core.contracts.specs import (
        FieldSpec,
        HelpDocument,
        NamespaceSpec,
        ParameterSpec,
        ToolSpec,
        TypeSpec,
    )
    from vis_core.extension import testing
    from vis_core.extension.attachments import (
        attach,
        get_attachment,
        list_attachments,
        read_attachment,
        show_attachment,
    )
    from vis_core.extension.catalog import Catalog
    from vis_core.extension.context import publish_activity
    from vis_core.extension.declarations import (
        CommandResult,
        Extension,
        OpHook,
        Setting,
        SlashCommand,
        err,
        ok,
        register_extension,
    )
    from vis_core.extension.errors import GatewayError, VisToolError
    from vis_core.extension.forms import (
        Answer,
        AnswerReason,
        Field,
        FieldType,
        FormDeclarationError,
        Option,
        Secret,
        ask,
        checkbox,
        column,
        group,
        heading,
        multiline,
        multiselect,
        option,
        otp,
        paragraph,
        password,
        plaintext,
        row,
        select,
        slider,
    )
    from vis_core.extension.fs import fs, jailed_shell, shell
    from vis_core.extension.grants import Grant
    from vis_core.extension.hooks import OperationBlocked, block, repair, strings_of
    from vis_core.extension.live import LiveEvent, LiveEventKind, LiveView, live
    from vis_core.extension.live_nodes import (
        Tone,
        button,
        code,
        disclosure,
        divider,
        link,
        output,
        progress,
        spinner,
        stat,
        status,
        step,
        steps,
        table,
    )
    from vis_core.extension.live_updates import LiveUpdateError
    from vis_core.extension.logs import log, notify
    from vis_core.extension.mcp_servers import McpServer, mcp_server
    from vis_core.extension.metadata import build_metadata
    from vis_core.extension.mutation import file_mutation_queue
    from vis_core.extension.network import NetworkFilter, rewrite_headers
    from vis_core.extension.providers import Provider, ProviderModel
    from vis_core.extension.roots import project_root, workspace_root
    from vis_core.extension.sessions import (
        council,
        list_sessions,
        read_session,
        run,
        session,
        sessions,
        speech,
    )
    from vis_core.extension.settings_decl import SettingScope, SettingType
    from vis_core.extension.state import state
    from vis_core.extension.symbols import Symbol, method
    from vis_core.extension.tools_proxy import tools
    from vis_core.extension.truncation import (
        DEFAULT_MAX_BYTES,
        DEFAULT_MAX_LINES,
        fit_output,
        save_full_output,
        truncate_head,
        truncate_line,
        truncate_tail,
    )
    from vis_core.extension.unavailable import SpeechUnavailable
    from vis_core.extension.workspace import git, python_environment, workspace_files
    from vis_core.model.activity import (
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
    from vis_core.model.conversation import (
        ImagePart,
        Message,
        ModelRequest,
        ResponseDone,
        StopReason,
        TextDelta,
        ThinkingDelta,
        ThinkingPart,
        ToolCall,
        ToolCallReady,
        ToolDefinition,
        UsageUpdate,
    )
    from vis_core.model.network import NetworkRequest, NetworkResponse
    from vis_core.model.usage import Usage
    from vis_core.system.git import GitFailed
    from vis_core.text_limits import format_size

__all__ = [
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_LINES",
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
    "GatewayError",
    "GitFailed",
    "Grant",
    "HelpDocument",
    "NamespaceSpec",
    "OpHook",
    "OperationBlocked",
    "ParameterSpec",
    "Setting",
    "SettingScope",
    "SpeechUnavailable",
    "SettingType",
    "SlashCommand",
    "Symbol",
    "SymbolTag",
    "ToolSpec",
    "TypeSpec",
    "VisToolError",
    "attach",
    "build_metadata",
    "council",
    "block",
    "err",
    "log",
    "fs",
    "get_attachment",
    "jailed_shell",
    "list_attachments",
    "list_sessions",
    "mcp_server",
    "McpServer",
    "method",
    "notify",
    "ok",
    "project_root",
    "publish_activity",
    "git",
    "python_environment",
    "read_attachment",
    "read_session",
    "register_extension",
    "repair",
    "run",
    "sequence",
    "state",
    "strings_of",
    "session",
    "sessions",
    "speech",
    "shell",
    "show_attachment",
    "testing",
    "tools",
    "workspace_files",
    "workspace_root",
]

__all__ += [
    "Answer",
    "AnswerReason",
    "Field",
    "FieldType",
    "FormDeclarationError",
    "LiveEvent",
    "LiveEventKind",
    "LiveUpdateError",
    "LiveView",
    "Option",
    "Secret",
    "Tone",
    "ask",
    "button",
    "checkbox",
    "code",
    "column",
    "disclosure",
    "divider",
    "group",
    "heading",
    "link",
    "live",
    "multiline",
    "multiselect",
    "option",
    "otp",
    "output",
    "paragraph",
    "password",
    "plaintext",
    "progress",
    "row",
    "select",
    "slider",
    "spinner",
    "stat",
    "status",
    "step",
    "steps",
    "table",
]
__all__ += [
    "file_mutation_queue",
    "fit_output",
    "format_size",
    "save_full_output",
    "truncate_head",
    "truncate_line",
    "truncate_tail",
]
__all__ += [  # model providers (vis.Provider, their stream's shapes) and network filters
    "ImagePart",
    "Message",
    "ModelRequest",
    "NetworkFilter",
    "NetworkRequest",
    "NetworkResponse",
    "Provider",
    "ProviderModel",
    "ResponseDone",
    "StopReason",
    "TextDelta",
    "ThinkingDelta",
    "ThinkingPart",
    "ToolCall",
    "ToolCallReady",
    "ToolDefinition",
    "Usage",
    "UsageUpdate",
    "rewrite_headers",
]

_SUBMODULES = frozenset({"testing"})


def __getattr__(name: str) -> Any:
    """Import the module that defines ``name`` on first use and keep the value here."""
    if name in _SUBMODULES:
        value: Any = importlib.import_module(f"{__name__}.{name}")
    else:
        module = _MODULE_OF.get(name)
        if module is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


class _Package(types.ModuleType):
    """Keeps ``vis.fs``, ``vis.live``, ``vis.sessions`` and ``vis.state`` the SDK values.

    Importing a submodule binds it on its package; four public names share a submodule's
    name, so that binding is skipped for them and the name resolves to its value instead.
    """

    def __setattr__(self, name: str, value: Any) -> None:
        if (
            name in _MODULE_OF
            and isinstance(value, types.ModuleType)
            and value.__name__ == f"{__name__}.{name}"
        ):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
