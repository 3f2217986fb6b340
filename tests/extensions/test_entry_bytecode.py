"""A bundled entry file runs from its bytecode file when Python would (fresh, with postponed
annotations); any other entry file is compiled from its source (a project's: from the bytes
its trust check read), whatever bytecode file lies beside it."""

from __future__ import annotations

import importlib.util
import os
import py_compile
from pathlib import Path

import pytest

from vis_core.extension.metadata import build_metadata
from vis_core.extension_host.discovery import Candidate
from vis_core.extension_host.entry import execute_entry, forget_module
from vis_core.model.extensions import ExtensionSource

ENTRY = """\
{future}import vis_core.extension as vis

WHICH = {which!r}


def probe(x: NotDefinedAnywhere) -> int:
    return 1


vis.register_extension(vis.Extension(name="probe", description="Probe."))
"""
FUTURE = "from __future__ import annotations\n"


def _write(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8")


def _swap_keeping_stamp(path: Path, text: str) -> None:
    """Write ``text`` (as long as what is there) and keep the file's mtime: Python's check
    of a bytecode file (source size and mtime) still calls it fresh."""
    stat = path.stat()
    assert len(text.encode()) == stat.st_size
    _write(path, text)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))


def _candidate(
    entry: Path, source: ExtensionSource, sources: tuple[tuple[str, bytes], ...] = ()
) -> Candidate:
    name = f"vis_ext_{source.value}_probe"
    return Candidate(source, entry, entry, name, sources=sources)


def _which(candidate: Candidate) -> str:
    _declaration, module = execute_entry(candidate, build=build_metadata())
    try:
        return module.WHICH
    finally:
        forget_module(candidate.module_name)


def test_a_bundled_entry_file_runs_from_its_bytecode(tmp_path: Path) -> None:
    entry = tmp_path / "probe.py"
    _write(entry, ENTRY.format(future=FUTURE, which="compiled"))
    py_compile.compile(str(entry), doraise=True)
    _swap_keeping_stamp(entry, ENTRY.format(future=FUTURE, which="rewrite!"))
    assert _which(_candidate(entry, ExtensionSource.BUNDLED)) == "compiled"
    later = entry.stat().st_mtime + 10  # newer than its bytecode: compiled from the source
    os.utime(entry, (later, later))
    assert _which(_candidate(entry, ExtensionSource.BUNDLED)) == "rewrite!"


@pytest.mark.parametrize("source", [ExtensionSource.USER, ExtensionSource.PROJECT])
def test_a_planted_bytecode_file_never_runs(tmp_path: Path, source: ExtensionSource) -> None:
    entry = tmp_path / "probe.py"
    _write(entry, ENTRY.format(future=FUTURE, which="planted"))
    py_compile.compile(str(entry), doraise=True)  # beside the file, as a checkout may hold
    text = ENTRY.format(future=FUTURE, which="sources")
    _swap_keeping_stamp(entry, text)
    read = ((str(entry), text.encode()),) if source is ExtensionSource.PROJECT else ()
    assert _which(_candidate(entry, source, read)) == "sources"


def test_bytecode_without_postponed_annotations_is_not_used(tmp_path: Path) -> None:
    entry = tmp_path / "probe.py"
    _write(entry, ENTRY.format(future="", which="x"))
    py_compile.compile(str(entry), doraise=True)
    assert Path(importlib.util.cache_from_source(str(entry))).is_file()
    candidate = _candidate(entry, ExtensionSource.BUNDLED)
    _declaration, module = execute_entry(candidate, build=build_metadata())
    try:  # compiled from its source as every entry file is: annotations stay text
        assert module.probe.__annotations__ == {"x": "NotDefinedAnywhere", "return": "int"}
    finally:
        forget_module(candidate.module_name)
