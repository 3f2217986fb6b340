"""Compile extension entry files as if they began with ``from __future__ import annotations``."""

from __future__ import annotations
import __future__

from types import CodeType


def compile_entry_source(source: str | bytes, filename: str) -> CodeType:
    """Compile an entry file's source so annotations stay strings (resolved later, statically).

    Raises ``SyntaxError`` naming ``filename`` like ``compile`` does.
    """
    return compile(
        source,
        filename,
        "exec",
        flags=__future__.annotations.compiler_flag,
        dont_inherit=True,
    )
