"""The public extension SDK, used as ``import blockether.vis.extension as vis`` (the spec's
name, the same module) or ``import vis_core.extension as vis``.

Names load on first use (PEP 562): importing one submodule, e.g. ``vis_core.model.activity``,
no longer imports the whole SDK. ``from vis_core.extension import X`` and ``vis.X`` work as before.
"""

from __future__ import annotations

import sys
import types
from typing import TYPE_CHECKING, Any

from vis_core.lazy import lender, lent_names

if TYPE_CHECKING:  # what a type checker sees; at run time names load on first use
    from vis_core.contracts.sequence import sequence as sequence
    from vis_core.contracts.specs import FieldSpec as FieldSpec
    from vis_core.contracts.specs import HelpDocument as HelpDocument
    from vis_core.contracts.specs import NamespaceSpec as NamespaceSpec
    from vis_core.contracts.specs import ParameterSpec as ParameterSpec
    from vis_core.contracts.specs import ToolSpec as ToolSpec
    from vis_core.contracts.specs import TypeSpec as TypeSpec
    from vis_core.extension import testing as testing
    from vis_core.extension.attachments import attach as attach
    from vis_core.extension.attachments import get_attachment as get_attachment
    from vis_core.extension.attachments import list_attachments as list_attachments
    from vis_core.extension.attachments import read_attachment as read_attachment
    from vis_core.extension.attachments import show_attachment as show_attachment
    from vis_core.extension.catalog import Catalog as Catalog
    from vis_core.extension.context import publish_activity as publish_activity
    from vis_core.extension.declarations import CommandResult as CommandResult
    from vis_core.extension.declarations import Extension as Extension
    from vis_core.extension.declarations import OpHook as OpHook
    from vis_core.extension.declarations import Setting as Setting
    from vis_core.extension.declarations import SlashCommand as SlashCommand
    from vis_core.extension.declarations import err as err
    from vis_core.extension.declarations import ok as ok
    from vis_core.extension.declarations import register_extension as register_extension
    from vis_core.extension.errors import GatewayError as GatewayError
    from vis_core.extension.errors import VisToolError as VisToolError
    from vis_core.extension.forms import Answer as Answer
    from vis_core.extension.forms import AnswerReason as AnswerReason
    from vis_core.extension.forms import Field as Field
    from vis_core.extension.forms import FieldType as FieldType
    from vis_core.extension.forms import FormDeclarationError as FormDeclarationError
    from vis_core.extension.forms import Option as Option
    from vis_core.extension.forms import Secret as Secret
    from vis_core.extension.forms import ask as ask
    from vis_core.extension.forms import checkbox as checkbox
    from vis_core.extension.forms import column as column
    from vis_core.extension.forms import group as group
    from vis_core.extension.forms import heading as heading
    from vis_core.extension.forms import multiline as multiline
    from vis_core.extension.forms import multiselect as multiselect
    from vis_core.extension.forms import option as option
    from vis_core.extension.forms import otp as otp
    from vis_core.extension.forms import paragraph as paragraph
    from vis_core.extension.forms import password as password
    from vis_core.extension.forms import plaintext as plaintext
    from vis_core.extension.forms import row as row
    from vis_core.extension.forms import select as select
    from vis_core.extension.forms import slider as slider
    from vis_core.extension.fs import fs as fs
    from vis_core.extension.fs import jailed_shell as jailed_shell
    from vis_core.extension.fs import shell as shell
    from vis_core.extension.grants import Grant as Grant
    from vis_core.extension.hooks import OperationBlocked as OperationBlocked
    from vis_core.extension.hooks import block as block
    from vis_core.extension.hooks import repair as repair
    from vis_core.extension.hooks import strings_of as strings_of
    from vis_core.extension.live import LiveEvent as LiveEvent
    from vis_core.extension.live import LiveEventKind as LiveEventKind
    from vis_core.extension.live import LiveView as LiveView
    from vis_core.extension.live import live as live
    from vis_core.extension.live_nodes import Tone as Tone
    from vis_core.extension.live_nodes import button as button
    from vis_core.extension.live_nodes import code as code
    from vis_core.extension.live_nodes import disclosure as disclosure
    from vis_core.extension.live_nodes import divider as divider
    from vis_core.extension.live_nodes import link as link
    from vis_core.extension.live_nodes import output as output
    from vis_core.extension.live_nodes import progress as progress
    from vis_core.extension.live_nodes import spinner as spinner
    from vis_core.extension.live_nodes import stat as stat
    from vis_core.extension.live_nodes import status as status
    from vis_core.extension.live_nodes import step as step
    from vis_core.extension.live_nodes import steps as steps
    from vis_core.extension.live_nodes import table as table
    from vis_core.extension.live_updates import LiveUpdateError as LiveUpdateError
    from vis_core.extension.logs import log as log
    from vis_core.extension.logs import notify as notify
    from vis_core.extension.mcp_servers import McpServer as McpServer
    from vis_core.extension.mcp_servers import mcp_server as mcp_server
    from vis_core.extension.metadata import build_metadata as build_metadata
    from vis_core.extension.mutation import file_mutation_queue as file_mutation_queue
    from vis_core.extension.network import NetworkFilter as NetworkFilter
    from vis_core.extension.network import rewrite_headers as rewrite_headers
    from vis_core.extension.providers import Provider as Provider
    from vis_core.extension.providers import ProviderModel as ProviderModel
    from vis_core.extension.roots import project_root as project_root
    from vis_core.extension.roots import workspace_root as workspace_root
    from vis_core.extension.sessions import council as council
    from vis_core.extension.sessions import list_sessions as list_sessions
    from vis_core.extension.sessions import read_session as read_session
    from vis_core.extension.sessions import run as run
    from vis_core.extension.sessions import session as session
    from vis_core.extension.sessions import sessions as sessions
    from vis_core.extension.sessions import speech as speech
    from vis_core.extension.settings_decl import SettingScope as SettingScope
    from vis_core.extension.settings_decl import SettingType as SettingType
    from vis_core.extension.state import state as state
    from vis_core.extension.symbols import Symbol as Symbol
    from vis_core.extension.symbols import method as method
    from vis_core.extension.tools_proxy import tools as tools
    from vis_core.extension.truncation import DEFAULT_MAX_BYTES as DEFAULT_MAX_BYTES
    from vis_core.extension.truncation import DEFAULT_MAX_LINES as DEFAULT_MAX_LINES
    from vis_core.extension.truncation import fit_output as fit_output
    from vis_core.extension.truncation import save_full_output as save_full_output
    from vis_core.extension.truncation import truncate_head as truncate_head
    from vis_core.extension.truncation import truncate_line as truncate_line
    from vis_core.extension.truncation import truncate_tail as truncate_tail
    from vis_core.extension.unavailable import SpeechUnavailable as SpeechUnavailable
    from vis_core.extension.workspace import git as git
    from vis_core.extension.workspace import python_environment as python_environment
    from vis_core.extension.workspace import workspace_files as workspace_files
    from vis_core.model.activity import Activity as Activity
    from vis_core.model.activity import ActivityAudio as ActivityAudio
    from vis_core.model.activity import ActivityCode as ActivityCode
    from vis_core.model.activity import ActivityDiff as ActivityDiff
    from vis_core.model.activity import ActivityFile as ActivityFile
    from vis_core.model.activity import ActivityHeading as ActivityHeading
    from vis_core.model.activity import ActivityImage as ActivityImage
    from vis_core.model.activity import ActivityMarkdown as ActivityMarkdown
    from vis_core.model.activity import ActivityPresentation as ActivityPresentation
    from vis_core.model.activity import ActivityProgress as ActivityProgress
    from vis_core.model.activity import ActivitySection as ActivitySection
    from vis_core.model.activity import ActivityTable as ActivityTable
    from vis_core.model.activity import ActivityTerminal as ActivityTerminal
    from vis_core.model.activity import ActivityTerminalLine as ActivityTerminalLine
    from vis_core.model.activity import ActivityText as ActivityText
    from vis_core.model.activity import ActivityVideo as ActivityVideo
    from vis_core.model.activity import SymbolTag as SymbolTag
    from vis_core.model.conversation import ImagePart as ImagePart
    from vis_core.model.conversation import Message as Message
    from vis_core.model.conversation import ModelRequest as ModelRequest
    from vis_core.model.conversation import ResponseDone as ResponseDone
    from vis_core.model.conversation import StopReason as StopReason
    from vis_core.model.conversation import TextDelta as TextDelta
    from vis_core.model.conversation import ThinkingDelta as ThinkingDelta
    from vis_core.model.conversation import ThinkingPart as ThinkingPart
    from vis_core.model.conversation import ToolCall as ToolCall
    from vis_core.model.conversation import ToolCallReady as ToolCallReady
    from vis_core.model.conversation import ToolCallStarted as ToolCallStarted
    from vis_core.model.conversation import ToolDefinition as ToolDefinition
    from vis_core.model.conversation import UsageUpdate as UsageUpdate
    from vis_core.model.network import NetworkRequest as NetworkRequest
    from vis_core.model.network import NetworkResponse as NetworkResponse
    from vis_core.model.usage import Usage as Usage
    from vis_core.system.git import GitFailed as GitFailed
    from vis_core.text_limits import format_size as format_size

_LENT = lent_names(__file__)  # the ``X as X`` imports above: the public names, one list
__all__ = sorted(_LENT)  # pyright: ignore[reportUnsupportedDunderAll]
__getattr__ = lender(__name__, _LENT)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


class _Package(types.ModuleType):
    """Keeps ``vis.fs``, ``vis.live``, ``vis.sessions`` and ``vis.state`` the SDK values.

    Importing a submodule binds it on its package; four public names share a submodule's
    name, so that binding is skipped for them and the name resolves to its value instead.
    """

    def __setattr__(self, name: str, value: Any) -> None:
        if (
            name in _LENT
            and isinstance(value, types.ModuleType)
            and value.__name__ == f"{__name__}.{name}"
        ):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
