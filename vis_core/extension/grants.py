"""``vis.Grant``: a toolchain path that an extension's jailed children may read (or write)."""

from __future__ import annotations

import os
from dataclasses import KW_ONLY, dataclass
from enum import StrEnum
from pathlib import Path

from vis_core.extension.errors import member


class GrantMode(StrEnum):
    READ = "read"
    READ_WRITE = "read_write"


def _vis_homes() -> list[Path]:
    homes = [Path(os.path.expanduser("~/.vis"))]
    configured = os.environ.get("VIS_HOME")
    if configured:
        homes.append(Path(os.path.normpath(os.path.expanduser(configured))))
    return homes


def _covers(grant: Path, protected: Path) -> bool:
    return grant == protected or grant in protected.parents


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
        normal = Path(os.path.normpath(expanded))
        home = Path(os.path.normpath(os.path.expanduser("~")))
        if normal == Path(normal.anchor):
            raise ValueError(f"vis.Grant({text!r}) is refused: it covers the filesystem root")
        if _covers(normal, home):
            raise ValueError(
                f"vis.Grant({text!r}) is refused: it covers your home folder {home}; grant the "
                "toolchain folder inside it instead"
            )
        for vis_home in _vis_homes():
            if _covers(normal, vis_home):
                raise ValueError(
                    f"vis.Grant({text!r}) is refused: it covers the Vis home {vis_home}"
                )
        object.__setattr__(self, "path", text)
        object.__setattr__(self, "mode", mode)
        object.__setattr__(self, "reason", self.reason.strip())

    @property
    def expanded(self) -> Path:
        """The absolute path the jail receives."""
        return Path(os.path.normpath(os.path.expanduser(self.path)))
