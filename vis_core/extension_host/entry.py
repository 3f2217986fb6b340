"""Run one entry file as a fresh module and collect its ``register_extension`` declaration."""

from __future__ import annotations
import __future__

import importlib.util
import os
import sys
import traceback
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import CodeType, ModuleType
from typing import Any

from vis_core.extension.declarations import Extension, registering
from vis_core.extension_host.discovery import Candidate
from vis_core.model.extensions import ExtensionSource


@dataclass(frozen=True)
class LoadError:
    """Why one extension did not load: the file, the line when known, and what was wrong."""

    extension: str
    path: Path
    line: int | None
    message: str

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else str(self.path)
        return f"{where}: {self.message}"


class EntryFailed(Exception):
    """Loading an entry file failed; ``error`` says where and why."""

    def __init__(self, error: LoadError) -> None:
        super().__init__(str(error))
        self.error = error


_ANNOTATIONS = __future__.annotations.compiler_flag


def compile_entry(source: bytes | str, filename: str) -> CodeType:
    """Compile an entry file as if it began with ``from __future__ import annotations``."""
    return compile(source, filename, "exec", flags=_ANNOTATIONS, dont_inherit=True)


def _bundled_code(candidate: Candidate, loader: Any) -> CodeType | None:
    """A bundled entry file's code from its bytecode file, when one is there, is fresh and
    was compiled with postponed annotations (Vis's own files, compiled when Vis is
    installed); else None. Never for another source's file: its bytecode files are not
    Vis's (a project's are the checkout's)."""
    if candidate.source is not ExtensionSource.BUNDLED or candidate.sources:
        return None
    if not os.path.isfile(importlib.util.cache_from_source(str(candidate.entry_file))):
        return None  # the loader would compile it (without the flag) and not keep it
    try:
        code = loader.get_code(candidate.module_name)
    except (ImportError, OSError, SyntaxError, ValueError):  # compiled below, errors said
        return None
    if not isinstance(code, CodeType) or not code.co_flags & _ANNOTATIONS:
        return None
    return code


def forget_module(name: str) -> None:
    """Drop ``name`` and its submodules from ``sys.modules`` so the next load is fresh (from a
    copy of the table: another thread may import meanwhile)."""
    for key in [k for k in sys.modules.copy() if k == name or k.startswith(name + ".")]:
        del sys.modules[key]


def _inside(filename: str, candidate: Candidate) -> bool:
    path = Path(filename)
    if candidate.is_package:
        return path.is_relative_to(candidate.path)
    return path == candidate.entry_file


def error_from_exception(candidate: Candidate, exc: BaseException) -> LoadError:
    """A load error naming the file and line of the extension's own code that failed."""
    if isinstance(exc, SyntaxError) and exc.filename and _inside(exc.filename, candidate):
        detail = exc.msg or "invalid syntax"
        return LoadError(candidate.hint, Path(exc.filename), exc.lineno, f"SyntaxError: {detail}")
    path, line = candidate.entry_file, None
    for frame in traceback.extract_tb(exc.__traceback__):
        if _inside(frame.filename, candidate):
            path, line = Path(frame.filename), frame.lineno
    if isinstance(exc, SystemExit):
        called = "sys.exit()" if exc.code is None else f"sys.exit({exc.code!r})"
        return LoadError(
            candidate.hint,
            path,
            line,
            f"the entry file called {called} while loading; an extension must not end the "
            "process (raise an exception to report a problem)",
        )
    text = str(exc) or type(exc).__name__
    return LoadError(candidate.hint, path, line, f"{type(exc).__name__}: {text}")


def _source(candidate: Candidate) -> bytes:
    """The entry file's bytes: for a project extension, as the trust check read them (its
    package's modules are then imported from those bytes too), else read now."""
    if not candidate.sources:
        return candidate.entry_file.read_bytes()
    sources = dict(candidate.sources)
    if candidate.is_package:
        from vis_core.extension_host.verified_modules import import_verified

        import_verified(candidate.module_name, candidate.path, sources)
    data = sources.get(str(candidate.entry_file))
    if data is None:
        raise ImportError(f"{candidate.entry_file} was not read by the trust check")
    return data


def execute_entry(
    candidate: Candidate,
    environment: Mapping[str, str] | None = None,
    *,
    build: Mapping[str, str | None],
) -> tuple[Extension, ModuleType]:
    """Load ``candidate`` into a fresh module with the build globals ``build`` (the host's
    :func:`~vis_core.extension.metadata.build_metadata`, computed once for all its workers);
    raise ``EntryFailed``."""
    if candidate.error is not None:
        raise EntryFailed(LoadError(candidate.hint, candidate.path, None, candidate.error))
    forget_module(candidate.module_name)
    spec = importlib.util.spec_from_file_location(
        candidate.module_name,
        candidate.entry_file,
        submodule_search_locations=[str(candidate.path)] if candidate.is_package else None,
    )
    if spec is None:
        raise EntryFailed(
            LoadError(candidate.hint, candidate.entry_file, None, "cannot load this file")
        )
    module = importlib.util.module_from_spec(spec)
    module.__dict__.update(build)
    sys.modules[candidate.module_name] = module
    try:
        code = _bundled_code(candidate, spec.loader)
        if code is None:
            code = compile_entry(_source(candidate), str(candidate.entry_file))
        with registering(candidate.entry_file, environment) as registration:
            exec(code, module.__dict__)
        declaration = registration.extension()
    except (Exception, SystemExit) as exc:  # sys.exit in an entry file must not end Vis
        forget_module(candidate.module_name)
        raise EntryFailed(error_from_exception(candidate, exc)) from exc
    if declaration is None:
        forget_module(candidate.module_name)
        raise EntryFailed(
            LoadError(
                candidate.hint,
                candidate.entry_file,
                None,
                "the file did not call vis.register_extension(vis.Extension(...)); "
                "call it once at the end of the entry file",
            )
        )
    return declaration, module
