"""``vis.Grant``: a toolchain path that an extension's jailed children may read (or write)."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass
from enum import StrEnum
from pathlib import Path

from vis_core.extension.errors import member


class GrantMode(StrEnum):
    READ = "read"
    READ_WRITE = "read_write"


def _named(path: str) -> Path:
    return Path(os.path.normpath(os.path.expanduser(path)))


def _real(path: str) -> Path:
    return Path(os.path.realpath(os.path.expanduser(path)))


def _covers(grant: Path, protected: Path) -> bool:
    return grant == protected or grant in protected.parents


def _refused(path: Path, place: Callable[[str], Path]) -> str | None:
    """What ``path`` covers that no grant may, the filesystem root, the home folder or the Vis
    home, each placed by ``place`` (as named, or with its links followed); None if none."""
    if path == Path(path.anchor):
        return "the filesystem root"
    home = place("~")
    if _covers(path, home):
        return f"your home folder {home}; grant the toolchain folder inside it instead"
    configured = os.environ.get("VIS_HOME")
    for vis_home in (place("~/.vis"), *([place(configured)] if configured else [])):
        if _covers(path, vis_home):
            return f"the Vis home {vis_home}"
    return None


@dataclass(frozen=True)
class Grant:
    """``Grant(path, mode="read", reason=...)``; checked when the extension loads.

    The path must be absolute after ``~`` expansion and must not cover the filesystem root,
    the home folder or the Vis home; a path inside them is allowed.
    """

    path: str
    mode: GrantMode | str = GrantMode.READ
    _: KW_ONLY
    reason: str

    def __post_init__(self) -> None:
        if not isinstance(self.path, str | os.PathLike):
            raise ValueError(f"vis.Grant path must be a path, got {type(self.path).__name__}")
        text = os.fspath(self.path)
        mode = member(GrantMode, self.mode, f"vis.Grant({text!r}): mode")
        if not isinstance(self.reason, str) or not self.reason.strip():
            raise ValueError(
                f"vis.Grant({text!r}): give a reason, a short text that tells people why the "
                "extension needs the path"
            )
        expanded = Path(os.path.expanduser(text))
        if not expanded.is_absolute():
            raise ValueError(
                f"vis.Grant({text!r}) is refused: the path must be absolute after '~' expansion"
            )
        named, target = _named(text), _real(text)  # the jail binds the target of a link
        linked = "it" if target == named else f"it links to {target}, which"
        for path, place, it in ((named, _named, "it"), (target, _real, linked)):
            problem = _refused(path, place)
            if problem:
                raise ValueError(f"vis.Grant({text!r}) is refused: {it} covers {problem}")
        object.__setattr__(self, "path", text)
        object.__setattr__(self, "mode", mode)
        object.__setattr__(self, "reason", self.reason.strip())

    @property
    def expanded(self) -> Path:
        """The absolute path the jail receives."""
        return _named(self.path)
