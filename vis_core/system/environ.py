"""The one builder of a child's environment: a minimal base taken from the host, then the
project's values, then the call's own; the host environment's secrets never pass.

Each kind of child has its base (:class:`Audience`): the model's children (the sandbox, its
shells, jailed extension children, git) see what a program needs to run as the person
expects; Vis's own Python children (extension workers) also where Vis keeps its files; a
helper that only runs the interpreter (the regex worker) sees nothing of the host but its
libraries. ``INHERITED`` is the one exception: a child of an extension's own process (``vis.shell``
unjailed), which passes that process's environment on as ``subprocess`` would.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from enum import StrEnum

from vis_core.system.quiet import HOLD_ENV, hold_file


class Audience(StrEnum):
    """Whose child it is: which names of the host environment it may see."""

    MODEL = "model"  # the sandbox, shells, jailed extension children, git for the model
    VIS = "vis"  # Vis's own Python children: the extension workers
    INTERPRETER = "interpreter"  # a helper that only needs Python to start (the regex worker)
    INHERITED = "inherited"  # an extension process's unjailed child: its environment as is


# Names a program needs to run as the person expects; nothing that carries a credential.
BASE_NAMES = (
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LANGUAGE",
    "TERM",
    "COLORTERM",
    "TMPDIR",
    "TZ",
    # where the person's toolchains live (paths, never credentials)
    "VIRTUAL_ENV",
    "PYENV_ROOT",
    "PYENV_VERSION",
    "CONDA_PREFIX",
    "CONDA_DEFAULT_ENV",
    "GOPATH",
    "GOROOT",
    "CARGO_HOME",
    "RUSTUP_HOME",
    "JAVA_HOME",
    "NVM_DIR",
    "NVM_BIN",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
)
BASE_PREFIXES = ("LC_",)
# What a Python process of Vis and the tools it runs need: also where Vis keeps its files.
VIS_NAMES = (
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TZ",
    "TMPDIR",
    "TERM",
    "VIS_HOME",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "XDG_CACHE_HOME",
    "XDG_STATE_HOME",
    "VIRTUAL_ENV",
    "SYSTEMROOT",
)
# What the interpreter itself may need to start; its PATH is the system default.
INTERPRETER_NAMES = ("LD_LIBRARY_PATH", "DYLD_LIBRARY_PATH", "LANG", "LC_ALL")
QUIET = {"PAGER": "cat", "GIT_PAGER": "cat", "PYTHONUNBUFFERED": "1"}


def _base(audience: Audience, source: Mapping[str, str]) -> dict[str, str]:
    if audience is Audience.INHERITED:
        return {**source, **QUIET}
    if audience is Audience.VIS:  # a worker's jailed commands wait while Vis holds the model
        kept = {name: source[name] for name in VIS_NAMES if name in source}
        return {**kept, HOLD_ENV: hold_file()}
    if audience is Audience.INTERPRETER:
        found = {name: source[name] for name in INTERPRETER_NAMES if name in source}
        return {"PATH": os.defpath, **found}
    kept = {
        name: value
        for name, value in source.items()
        if name in BASE_NAMES or name.startswith(BASE_PREFIXES)
    }
    return {**kept, **QUIET}


def child_environment(
    project: Mapping[str, str] | None = None,
    extra: Mapping[str, str] | None = None,
    host: Mapping[str, str] | None = None,
    *,
    audience: Audience = Audience.MODEL,
) -> dict[str, str]:
    """A child's environment: the base of ``audience`` taken from ``host`` (default: this
    process's environment), then the project's values, then ``extra`` (the call's own).

    Only the names of the audience's base pass from ``host``: API keys and tokens never do
    (``INHERITED`` aside, which passes an extension process's own environment on)."""
    source = os.environ if host is None else host
    return {**_base(audience, source), **dict(project or {}), **dict(extra or {})}
