"""The modules of a project extension package, imported from the bytes the trust check read.

Apart from :mod:`entry`, which imports it only for such a package: ``importlib.abc`` costs every
other worker start ~5 ms.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import sys
from importlib.machinery import ModuleSpec
from pathlib import Path
from types import ModuleType
from typing import Any


class _VerifiedLoader(importlib.abc.Loader):
    """Runs a module of a project extension from the bytes the trust check read."""

    def __init__(self, path: str, data: bytes) -> None:
        self.path, self.data = path, data

    def create_module(self, spec: ModuleSpec) -> ModuleType | None:
        return None

    def exec_module(self, module: ModuleType) -> None:
        exec(compile(self.data, self.path, "exec", dont_inherit=True), module.__dict__)

    def get_source(self, fullname: str) -> str:
        return self.data.decode("utf-8", "replace")


class _VerifiedModules(importlib.abc.MetaPathFinder):
    """The modules of project extension packages, from the bytes the trust check read: a
    file that was not read then (added or changed since) is not imported from disk."""

    def __init__(self) -> None:
        self.packages: dict[str, tuple[Path, dict[str, bytes]]] = {}

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> ModuleSpec | None:
        prefix = next((p for p in self.packages if fullname.startswith(p + ".")), None)
        if prefix is None:
            return None
        folder, sources = self.packages[prefix]
        base = folder.joinpath(*fullname[len(prefix) + 1 :].split("."))
        for file, package in ((base / "__init__.py", True), (base.with_suffix(".py"), False)):
            data = sources.get(str(file))
            if data is not None:
                spec = importlib.util.spec_from_loader(
                    fullname, _VerifiedLoader(str(file), data), origin=str(file)
                )
                assert spec is not None
                spec.has_location = True
                if package:
                    spec.submodule_search_locations = [str(base)]
                return spec
        raise ModuleNotFoundError(
            f"No module named {fullname!r} among the files of this project extension as "
            "`vis trust` checked them (a file added or changed since is not loaded)",
            name=fullname,
        )


_verified = _VerifiedModules()


def import_verified(package: str, folder: Path, sources: dict[str, bytes]) -> None:
    """Import the modules of ``package`` (the project extension in ``folder``) from
    ``sources``, the bytes by path the trust check read, from now on in this process."""
    _verified.packages[package] = (folder, sources)
    if _verified not in sys.meta_path:
        sys.meta_path.insert(0, _verified)
