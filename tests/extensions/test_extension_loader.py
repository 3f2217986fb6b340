"""The loader: discovery, failures recorded per extension, overrides, setting ids, reload."""

from __future__ import annotations

import importlib.metadata
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from vis_core.extension import metadata
from vis_core.extension.context import CallContext, calling
from vis_core.extension.metadata import build_metadata
from vis_core.extension.runtime import OUTSIDE, RuntimeOverride
from vis_core.extension_host.discovery import ExtensionSource
from vis_core.extension_host.doctor import describe
from vis_core.extension_host.entry import execute_entry, forget_module
from vis_core.extension_host.loaded import ExtensionStatus
from vis_core.extension_host.loader import load_extensions
from vis_core.extension_host.worker_client import SessionWorker, WorkerPlace
from vis_core.ipc.trusted import decode_from_worker
from vis_core.paths import VisPaths

Installer = Callable[..., Path]


def _user_dir() -> Path:
    return VisPaths.from_env().extensions_dir


def _load(**kwargs: object):
    kwargs.setdefault("bundled", None)
    kwargs.setdefault("include_packages", False)
    return load_extensions(**kwargs)  # type: ignore[arg-type]


def test_good_broken_and_duplicate_setting_id(install: Installer) -> None:
    folder = install(_user_dir(), "steering_mode", "broken", "steering_twin")
    loaded = _load()
    by_path = {ext.path.name: ext for ext in loaded.extensions}
    good = by_path["steering_mode.py"]
    assert good.status is ExtensionStatus.LOADED and good.name == "steering-mode"
    assert [e.name for e in loaded.enabled] == ["steering-mode"]

    broken = by_path["broken.py"]
    assert broken.status is ExtensionStatus.FAILED and not broken.enabled
    assert broken.error is not None
    assert broken.error.path == folder / "broken.py" and broken.error.line == 5
    assert broken.error.message.startswith("SyntaxError: ")

    dup = by_path["steering_twin.py"]
    assert dup.status is ExtensionStatus.FAILED and dup.name == "copycat"
    assert dup.error is not None
    assert "setting id 'steering_mode' is already declared by extension 'steering-mode'" in (
        dup.error.message
    )
    assert str(folder / "steering_mode.py") in dup.error.message
    assert set(loaded.errors) == {broken.error, dup.error}
    assert [s.id for _, s in loaded.settings()] == ["steering_mode"]


BUILD_PROBE = '''
import vis_core.extension as vis


def built() -> str:
    """The build commit this entry file was loaded with."""
    return VIS_SHA_RELEASE  # noqa: F821 - a build global


vis.register_extension(
    vis.Extension(
        name="built",
        alias="built",
        description=f"Built from {VIS_SHA_RELEASE}.",
        symbols=[vis.Symbol(built)],
    )
)
'''


async def test_workers_load_entry_files_with_the_build_globals_of_the_host(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a stamp only the host's environment holds (no worker sees VIS_SHA_RELEASE): the
    # registration worker and the session worker use what the host computed, once
    monkeypatch.setenv("VIS_SHA_RELEASE", "stamped-in-the-host")
    metadata._computed.cache_clear()
    try:
        _user_dir().mkdir(parents=True, exist_ok=True)
        (_user_dir() / "built.py").write_text(BUILD_PROBE, encoding="utf-8")
        loaded = _load()
        (ext,) = loaded.extensions
        assert ext.declaration is not None
        assert ext.declaration.description == "Built from stamped-in-the-host."
        (tool,) = loaded.host_tools()
        worker = SessionWorker(lambda: loaded, WorkerPlace("s1", workspace, workspace), {})
        try:
            answer = await worker.call(tool, (), {})  # packed for the sandbox
            assert decode_from_worker(answer) == "stamped-in-the-host"
        finally:
            worker.stop()
    finally:
        metadata._computed.cache_clear()


def test_core_setting_ids_are_reserved_for_vis(install: Installer) -> None:
    install(_user_dir(), "core_setting")
    ext = _load().extensions[0]
    assert ext.status is ExtensionStatus.FAILED
    assert ext.error is not None and "setting id 'theme' is already declared by Vis" in str(
        ext.error
    )


def test_exception_at_import_names_file_and_line(install: Installer) -> None:
    folder = install(_user_dir(), "raises")
    error = _load().extensions[0].error
    assert error is not None
    assert (error.path, error.line) == (folder / "raises.py", 6)
    assert error.message == "KeyError: 'missing'"
    assert str(error) == f"{folder / 'raises.py'}:6: KeyError: 'missing'"


def test_invalid_declaration_is_a_load_failure(install: Installer) -> None:
    install(_user_dir(), "invalid_declaration")
    error = _load().extensions[0].error
    assert error is not None and error.line is not None
    assert error.message.startswith("ValueError: setting id 'Bad-Id' is not a lower-case")


def test_no_register_call_and_registering_twice(install: Installer) -> None:
    install(_user_dir(), "no_register", "twice")
    first, second = _load().extensions
    assert first.error is not None and "did not call vis.register_extension" in first.error.message
    assert second.error is not None and "twice" in second.error.message
    assert "call it once per entry file" in second.error.message


SERVERS = """
import vis_core.extension as vis

listed = vis.mcp_server("listed", {"command": "listed-server"})
vis.mcp_server("called", {"command": "called-server"})
vis.register_extension(vis.Extension(name="servers", description="D.", mcp_servers=[listed]))
"""


def test_servers_an_entry_file_adds_with_vis_mcp_server_are_its_extensions() -> None:
    """A call at load declares the server for the extension the file registers (it was
    dropped unless put in ``mcp_servers=``), once; the same name twice fails the load."""
    folder = _user_dir()
    folder.mkdir(parents=True)
    (folder / "servers.py").write_text(SERVERS)
    twice = 'vis.mcp_server("called", {"command": "again"})\n'
    (folder / "twins.py").write_text(SERVERS.replace('"servers"', '"twins"') + twice)
    servers, twins = sorted(_load().extensions, key=lambda ext: ext.name)
    assert servers.declaration is not None, servers.error
    declared = servers.declaration.mcp_servers
    assert [(s.name, s.config["command"]) for s in declared] == [
        ("listed", "listed-server"),
        ("called", "called-server"),
    ]
    assert twins.error is not None
    assert (
        twins.error.message
        == "ValueError: extension 'twins': MCP server 'called' is declared twice"
    )


COMMANDS = """
import vis_core.extension as vis

vis.register_extension(vis.Extension(
    name=NAME, description="D.",
    slash_commands=[vis.SlashCommand(COMMAND, lambda ctx: "shadow")],
))
"""


def test_a_slash_command_named_like_a_built_in_or_another_extensions_fails_the_load() -> None:
    """An extension's /goal was dropped for the built-in, and a second extension's /greet for
    the first's, each without a word (doctor: loaded). Now the load fails naming the owner,
    as a setting id or a tool name does."""
    folder = _user_dir()
    folder.mkdir(parents=True)
    for name, command in (("a-first", "greet"), ("b-second", "greet"), ("c-shadow", "goal")):
        source = COMMANDS.replace("NAME", repr(name)).replace("COMMAND", repr(command))
        (folder / f"{name}.py").write_text(source)
    first, second, shadow = _load().extensions
    assert first.status is ExtensionStatus.LOADED, first.error
    assert second.error is not None and shadow.error is not None
    assert second.error.message == (
        f"slash command /greet is already declared by extension 'a-first' (user: "
        f"{folder / 'a-first.py'}); give the command another name"
    )
    assert shadow.error.message == (
        "slash command /goal is a built-in command of Vis; give the command another name"
    )


SHADOWS = """
import vis_core.extension as vis


def project_root_path() -> str:
    \"\"\"Named like the sandbox's global.\"\"\"
    return "/"


vis.register_extension(vis.Extension(
    name=NAME, alias=ALIAS, description="D.", symbols=[SYMBOL],
))
"""


def test_a_tool_named_like_a_python_builtin_or_a_sandbox_global_fails_the_load() -> None:
    """``vis.Symbol(fn, name="list")`` loaded, and ``list`` was then the tool in every block:
    ``list(range(3))`` was a coroutine, a tool named ``print`` printed nothing. Only Vis's own
    tool names were refused. Python's builtins and the sandbox's globals are refused now too,
    naming what the tool would hide."""
    folder = _user_dir()
    folder.mkdir(parents=True)
    symbols = {
        "a-list": ('vis.Symbol(project_root_path, name="list")', "Python's built-in 'list'"),
        "b-print": ('vis.Symbol(project_root_path, name="print")', "Python's built-in 'print'"),
        "c-root": ("vis.Symbol(project_root_path)", "the sandbox global 'project_root_path'"),
        "d-version": (
            'vis.Symbol(project_root_path, name="VIS_VERSION")',
            "the sandbox global 'VIS_VERSION'",
        ),
        "e-fine": ('vis.Symbol(project_root_path, name="root_path")', None),
    }
    for name, (symbol, _hidden) in symbols.items():
        source = SHADOWS.replace("NAME", repr(name)).replace("SYMBOL", symbol)
        source = source.replace("ALIAS", repr(name.replace("-", "_")))
        (folder / f"{name}.py").write_text(source)
    loaded = {ext.name: ext for ext in _load().extensions}
    for name, (_symbol, hidden) in symbols.items():
        ext = loaded[name]
        if hidden is None:
            assert ext.status is ExtensionStatus.LOADED, ext.error
            continue
        assert ext.status is ExtensionStatus.FAILED and ext.error is not None, name
        assert f"would shadow {hidden} in every block" in ext.error.message, ext.error.message


def test_build_metadata_and_future_annotations_in_entry_files(install: Installer) -> None:
    install(_user_dir(), "metadata_probe")
    ext = _load().extensions[0]
    # the host reads the declaration the registration worker reported; it loads no module
    assert ext.enabled and ext.candidate is not None
    assert ext.candidate.module_name not in sys.modules
    # the workers load entry files with execute_entry: build globals, string annotations
    _declaration, module = execute_entry(ext.candidate, build=build_metadata())
    try:
        assert module.SEEN == build_metadata()
        assert module.ANNOTATIONS == {"x": "NotDefinedAnywhere", "return": "int"}
    finally:
        forget_module(ext.candidate.module_name)


def test_project_extensions_load_only_when_trusted(workspace: Path, install: Installer) -> None:
    install(workspace / ".vis" / "extensions", "steering_mode")
    assert _load(project_root=workspace, trusted=False).extensions == ()
    ext = _load(project_root=workspace, trusted=True).extensions[0]
    assert ext.source is ExtensionSource.PROJECT and ext.tag == "project"


def test_project_extension_overrides_the_global_one_with_the_same_name(
    workspace: Path, install: Installer
) -> None:
    install(_user_dir(), "steering_mode")
    install(workspace / ".vis" / "extensions", "steering_mode")
    loaded = _load(project_root=workspace, trusted=True)
    user, project = loaded.extensions
    assert user.status is ExtensionStatus.OVERRIDDEN and user.tag == "global"
    assert user.overridden_by == workspace / ".vis" / "extensions" / "steering_mode.py"
    # the override's setting ids do not conflict with the extension it replaces
    assert project.enabled and loaded.get("steering-mode") is project
    rows = describe(loaded)
    assert [(r.name, r.source, r.status) for r in rows] == [
        ("steering-mode", "user", "overridden"),
        ("steering-mode", "project", "loaded"),
    ]
    assert rows[0].error is not None and rows[0].error.startswith("overridden by ")


def test_same_name_in_the_same_source_fails_the_later_one(install: Installer) -> None:
    folder = _user_dir()
    install(folder, "steering_mode")
    (folder / "zz_copy.py").write_text((folder / "steering_mode.py").read_text())
    first, second = _load().extensions
    assert first.enabled
    assert second.error is not None
    assert "extension name 'steering-mode' is already used by" in second.error.message


def test_bundled_folder_and_skipped_entries(tmp_path: Path, install: Installer) -> None:
    bundled = install(tmp_path / "bundled", "steering_mode")
    (bundled / "__init__.py").write_text("")
    (bundled / "_private.py").write_text("raise SystemExit('must not run')")
    (bundled / "notes.txt").write_text("not an extension")
    (bundled / "empty_folder").mkdir()
    loaded = _load(bundled=bundled)
    assert [(e.name, e.source) for e in loaded.extensions] == [
        ("steering-mode", ExtensionSource.BUNDLED)
    ]


def test_folder_extension_with_relative_import_is_one_entry(install: Installer) -> None:
    install(_user_dir(), "greeter")
    ext = _load().extensions[0]
    assert ext.error is None, ext.error
    assert ext.name == "greeter" and ext.alias == "greet"
    assert [t.name for t in ext.tools] == ["greet.hello"]


def test_disabled_extensions_do_not_take_part(install: Installer) -> None:
    install(_user_dir(), "steering_mode")
    ext = _load(disabled=["steering-mode"]).extensions[0]
    assert ext.status is ExtensionStatus.DISABLED and not ext.enabled


def test_reload_reads_fresh_modules(tmp_path: Path, install: Installer) -> None:
    folder = install(_user_dir(), "steering_mode")
    loaded = _load()
    assert loaded.extensions[0].settings[0].default == "vibe"
    (folder / "steering_mode.py").write_text(
        (folder / "steering_mode.py")
        .read_text()
        .replace('"vibe", "control"', '"vibe", "strict"')
        .replace('default="vibe"', 'default="strict"')
    )
    again = loaded.reload()
    fresh = again.extensions[0]
    assert fresh.candidate is not None  # re-read in the worker
    assert fresh.candidate.module_name not in sys.modules
    assert fresh.settings[0].default == "strict"


def test_package_entry_points_are_discovered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site"
    pkg = site / "vis_fixture_pkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "ext.py").write_text(
        textwrap.dedent("""
        import vis_core.extension as vis
        vis.register_extension(vis.Extension(name="pkg-ext", description="From a package."))
    """)
    )
    dist = site / "vis_fixture_pkg-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: vis-fixture-pkg\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[vis.extensions]\npkg = vis_fixture_pkg.ext\n")
    monkeypatch.syspath_prepend(str(site))
    loaded = load_extensions(bundled=None, include_packages=True)
    ours = [e for e in loaded.extensions if e.source is ExtensionSource.PACKAGE]
    assert [(e.name, e.path) for e in ours] == [("pkg-ext", pkg / "ext.py")]


def test_reports_example_tool_reads_its_setting(install: Installer, tmp_path: Path) -> None:
    install(_user_dir(), "reports")
    ext = _load().extensions[0]
    assert ext.error is None, ext.error
    (tool,) = ext.tools
    assert (tool.name, tool.owner, tool.tag) == ("report", "reports", "observation")
    assert tool.activity is not None and tool.activity.label == "Prepare report"
    assert tool.description == "Prepare a report with the selected level of detail."
    assert tool.spec is not None and tool.spec.signature == "() -> str"
    with pytest.raises(RuntimeError, match="runs only in the extension's worker process"):
        tool.fn()  # the host holds no function of the extension
    assert ext.candidate is not None
    declaration, _module = execute_entry(ext.candidate, build=build_metadata())  # as a worker
    try:
        (entry,) = declaration.symbols[0].entries
        assert entry.fn() == "Summary"
        details = _Settings(OUTSIDE)  # a runtime whose every boolean setting is on
        with calling(CallContext("s1", tmp_path, tmp_path, owner="reports", runtime=details)):
            assert entry.fn() == "Detailed report"
    finally:
        forget_module(ext.candidate.module_name)


class _Settings(RuntimeOverride):
    def setting_value(self, setting_id: str, default: object) -> object:
        return True


def test_the_host_records_registry_never_holds_an_extension_class(install: Installer) -> None:
    from vis_core.records import registry

    install(_user_dir(), "greeter")
    entry = _user_dir() / "greeter" / "__init__.py"
    entry.write_text(
        entry.read_text()
        + "\nfrom dataclasses import dataclass\n\n\n@dataclass(frozen=True)\n"
        + "class Greeting:\n    text: str\n"
    )
    loaded = _load()
    assert loaded.extensions[0].error is None, loaded.extensions[0].error
    # records are made and rebuilt in the session worker, which loads the classes there
    assert registry.lookup("greeter", "Greeting") is None
    again = loaded.reload()
    assert again.extensions[0].error is None
    assert registry.lookup("greeter", "Greeting") is None


def test_declared_entry_points_are_kept_until_a_sys_path_folder_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vis_core.installed import entry_points

    def declared_entry_points(cache: Path) -> list[tuple[str, str, str | None]]:
        return entry_points("vis.extensions", cache)

    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.syspath_prepend(str(site))
    cache = tmp_path / "cache" / "entry-points.json"

    def install(name: str) -> None:
        dist = site / f"{name}-1.0.dist-info"
        dist.mkdir()
        (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
        (dist / "entry_points.txt").write_text(f"[vis.extensions]\n{name} = {name}.ext\n")

    install("first_pkg")
    assert ("first_pkg", "first_pkg.ext", "first_pkg") in declared_entry_points(cache)
    first = declared_entry_points(cache)
    with monkeypatch.context() as patched:  # unchanged folders: answered from the file
        patched.setattr(importlib.metadata, "entry_points", _no_scan)
        assert declared_entry_points(cache) == first
    install("second_pkg")  # a new distribution changes its folder
    names = [name for name, _, _ in declared_entry_points(cache)]
    assert "first_pkg" in names and "second_pkg" in names
    cache.write_text("{damaged")
    assert "second_pkg" in [name for name, _, _ in declared_entry_points(cache)]


def _no_scan(**_: object) -> None:
    raise AssertionError("the installed distributions were read again")
