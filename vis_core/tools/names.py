"""The names Vis itself gives the model's sandbox: an extension tool may not take one of them."""

from __future__ import annotations

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

#: other names the sandbox defines for the model (helpers and context)
SANDBOX_NAMES = frozenset({"defs", "session"})

RESERVED_NAMES = BUILTIN_TOOL_NAMES | SANDBOX_NAMES
