"""Where the SDK runs: trusted code (the host, an extension worker, a script) or the model's
sandbox, whose runtime is not trusted: registration and host calls are refused there."""

from __future__ import annotations


def in_sandbox(what: str) -> str:
    """Why ``what`` is refused in the model's sandbox."""
    return (
        f"{what} belongs to trusted extension code (an extension's entry file, tools and "
        "callbacks), not to python_execution; call the extension's tool instead"
    )


def _untrusted() -> bool:
    from vis_core.extension.runtime import installed_runtime

    runtime = installed_runtime()
    return runtime is not None and not runtime.trusted


def require_trusted(what: str) -> None:
    """Raise ``RuntimeError`` for registration and host calls made from the sandbox."""
    if _untrusted():
        raise RuntimeError(in_sandbox(what))


def require_trusted_fs(what: str) -> None:
    """Raise ``PermissionError`` for ``vis.fs`` helpers used from the sandbox."""
    if _untrusted():
        raise PermissionError(in_sandbox(what))
