"""The names the model's sandbox already has (Vis's and Python's): an extension tool may not
take one of them."""

from __future__ import annotations

import builtins

from vis_core.extension.metadata import METADATA_NAMES

#: the built-in tools of every session (``builtin_tools``, attachments, ``apropos``/``doc``,
#: ``fold_session``, ``list_sessions``/``read_session``, the draft functions)
BUILTIN_TOOL_NAMES = frozenset(
    {
        "cat",
        "grep",
        "patch",
        "ls",
        "shell",
        "shells",
        "run_tests",
        "attach",
        "list_attachments",
        "get_attachment",
        "read_attachment",
        "show_attachment",
        "apropos",
        "doc",
        "fold_session",
        "list_sessions",
        "read_session",
        "skill_file",
        "draft_create",
        "draft_sync",
        "draft_approve",
        "draft_discard",
        "run_session",
        "consult",
    }
)

#: other names the sandbox defines for the model (helpers, context, the workspace root and the
#: build globals)
SANDBOX_NAMES = frozenset({"defs", "session", "project_root_path", *METADATA_NAMES})

#: Python's builtins: a tool global of one of these names hides it in every block (``list``
#: would be a tool, and ``list(range(3))`` a coroutine)
PYTHON_NAMES = frozenset({*dir(builtins), "__builtins__"})

RESERVED_NAMES = BUILTIN_TOOL_NAMES | SANDBOX_NAMES | PYTHON_NAMES


def reserved_as(name: str) -> str | None:
    """What ``name`` already is in the sandbox, for a refusal; None when a tool may take it."""
    if name in BUILTIN_TOOL_NAMES:
        return f"the built-in {name!r} of Vis"
    if name in SANDBOX_NAMES:
        return f"the sandbox global {name!r}"
    if name in PYTHON_NAMES:
        return f"Python's built-in {name!r}"
    return None
