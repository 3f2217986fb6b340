"""Run one entry file as a fresh module and collect its ``register_extension`` declaration."""

from __future__ import annotations
import __future__

import importlib.util
import sys
import traceback
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import CodeType, ModuleType

from vis_core.extension.declarations import Extension, registering
from vis_core.extension_host.discovery import Candidate


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


def compile_entry(source: bytes | str, filename: str) -> CodeType:
    """Compile an entry file as if it began with ``from __future__ import annotations``."""
    return compile(
        source, filename, "exec", flags=__future__.annotations.compiler_flag, dont_inherit=True
    )


def forget_module(name: str) -> None:
    """Drop ``name`` and its submodules from ``sys.modules`` so the next load is fresh."""
    for key in [k for k in sys.modules if k == name or k.startswith(name + ".")]:
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
        source = _source(candidate)
        code = compile_entry(source, str(candidate.entry_file))
        with registering(candidate.entry_file, environment) as registration:
            exec(code, module.__dict__)
    except (Exception, SystemExit) as exc:  # sys.exit in an entry file must not end Vis
        forget_module(candidate.module_name)
        raise EntryFailed(error_from_exception(candidate, exc)) from exc
    if registration.declaration is None:
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
    return registration.declaration, module
