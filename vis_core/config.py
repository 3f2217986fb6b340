"""The user's ``config.toml``: read leniently, report a malformed or non-UTF-8 file clearly."""

from __future__ import annotations

import tomllib
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
    try:
        return UserConfig(path, tomllib.loads(text))
    except RecursionError:
        return UserConfig(path, problem=too_deep(path))
    except tomllib.TOMLDecodeError as exc:
        return UserConfig(
            path,
            problem=f"{path} is not valid TOML ({exc}); Vis uses its defaults until you fix it. "
            "The file was left as it is.",
        )


def too_deep(path: Path) -> str:
    """The message for a settings file nested too deeply to read."""
    return (
        f"{path} nests arrays or tables too deeply for Vis to read; fix the file. "
        "Vis left the file as it is."
    )


def not_utf8(path: Path, exc: UnicodeDecodeError) -> str:
    """The message for a settings file that is not UTF-8 text."""
    return (
        f"{path} is not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at offset {exc.start}); "
        "save it as UTF-8. Vis left the file as it is."
    )
