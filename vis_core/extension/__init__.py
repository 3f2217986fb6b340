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
    SettingScope,
    SettingType,
    SlashCommand,
    err,
    ok,
    register_extension,
)
from vis_core.extension.fs import fs, jailed_shell, shell
from vis_core.extension.gateway import GatewayError
from vis_core.extension.grants import Grant
from vis_core.extension.hooks import OperationBlocked, block, repair, strings_of
from vis_core.extension.logs import log, notify
from vis_core.extension.metadata import build_metadata
from vis_core.extension.roots import project_root, workspace_root
from vis_core.extension.session_handles import council, run, session, sessions, speech
from vis_core.extension.sessions import list_sessions, read_session
from vis_core.extension.state import state
from vis_core.extension.symbols import Symbol, method
from vis_core.extension.tools_proxy import VisToolError, tools
from vis_core.extension.workspace import python_environment, workspace_files
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
    "GatewayError",
    "Grant",
    "HelpDocument",
    "NamespaceSpec",
    "OpHook",
    "OperationBlocked",
    "ParameterSpec",
    "Setting",
    "SettingScope",
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
    "method",
    "notify",
    "ok",
    "project_root",
    "publish_activity",
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

# -- vis.ask / vis.live: forms and live views (their components share one set of builders) --
from vis_core.extension.forms import (  # noqa: E402
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
from vis_core.extension.live import LiveEvent, LiveEventKind, LiveView, live  # noqa: E402
from vis_core.extension.live_nodes import (  # noqa: E402
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
from vis_core.extension.live_updates import LiveUpdateError  # noqa: E402

__all__ += [
    "Answer", "AnswerReason", "Field", "FieldType", "FormDeclarationError", "LiveEvent",
    "LiveEventKind", "LiveUpdateError", "LiveView", "Option", "Secret", "Tone", "ask", "button",
    "checkbox", "code", "column", "disclosure", "divider", "group", "heading", "link", "live",
    "multiline", "multiselect", "option", "otp", "output", "paragraph", "password", "plaintext",
    "progress", "row", "select", "slider", "spinner", "stat", "status", "step", "steps", "table",
]
