"""What one row shows at a chosen scope: value, deciding level, override mark, editability."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from vis_core.extension.settings_decl import SettingScope, SettingType
from vis_core.settings.reading import Overrides, Resolution, SettingsReader
from vis_core.settings.tree import SettingNode
from vis_core.settings.values import Source

SAVED = "Saved"
NOT_SET = "Not set"
#: the scopes whose values of a project extension's setting are kept in one place, the
#: project's files
_ONE_PLACE = (SettingScope.GLOBAL, SettingScope.PROJECT)


@dataclass(frozen=True)
class RowState:
    """A setting row as seen at ``scope`` for one session."""

    node: SettingNode
    scope: SettingScope
    resolution: Resolution
    display: str
    overridden_here: bool
    editable: bool
    reason: str | None

    @property
    def value(self) -> Any:
        return self.resolution.value

    @property
    def source(self) -> Source:
        return self.resolution.source


def display_value(node: SettingNode, resolution: Resolution) -> str:
    """The value as text; a secret shows only Saved or Not set."""
    setting = node.setting
    if setting.is_secret:
        return SAVED if resolution.has(Source.GLOBAL) else NOT_SET
    if setting.type is SettingType.BOOLEAN:
        return "on" if resolution.value else "off"
    return str(resolution.value) if resolution.value != "" else "(empty)"


def row_state(
    service: SettingsReader,
    node: SettingNode,
    scope: SettingScope,
    session_id: str | None,
    preloaded: Overrides | None = None,
    group: str | None = None,
) -> RowState:
    """The row at ``scope``; pass ``preloaded``/``group`` when building many rows at once."""
    resolution = service.resolve(node.setting.id, session_id, preloaded)
    editable, reason = service.allowed(node.owner, scope)
    if group is None and preloaded is None:
        group = service.session_group(session_id)
    if editable and scope is SettingScope.GROUP and group is None:
        editable, reason = False, "this session is in no group; move it with /group NAME"
    if editable and scope is SettingScope.SESSION and session_id is None:
        editable, reason = False, "no session is open"
    here = [Source(scope.value)]
    if node.owner.is_project and scope in _ONE_PLACE:  # global means the whole project
        here = [Source(s.value) for s in _ONE_PLACE]
    overridden = any(resolution.has(source) for source in here)
    return RowState(
        node=node,
        scope=scope,
        resolution=resolution,
        display=display_value(node, resolution),
        overridden_here=overridden,
        editable=editable,
        reason=reason,
    )
