"""The user's ``config.toml``: read leniently, report a malformed or non-UTF-8 file clearly,
read again when it changes on disk."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class UserConfig:
    """The parsed config, or an empty one with ``problem`` saying why the file was not used."""

    path: Path
    data: dict[str, Any] = field(default_factory=dict)
    problem: str | None = None


def load_config(path: Path) -> UserConfig:
    """Parse ``path``; a missing file is an empty config, a broken one is reported, never lost."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return UserConfig(path)
    except OSError as exc:
        return UserConfig(path, problem=f"cannot read {path}: {exc}")
    except UnicodeDecodeError as exc:
        return UserConfig(path, problem=not_utf8(path, exc))
    import tomllib  # only when there is a file: its parser is ~2% of a `vis run` start

    try:
        return UserConfig(path, tomllib.loads(text))
    except RecursionError:
        return UserConfig(path, problem=too_deep(path))
    except tomllib.TOMLDecodeError as exc:
        return UserConfig(path, problem=not_toml(path, exc))


def not_toml(path: Path, exc: ValueError) -> str:
    """The message for a settings file that is not valid TOML, the same from each reader of
    it (the models' and the settings'): what Vis does meanwhile differs by reader (no block
    runs while the jail's value is unknown), so it says only what to do."""
    return f"{path} is not valid TOML ({exc}); fix the file. Vis left the file as it is."


def too_deep(path: Path) -> str:
    """The message for a settings file nested too deeply to read."""
    return (
        f"{path} nests arrays or tables too deeply for Vis to read; fix the file. "
        "Vis left the file as it is."
    )


class ConfigFile:
    """``config.toml`` as last read; ``reread()`` reads the file again when its
    :func:`file_stamp` changed since (a person edited it while Vis runs)."""

    def __init__(self, path: Path, loaded: UserConfig | None = None) -> None:
        self.path = path
        self._stamp = file_stamp(path)
        self._config = loaded if loaded is not None else load_config(path)

    def current(self) -> UserConfig:
        """The config as last read (:meth:`reread` reads it again when it changed)."""
        return self._config

    def reread(self) -> bool:
        """Read the file again if it changed; True when it had."""
        stamp = file_stamp(self.path)
        if stamp == self._stamp:
            return False
        self._stamp, self._config = stamp, load_config(self.path)
        return True

    def replace(self, config: UserConfig) -> None:
        """Use ``config`` (just read by the caller) until the file changes again."""
        self._stamp, self._config = file_stamp(self.path), config


def file_stamp(path: Path) -> tuple[int, int, int] | None:
    """When and how ``path`` was last written: its modification time, size and inode (a file
    put in its place is told apart too); None when there is none."""
    try:
        status = path.stat()
    except OSError:
        return None
    return status.st_mtime_ns, status.st_size, status.st_ino


def not_utf8(path: Path, exc: UnicodeDecodeError) -> str:
    """The message for a settings file that is not UTF-8 text."""
    return (
        f"{path} is not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at offset {exc.start}); "
        "save it as UTF-8. Vis left the file as it is."
    )
