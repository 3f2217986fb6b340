"""Sessions as files: a stored session exported as Markdown, HTML or JSON."""

from __future__ import annotations

from vis_core.session_files.export import (
    FORMATS,
    ExportFormat,
    default_file_name,
    export_session,
    format_for_path,
    write_export,
)

__all__ = [
    "FORMATS",
    "ExportFormat",
    "default_file_name",
    "export_session",
    "format_for_path",
    "write_export",
]
