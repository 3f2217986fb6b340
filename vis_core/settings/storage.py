"""Where saved values live: ``config.toml``, the project's files, and the secrets file.

* Global values: ``config.toml``. Vis's own settings are top-level keys (``model = "…"``,
  ``jail = true``); extension settings sit in ``[extensions.settings]``; switched-off
  extensions in ``[extensions] disabled = [...]``. Everything else in the file is kept.
  ``[providers.*]`` and ``[models.*]`` are the model tables; any other key is said as ignored.
* Project values: the ``toggles:`` of ``vis.yml`` (read only, edited by hand) and the
  ``[settings]`` table of ``.vis/settings.toml`` (every setting, Vis's own and extensions',
  in that one table), which Settings writes. A value in ``.vis/settings.toml`` wins over
  the same id in ``vis.yml``; resetting it there lets the ``vis.yml`` value show again.
* Secrets: ``secrets`` in the user config folder, JSON, mode 0600, never anywhere else.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vis_core.config import not_toml, not_utf8, too_deep
from vis_core.paths import ControlSnapshot, take_snapshot
from vis_core.settings.core import CORE_SETTING_IDS
from vis_core.system.redaction import read_secrets

# config.toml's tables besides Vis's own settings: extensions', providers', models'
CONFIG_TABLES = frozenset({"extensions", "providers", "models"})
EXTENSIONS_KEYS = frozenset({"settings", "disabled"})  # of its [extensions]
PROJECT_FILE = "vis.yml"
PROJECT_SETTINGS = Path(".vis") / "settings.toml"
SECRET_MODE = 0o600


class SettingsFileError(ValueError):
    """A settings file cannot be read or written; the message names the file."""


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise SettingsFileError(f"cannot read {path}: {exc}") from None
    return _parse_toml(data, path)


def _parse_toml(data: bytes, path: Path) -> dict[str, Any]:
    """``data``, the bytes of ``path``, as TOML; ``SettingsFileError`` naming it."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SettingsFileError(not_utf8(path, exc)) from None
    import tomllib  # only when there is a file to read

    try:
        return tomllib.loads(text)
    except RecursionError:
        raise SettingsFileError(too_deep(path)) from None
    except tomllib.TOMLDecodeError as exc:
        raise SettingsFileError(not_toml(path, exc)) from None


@contextmanager
def edit_toml(path: Path) -> Iterator[Any]:
    """Edit ``path`` in place with tomlkit: comments, order and formatting are kept.

    The file is checked first (a broken file raises :class:`SettingsFileError` naming it and
    is never rewritten), then written atomically with its mode kept.
    """
    import tomlkit

    _read_toml(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        text = ""
    document = tomlkit.parse(text)
    yield document
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(tomlkit.dumps(document), encoding="utf-8")
    if path.exists():
        os.chmod(tmp, path.stat().st_mode & 0o777)
    tmp.replace(path)


def _subtable(data: Any, key: str) -> Any:
    """``data[key]`` as a table, created (as a ``[key]`` table) when missing."""
    if key not in data:
        import tomlkit

        data[key] = tomlkit.table()
    value = data[key]
    if not isinstance(value, dict):
        raise SettingsFileError(f"[{key}] must be a table")
    return value


def _put(table: Any, key: str, value: Any | None) -> None:
    if value is None:
        table.pop(key, None)
    else:
        table[key] = value


def _table(data: Mapping[str, Any], key: str, where: str) -> dict[str, Any]:
    value = data.get(key, {})
    if not isinstance(value, dict):
        raise SettingsFileError(f"{where}: [{key}] must be a table")
    return value


class GlobalFile:
    """The global values in ``config.toml``; every write re-reads the file and keeps the rest."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def _values(self, data: Mapping[str, Any]) -> dict[str, Any]:
        values = {key: data[key] for key in CORE_SETTING_IDS if key in data}
        extensions = _table(data, "extensions", str(self.path))
        values.update(_table(extensions, "settings", f"{self.path} [extensions]"))
        return values

    def values(self) -> dict[str, Any]:
        return self._values(_read_toml(self.path))

    def read(self) -> tuple[dict[str, Any], list[str]]:
        """The values, and the keys Vis does not read: a top-level key that is neither a
        setting of Vis nor one of its tables, and one of ``[extensions]`` (as
        ``extensions.KEY``). The settings in ``[extensions.settings]`` are not checked: they
        may be those of an extension that is not loaded here (another project's)."""
        data = _read_toml(self.path)
        unknown = [k for k in data if k not in CORE_SETTING_IDS and k not in CONFIG_TABLES]
        extensions = data.get("extensions")
        if isinstance(extensions, dict):
            unknown += [f"extensions.{k}" for k in extensions if k not in EXTENSIONS_KEYS]
        return self._values(data), unknown

    def key_variables(self) -> list[str]:
        """The environment variables ``[providers.*] api_key_env`` names (unreadable: none)."""
        try:
            tables = _read_toml(self.path).get("providers")
        except SettingsFileError:
            return []
        tables = tables if isinstance(tables, dict) else {}
        names = (t.get("api_key_env") for t in tables.values() if isinstance(t, dict))
        return [name for name in names if isinstance(name, str) and name]

    def disabled(self) -> frozenset[str]:
        extensions = _table(_read_toml(self.path), "extensions", str(self.path))
        names = extensions.get("disabled", [])
        if not isinstance(names, list):
            raise SettingsFileError(f"{self.path}: [extensions] disabled must be a list of names")
        return frozenset(str(name) for name in names)

    def write(self, setting_id: str, value: Any | None) -> None:
        """Save ``value`` for ``setting_id`` (``None`` removes it); comments and layout stay."""
        with edit_toml(self.path) as data:
            if setting_id in CORE_SETTING_IDS:
                target = data
            else:
                target = _subtable(_subtable(data, "extensions"), "settings")
            _put(target, setting_id, value)

    def set_disabled(self, name: str, disabled: bool) -> None:
        with edit_toml(self.path) as data:
            extensions = _subtable(data, "extensions")
            names = [n for n in extensions.get("disabled", []) if n != name]
            if disabled:
                names.append(name)
            extensions["disabled"] = sorted(names)


@dataclass(frozen=True)
class ProjectValues:
    """The project's values: ``vis.yml`` ``toggles:`` under ``.vis/settings.toml``."""

    toggles: dict[str, Any] = field(default_factory=dict)
    saved: dict[str, Any] = field(default_factory=dict)
    problems: tuple[str, ...] = ()
    outside: tuple[str, ...] = ()  # keys of .vis/settings.toml outside [settings]: ignored

    def get(self, setting_id: str) -> tuple[bool, Any]:
        if setting_id in self.saved:
            return True, self.saved[setting_id]
        if setting_id in self.toggles:
            return True, self.toggles[setting_id]
        return False, None


class ProjectFiles:
    """Reads and writes a project's values; ``read()`` is what ``/reload`` refreshes."""

    def __init__(self, root: Path) -> None:
        self.root = root

    @property
    def yml(self) -> Path:
        return self.root / PROJECT_FILE

    @property
    def settings_file(self) -> Path:
        return self.root / PROJECT_SETTINGS

    def read(self, snapshot: ControlSnapshot | None = None) -> ProjectValues:
        """The project's values from ``snapshot`` (the control files as read and hashed
        once; the files as they are now without one)."""
        if snapshot is None:
            snapshot = take_snapshot(self.root, hashed=False)
        problems: list[str] = []
        toggles: dict[str, Any] = {}
        try:
            toggles = self._toggles(_bytes(snapshot, PROJECT_FILE))
        except SettingsFileError as exc:
            problems.append(str(exc))
        saved: dict[str, Any] = {}
        outside: tuple[str, ...] = ()
        try:
            data = _bytes(snapshot, PROJECT_SETTINGS.as_posix())
            document = {} if data is None else _parse_toml(data, self.settings_file)
            saved = _table(document, "settings", str(self.settings_file))
            outside = tuple(key for key in document if key != "settings")
        except SettingsFileError as exc:
            problems.append(str(exc))
        return ProjectValues(toggles, saved, tuple(problems), outside)

    def _toggles(self, data: bytes | None) -> dict[str, Any]:
        if data is None:
            return {}
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise SettingsFileError(not_utf8(self.yml, exc)) from None
        import yaml

        from vis_core.small_files import load_yaml

        try:
            document = load_yaml(text) or {}
        except RecursionError:
            raise SettingsFileError(too_deep(self.yml)) from None
        except yaml.YAMLError as exc:
            raise SettingsFileError(
                f"{self.yml} is not valid YAML ({exc}); its toggles are ignored"
            ) from None
        block = document.get("toggles") if isinstance(document, dict) else None
        if block is None:
            return {}
        if not isinstance(block, dict):
            raise SettingsFileError(
                f"{self.yml}: 'toggles:' must map setting ids to values, such as "
                "'report_details: true'"
            )
        return {str(key): value for key, value in block.items()}

    def write(self, setting_id: str, value: Any | None) -> None:
        with edit_toml(self.settings_file) as data:
            _put(_subtable(data, "settings"), setting_id, value)


def _bytes(snapshot: ControlSnapshot, relative: str) -> bytes | None:
    """The control file ``relative`` as ``snapshot`` read it; ``SettingsFileError`` when it
    could not be read."""
    try:
        return snapshot.read(relative)
    except OSError as exc:
        raise SettingsFileError(str(exc)) from None


class SecretsFile:
    """Secret values as JSON in a file only the user can read (mode 0600)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def values(self) -> dict[str, str]:
        try:
            return read_secrets(self.path)
        except ValueError as exc:
            raise SettingsFileError(str(exc)) from None

    def write(self, setting_id: str, value: str | None) -> None:
        data = self.values()
        if value is None or value == "":
            data.pop(setting_id, None)
        else:
            data[setting_id] = value
        from vis_core.system.files import atomic_write  # only when a secret is saved

        text = json.dumps(data, indent=2, sort_keys=True)
        atomic_write(self.path, text.encode("utf-8"), mode=SECRET_MODE)


def disabled_extensions(config_file: Path) -> frozenset[str]:
    """The switched-off extensions in ``config.toml``; none when the file cannot be read."""
    try:
        return GlobalFile(config_file).disabled()
    except SettingsFileError:
        return frozenset()
