"""Rows for ``vis doctor``: every extension with its source, status and error."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from vis_core.extension_host.loaded import ExtensionStatus, LoadedExtensions


@dataclass(frozen=True)
class ExtensionRow:
    """One line of the extension listing."""

    name: str
    source: str
    tag: str
    status: ExtensionStatus
    path: Path
    error: str | None

    def __str__(self) -> str:
        text = f"{self.name:<24} {self.source:<8} {self.status:<10} {self.path}"
        return f"{text}\n    {self.error}" if self.error else text

    @property
    def failed(self) -> bool:
        return self.status is ExtensionStatus.FAILED


def describe(loaded: LoadedExtensions) -> list[ExtensionRow]:
    """Every discovered extension in load order, failed and overridden ones included."""
    rows = []
    for ext in loaded.extensions:
        error = None if ext.error is None else str(ext.error)
        if ext.status is ExtensionStatus.OVERRIDDEN and ext.overridden_by is not None:
            error = f"overridden by {ext.overridden_by}"
        rows.append(ExtensionRow(ext.name, ext.source.value, ext.tag, ext.status, ext.path, error))
    return rows
