"""Where the SDK runs: trusted code (the host, an extension worker, a script) or the model's
sandbox, where registration and host calls are refused."""

from __future__ import annotations

from enum import StrEnum


class Place(StrEnum):
    TRUSTED = "trusted"  # the host, an extension worker, or a script importing the SDK
    SANDBOX = "sandbox"  # the model's python_execution child


_place = Place.TRUSTED


def enter_sandbox() -> None:
    """Mark this process as the model's sandbox (the python_execution child calls it once)."""
    global _place
    _place = Place.SANDBOX


def current_place() -> Place:
    return _place


def _in_sandbox(what: str) -> str:
    return (
        f"{what} belongs to trusted extension code (an extension's entry file, tools and "
        "callbacks), not to python_execution; call the extension's tool instead"
    )


def require_trusted(what: str) -> None:
    """Raise ``RuntimeError`` for registration and host calls made from the sandbox."""
    if _place is Place.SANDBOX:
        raise RuntimeError(_in_sandbox(what))


def require_trusted_fs(what: str) -> None:
    """Raise ``PermissionError`` for ``vis.fs`` helpers used from the sandbox."""
    if _place is Place.SANDBOX:
        raise PermissionError(_in_sandbox(what))
