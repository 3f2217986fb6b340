"""Find extension entry files: bundled, installed packages, the user's folder, the project's."""

from __future__ import annotations

import base64
import importlib.util
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import vis_core
from vis_core.model.extensions import ExtensionSource
from vis_core.paths import ControlSnapshot, lapsed_extension, take_snapshot

ENTRY_POINT_GROUP = "vis.extensions"
PROJECT_EXTENSIONS = Path(".vis") / "extensions"


@dataclass(frozen=True)
class Candidate:
    """One entry file to load: a ``.py`` file or a folder's ``__init__.py``."""

    source: ExtensionSource
    path: Path
    entry_file: Path
    module_name: str
    is_package: bool = False
    distribution: str | None = None
    error: str | None = None
    # A project extension's files (path, bytes) as the trust check read them: these load,
    # not the files on disk (which may have changed since). Empty: read the files.
    sources: tuple[tuple[str, bytes], ...] = ()

    def to_wire(self) -> dict[str, Any]:
        """This candidate as a worker's ``load`` message carries it."""
        return {
            **asdict(self),
            "source": self.source.value,
            "path": str(self.path),
            "entry_file": str(self.entry_file),
            "sources": [[path, base64.b64encode(data).decode()] for path, data in self.sources],
        }

    @classmethod
    def from_wire(cls, raw: Mapping[str, Any]) -> Candidate:
        return cls(
            **{
                **raw,
                "source": ExtensionSource(raw["source"]),
                "path": Path(raw["path"]),
                "entry_file": Path(raw["entry_file"]),
                "sources": tuple((str(p), base64.b64decode(d)) for p, d in raw["sources"]),
            }
        )

    @property
    def hint(self) -> str:
        """A name to show before the entry file told its real name."""
        return self.path.stem if not self.is_package else self.path.name


BUNDLED_PACKAGE = "vis_extensions"


def bundled_dir() -> Path:
    """The bundled extensions: the ``vis_extensions`` package (the repository's ``extensions/``
    folder, installed under that name), else ``extensions/`` beside an uninstalled ``vis_core``."""
    spec = importlib.util.find_spec(BUNDLED_PACKAGE)
    if spec is not None and spec.submodule_search_locations:
        return Path(next(iter(spec.submodule_search_locations))).resolve()
    return Path(vis_core.__file__).resolve().parent.parent / "extensions"


def _module_name(source: ExtensionSource, stem: str, taken: set[str]) -> str:
    base = f"vis_ext_{source.value}_{re.sub(r'[^0-9A-Za-z_]', '_', stem)}"
    name, n = base, 2
    while name in taken:
        name, n = f"{base}_{n}", n + 1
    taken.add(name)
    return name


def scan_folder(folder: Path, source: ExtensionSource, taken: set[str]) -> list[Candidate]:
    """Entry files directly in ``folder``: ``name.py`` and ``name/__init__.py``, sorted by name."""
    if not folder.is_dir():
        return []
    found: list[Candidate] = []
    for item in sorted(folder.iterdir(), key=lambda p: p.name):
        if item.name.startswith(("_", ".")):
            continue
        package = item.is_dir() and (item / "__init__.py").is_file()
        if package or (item.is_file() and item.suffix == ".py"):
            entry = item / "__init__.py" if package else item
            name = _module_name(source, item.name if package else item.stem, taken)
            found.append(Candidate(source, item, entry, name, is_package=package))
    return found


def scan_snapshot(snapshot: ControlSnapshot, taken: set[str]) -> list[Candidate]:
    """The project's entry files as the trust check read them (``.vis/extensions/``:
    ``name.py`` and ``name/__init__.py``, sorted by name), each with the bytes it loads."""
    prefix = PROJECT_EXTENSIONS.as_posix() + "/"
    folder = snapshot.root / PROJECT_EXTENSIONS
    entries: dict[str, bool] = {}  # name in the folder: is a package
    for relative in snapshot.names():
        if not relative.startswith(prefix):
            continue
        head, sep, tail = relative[len(prefix) :].partition("/")
        if head.startswith(("_", ".")):
            continue
        if not sep and head.endswith(".py"):
            entries[head] = False
        elif tail == "__init__.py":
            entries[head] = True
    found: list[Candidate] = []
    source = ExtensionSource.PROJECT
    for name in sorted(entries):
        package = entries[name]
        path = folder / name
        entry = path / "__init__.py" if package else path
        inside = f"{prefix}{name}/" if package else f"{prefix}{name}"
        sources = tuple(
            (str(snapshot.root / rel), data)
            for rel, data in sorted(snapshot.files.items())
            if (rel.startswith(inside) if package else rel == inside) and rel.endswith(".py")
        )
        relative = entry.relative_to(snapshot.root).as_posix()
        problem = snapshot.problems.get(relative)
        found.append(
            Candidate(
                source,
                path,
                entry,
                _module_name(source, path.stem if not package else name, taken),
                is_package=package,
                error=None if problem is None else f"cannot read {entry}: {problem}",
                sources=sources,
            )
        )
    return found


def scan_packages() -> list[Candidate]:
    """Installed packages declaring the ``vis.extensions`` entry-point group."""
    from vis_core import installed  # here: a session's worker reads only ``Candidate``

    found: list[Candidate] = []
    for name, module, dist in installed.entry_points(ENTRY_POINT_GROUP):
        try:
            spec = importlib.util.find_spec(module)
        except (ImportError, ValueError) as exc:
            spec, problem = None, f"{type(exc).__name__}: {exc}"
        else:
            problem = None if spec is not None else f"module {module!r} is not installed"
        if spec is None or spec.origin is None or not spec.origin.endswith(".py"):
            found.append(
                Candidate(
                    ExtensionSource.PACKAGE,
                    Path(module),
                    Path(module),
                    module,
                    distribution=dist,
                    error=problem or f"entry point {name!r} does not name a Python module",
                )
            )
            continue
        origin = Path(spec.origin)
        is_package = spec.submodule_search_locations is not None
        found.append(
            Candidate(
                ExtensionSource.PACKAGE,
                origin.parent if is_package else origin,
                origin,
                module,
                is_package=is_package,
                distribution=dist,
            )
        )
    return found


def discover(
    *,
    project_root: Path | None,
    trusted: bool,
    user_dir: Path,
    bundled: Path | None = None,
    include_packages: bool = True,
    snapshot: ControlSnapshot | None = None,
    lapsed: bool = False,
) -> list[Candidate]:
    """Every entry file in load order: bundled, packages, user, then project (when trusted),
    the project's from ``snapshot`` (its control files as the trust check read them; read
    now without one). ``lapsed``: the project was trusted with other control files; its
    entry files are named with that as their error, and none of them loads."""
    taken: set[str] = set()
    candidates: list[Candidate] = []
    if bundled is not None:
        candidates += scan_folder(bundled, ExtensionSource.BUNDLED, taken)
    if include_packages:
        candidates += scan_packages()
    candidates += scan_folder(user_dir, ExtensionSource.USER, taken)
    if project_root is not None and (trusted or lapsed):
        if snapshot is None or snapshot.root != project_root.resolve():
            snapshot = take_snapshot(project_root, hashed=False)  # trusted, or only named
        found = scan_snapshot(snapshot, taken)
        if not trusted:
            why = lapsed_extension(snapshot.root)
            found = [replace(candidate, error=why, sources=()) for candidate in found]
        candidates += found
    return candidates
