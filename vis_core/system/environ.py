"""The environment the model's children see: a minimal base plus the project's values."""

from __future__ import annotations

import os
from collections.abc import Mapping

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
QUIET = {"PAGER": "cat", "GIT_PAGER": "cat", "PYTHONUNBUFFERED": "1"}


def base_environment(host: Mapping[str, str] | None = None) -> dict[str, str]:
    """The harmless part of ``host`` (default: this process's environment)."""
    source = os.environ if host is None else host
    return {
        name: value
        for name, value in source.items()
        if name in BASE_NAMES or name.startswith(BASE_PREFIXES)
    }


def child_environment(
    project: Mapping[str, str] | None = None,
    extra: Mapping[str, str] | None = None,
    host: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """What a sandbox, shell or jailed child gets: base, quiet pagers, project values, ``extra``.

    The host environment (API keys, tokens) never passes; only the names in :data:`BASE_NAMES`.
    """
    return {**base_environment(host), **QUIET, **dict(project or {}), **dict(extra or {})}
