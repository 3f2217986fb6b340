"""The settings tree every front end shows: a Vis section and one group per extension."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vis_core.extension.settings_decl import Setting
from vis_core.model.extensions import ExtensionStatus, GuideKind
from vis_core.settings.core import CORE_SETTINGS
from vis_core.settings.declaring import DeclaringExtension, ExtensionSet, ShippedGuide
from vis_core.settings.owners import SettingOwner

VIS_SECTION = "Vis"
EXTENSIONS_SECTION = "Extensions"
_PRIORITY = {ExtensionStatus.LOADED: 0, ExtensionStatus.DISABLED: 1, ExtensionStatus.FAILED: 2}


@dataclass(frozen=True)
class SettingNode:
    """One setting row; ``depth`` is how far it is nested under its parents."""

    owner: SettingOwner
    depth: int

    @property
    def setting(self) -> Setting[Any]:
        return self.owner.setting

    def matches(self, query: str) -> bool:
        """Search by label and description (case-insensitive)."""
        needle = query.strip().lower()
        setting = self.setting
        return (
            not needle or needle in setting.label.lower() or needle in (setting.description.lower())
        )


@dataclass(frozen=True)
class ExtensionGroup:
    """One extension in the Extensions section: tag, on/off, load error, its settings and the
    guides and skills it ships (Markdown files, read without running the extension)."""

    name: str
    tag: str
    status: ExtensionStatus
    path: Path
    error: str | None
    description: str
    settings: tuple[SettingNode, ...]
    guides: tuple[ShippedGuide, ...] = ()

    def guide_names(self, kind: GuideKind) -> tuple[str, ...]:
        """Names (for ``doc``) of the shipped guides (``guide``) or skills (``skill``)."""
        return tuple(g.name for g in self.guides if g.kind == kind)

    @property
    def enabled(self) -> bool:
        return self.status is ExtensionStatus.LOADED

    @property
    def failed(self) -> bool:
        return self.status is ExtensionStatus.FAILED


@dataclass(frozen=True)
class SettingsTree:
    """Vis's own settings, then the extension groups (failed ones keep their group, without
    rows)."""

    vis: tuple[SettingNode, ...]
    extensions: tuple[ExtensionGroup, ...]

    def nodes(self) -> Iterator[SettingNode]:
        yield from self.vis
        for group in self.extensions:
            yield from group.settings

    def find(self, setting_id: str) -> SettingNode | None:
        return next((n for n in self.nodes() if n.setting.id == setting_id), None)


def nest(owners: Sequence[SettingOwner]) -> tuple[SettingNode, ...]:
    """Settings in declaration order, each followed by its children one step in.

    A setting whose parent is not in ``owners`` (or whose parents loop) stays at the top.
    """
    by_id = {o.setting.id: o for o in owners}
    children: dict[str, list[SettingOwner]] = {}
    roots: list[SettingOwner] = []
    for owner in owners:
        parent = owner.setting.parent
        if parent is None or parent not in by_id or _loops(owner, by_id):
            roots.append(owner)
        else:
            children.setdefault(parent, []).append(owner)
    nodes: list[SettingNode] = []

    def walk(owner: SettingOwner, depth: int) -> None:
        nodes.append(SettingNode(owner, depth))
        for child in children.get(owner.setting.id, ()):
            walk(child, depth + 1)

    for root in roots:
        walk(root, 0)
    return tuple(nodes)


def _loops(owner: SettingOwner, by_id: dict[str, SettingOwner]) -> bool:
    seen = {owner.setting.id}
    parent = owner.setting.parent
    while parent is not None and parent in by_id:
        if parent in seen:
            return True
        seen.add(parent)
        parent = by_id[parent].setting.parent
    return False


def _group(ext: DeclaringExtension) -> ExtensionGroup:
    """``ext``'s group; one that failed shows its error and no row: Vis refused its
    declaration, so a setting it declared is another owner's (the same id) or unknown."""
    owners = [
        SettingOwner(setting, ext.name, ext)
        for setting in ext.settings
        if not (setting.is_secret and ext.tag == "project")  # never shown, never saved
        and ext.status is not ExtensionStatus.FAILED
    ]
    declaration = ext.declaration
    return ExtensionGroup(
        name=ext.name,
        tag=ext.tag,
        status=ext.status,
        path=ext.path,
        error=None if ext.error is None else str(ext.error),
        description="" if declaration is None else declaration.description,
        settings=nest(owners),
        guides=_guides(ext),
    )


def _guides(ext: DeclaringExtension) -> tuple[ShippedGuide, ...]:
    """The extension's packaged guides and skills; none for one that failed to load."""
    if ext.status is ExtensionStatus.FAILED:
        return ()
    try:
        return tuple(ext.guides())
    except OSError:  # an unreadable folder: the row still shows, without guides
        return ()


def build_tree(loaded: ExtensionSet | None) -> SettingsTree:
    """The tree from declarations only: building it runs no extension code."""
    vis = nest([SettingOwner(setting) for setting in CORE_SETTINGS])
    chosen: dict[str, DeclaringExtension] = {}
    for ext in () if loaded is None else loaded.extensions:
        rank = _PRIORITY.get(ext.status)
        if rank is None:  # overridden by a same-named extension: that one has the group
            continue
        held = chosen.get(ext.name)
        if held is None or rank < _PRIORITY[held.status]:
            chosen[ext.name] = ext
    groups = tuple(_group(ext) for ext in chosen.values())
    return SettingsTree(vis, groups)
