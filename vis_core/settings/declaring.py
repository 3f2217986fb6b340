"""What the settings read of the loaded extensions; the extension host's objects fit these."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

from vis_core.extension.declarations import Extension
from vis_core.extension.settings_decl import Setting
from vis_core.model.extensions import ExtensionSource, ExtensionStatus


class ShippedGuide(Protocol):
    """A guide or skill an extension ships (a Markdown file ``doc`` reads)."""

    @property
    def name(self) -> str: ...

    @property
    def kind(self) -> str: ...


class DeclaringExtension(Protocol):
    """One discovered extension: where it came from, how it loaded, what it declares."""

    @property
    def name(self) -> str: ...

    @property
    def source(self) -> ExtensionSource: ...

    @property
    def status(self) -> ExtensionStatus: ...

    @property
    def tag(self) -> str: ...

    @property
    def path(self) -> Path: ...

    @property
    def error(self) -> object | None: ...

    @property
    def declaration(self) -> Extension | None: ...

    @property
    def settings(self) -> tuple[Setting[Any], ...]: ...

    def guides(self) -> Sequence[ShippedGuide]: ...


class ExtensionSet(Protocol):
    """Every discovered extension, in load order."""

    @property
    def extensions(self) -> Sequence[DeclaringExtension]: ...
