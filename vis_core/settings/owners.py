"""Who declared each setting: Vis itself, or a loaded or switched-off extension."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from vis_core.extension.settings_decl import CORE_OWNER, Setting
from vis_core.model.extensions import ExtensionSource, ExtensionStatus
from vis_core.settings.core import CORE_SETTINGS
from vis_core.settings.declaring import DeclaringExtension, ExtensionSet


@dataclass(frozen=True)
class SettingOwner:
    """A declared setting and who declared it (Vis itself, or an extension)."""

    setting: Setting[Any]
    name: str = CORE_OWNER
    extension: DeclaringExtension | None = None

    @property
    def is_core(self) -> bool:
        return self.extension is None

    @property
    def is_project(self) -> bool:
        return self.extension is not None and self.extension.source is ExtensionSource.PROJECT


def declared(loaded: ExtensionSet | None) -> dict[str, SettingOwner]:
    """Every declared setting by id: Vis's own, then loaded and switched-off extensions'
    (a loaded one's first when two declare the same id)."""
    owners = {s.id: SettingOwner(s) for s in CORE_SETTINGS}
    if loaded is None:
        return owners
    ranked = sorted(
        (e for e in loaded.extensions if e.declaration is not None),
        key=lambda e: e.status is not ExtensionStatus.LOADED,
    )
    for ext in ranked:
        if ext.status not in (ExtensionStatus.LOADED, ExtensionStatus.DISABLED):
            continue
        for setting in ext.settings:
            owners.setdefault(setting.id, SettingOwner(setting, ext.name, ext))
    return owners
