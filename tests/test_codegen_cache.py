"""The code dataclasses generate for Vis's classes is kept between runs and behaves the same."""

from __future__ import annotations

import json
import marshal
import os
import subprocess
import sys
import textwrap
from pathlib import Path

CHILD = textwrap.dedent(
    """
    import dataclasses, json, sys, types
    from pathlib import Path

    compiled = []

    def hook(event, args):
        if event == "compile" and isinstance(args[0], (str, bytes)) and b"__create_fn__" in (
            args[0] if isinstance(args[0], bytes) else args[0].encode()
        ):
            compiled.append(1)

    sys.addaudithook(hook)
    from vis_core import codegen_cache

    path = Path(sys.argv[1]) if len(sys.argv) > 1 else None
    installed = codegen_cache.install(path)
    again = codegen_cache.install(path)

    SOURCE = '''
    from __future__ import annotations
    import dataclasses

    @dataclasses.dataclass(frozen=True)
    class Point:
        x: int
        y: int = 2
        tags: tuple = dataclasses.field(default_factory=tuple)

        def __post_init__(self):
            if self.x < 0:
                raise ValueError("x")
    '''

    def define(name):
        module = types.ModuleType(name)
        sys.modules[name] = module
        exec(SOURCE, module.__dict__)
        return module.Point

    ours = compiled.copy()
    Point = define("vis_core.example_points")
    ours = len(compiled)
    Other = define("someone_else.points")
    others = len(compiled) - ours
    p = Point(1)
    try:
        p.x = 5
        frozen = False
    except dataclasses.FrozenInstanceError:
        frozen = True
    try:
        Point(-1)
        checked = False
    except ValueError:
        checked = True
    print(json.dumps({
        "installed": installed,
        "again": again,
        "compiled_ours": ours,
        "compiled_others": others,
        "repr": repr(p),
        "eq": p == Point(1, 2, ()) and p != Point(1, 3),
        "hash": hash(p) == hash(Point(1)),
        "replace": dataclasses.replace(p, y=7) == Point(1, 7),
        "fields": [f.name for f in dataclasses.fields(Point)],
        "frozen": frozen,
        "post_init": checked,
        "same_as_stdlib": repr(Other(1)).replace("Point", "") == repr(p).replace("Point", ""),
    }))
    """
)


def run(cache: Path | None = None, env: dict[str, str] | None = None) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, *([] if cache is None else [str(cache)])],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    return json.loads(out.stdout)


def expected_behaviour(result: dict) -> None:
    assert result["repr"] == "Point(x=1, y=2, tags=())"
    assert result["eq"] and result["hash"] and result["replace"]
    assert result["fields"] == ["x", "y", "tags"]
    assert result["frozen"] and result["post_init"] and result["same_as_stdlib"]


def test_the_second_run_uses_the_kept_code_and_classes_behave_the_same(tmp_path: Path) -> None:
    cache = tmp_path / "cache" / "code.marshal"
    first = run(cache)
    assert first["installed"] and not first["again"]
    assert first["compiled_ours"] > 0 and first["compiled_others"] > 0
    expected_behaviour(first)
    assert cache.is_file() and cache.stat().st_mode & 0o777 == 0o600
    assert cache.parent.stat().st_mode & 0o777 == 0o700

    second = run(cache)
    assert second["compiled_ours"] == 0  # every method came from the kept code
    assert second["compiled_others"] == first["compiled_others"]  # other packages: untouched
    expected_behaviour(second)


def test_a_damaged_cache_is_ignored_and_written_anew(tmp_path: Path) -> None:
    cache = tmp_path / "code.marshal"
    cache.write_bytes(b"\x00not marshal at all")
    result = run(cache)
    assert result["compiled_ours"] > 0
    expected_behaviour(result)
    assert run(cache)["compiled_ours"] == 0


def test_a_cache_that_cannot_be_written_only_costs_the_compiles(tmp_path: Path) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("")
    cache = blocked / "code.marshal"  # its folder is a file
    result = run(cache)
    expected_behaviour(result)
    assert run(cache)["compiled_ours"] > 0


def test_the_cache_is_written_to_vis_home_never_into_the_installed_package(
    tmp_path: Path,
) -> None:
    from vis_core import codegen_cache

    package = Path(codegen_cache.__file__).resolve().parent

    def kept_in_package() -> dict[Path, int]:
        return {p: p.stat().st_ino for p in package.rglob("dataclass-code.*")}

    before = kept_in_package()  # an older Vis may have left one there
    home = tmp_path / "home"
    result = run(env={**os.environ, "VIS_HOME": str(home)})  # the default place
    expected_behaviour(result)
    written = codegen_cache.cache_file({"VIS_HOME": str(home)})
    assert written.parent == home / "cache" and written.is_file()
    assert kept_in_package() == before  # nothing written into Vis's folders
    assert run(env={**os.environ, "VIS_HOME": str(home)})["compiled_ours"] == 0


def test_a_damaged_entry_is_compiled_again(tmp_path: Path) -> None:
    cache = tmp_path / "code.marshal"
    run(cache)
    fmt, version, entries = marshal.loads(cache.read_bytes())
    cache.write_bytes(marshal.dumps((fmt, version, {k: b"\x00damaged" for k in entries})))
    result = run(cache)
    assert result["compiled_ours"] > 0
    expected_behaviour(result)
    assert run(cache)["compiled_ours"] == 0  # written anew


async def test_extension_workers_define_vis_classes_from_the_kept_code(
    vis_home: Path, workspace: Path
) -> None:
    # the kept code of every __repr__ swapped for one that says where it came from: a worker
    # that compiled the generated text itself would print the fields instead
    from vis_core.codegen_cache import cache_file
    from vis_core.extension_host.loader import load_extensions
    from vis_core.extension_host.worker_client import SessionWorker, WorkerPlace
    from vis_core.ipc.trusted import decode_from_worker

    cache = cache_file()
    cache.unlink(missing_ok=True)  # it may be a link to the file the run's tests share
    keep = "from pathlib import Path; from vis_core import codegen_cache; import sys\n"
    keep += "codegen_cache.install(Path(sys.argv[1])); import vis_core.model.activity"
    subprocess.run([sys.executable, "-c", keep, str(cache)], check=True)
    form, version, entries = marshal.loads(cache.read_bytes())
    kept = "def __create_fn__():\n def __repr__(self):\n  return 'kept'\n return __repr__"
    code = marshal.dumps(compile(kept, "<string>", "exec", dont_inherit=True))
    entries = {text: code if "def __repr__" in text else v for text, v in entries.items()}
    cache.write_bytes(marshal.dumps((form, version, entries)))
    folder = vis_home / "extensions"
    folder.mkdir()
    (folder / "shown.py").write_text(
        textwrap.dedent(
            '''
            import vis_core.extension as vis

            def shown() -> str:
                """How a presentation prints."""
                return repr(vis.ActivityPresentation("a", "b"))

            vis.register_extension(vis.Extension(
                name="shown", alias="shown", description="Shown.", symbols=[vis.Symbol(shown)]
            ))
            '''
        )
    )
    loaded = load_extensions(bundled=None, include_packages=False)
    (tool,) = loaded.host_tools()
    worker = SessionWorker(lambda: loaded, WorkerPlace("s1", workspace, workspace), {})
    try:
        # a tool's answer comes packed for the sandbox (as a quick call passes it on)
        assert decode_from_worker(await worker.call(tool, (), {})) == "kept"
    finally:
        worker.stop()


PROBE = '''
import vis_core.extension as vis

def ping() -> str:
    """Answer pong."""
    return "pong"

vis.register_extension(vis.Extension(
    name="probe", alias="probe", description="Probe.", symbols=[vis.Symbol(ping)]
))
'''


async def test_the_workers_keep_the_classes_only_they_define(
    vis_home: Path, workspace: Path
) -> None:
    """A worker ends by ``os._exit`` or is killed, never through an exit handler: it saves
    what it compiled once it loaded its entry files, so the next worker finds the classes the
    ``vis`` command never defines kept: its own modules' (the session worker's ``_Tool``) and
    the bundled extensions' (git's ``FileDiff``)."""
    from vis_core.codegen_cache import cache_file
    from vis_core.extension_host import bundled_cache
    from vis_core.extension_host.loader import load_extensions
    from vis_core.extension_host.worker_client import SessionWorker, WorkerPlace

    def kept() -> list[str]:
        return list(marshal.loads(cache_file().read_bytes())[2])

    cache_file().unlink(missing_ok=True)  # it may be a link to the file the run's tests share
    bundled_cache.cache_file().unlink(missing_ok=True)  # so the registration worker loads them
    folder = vis_home / "extensions"
    folder.mkdir()
    (folder / "probe.py").write_text(PROBE)
    loaded = load_extensions(include_packages=False)
    assert any("patch:_type_patch" in text for text in kept())  # the registration worker's
    cache_file().unlink()
    tool = next(tool for tool in loaded.host_tools() if tool.owner == "probe")
    worker = SessionWorker(lambda: loaded, WorkerPlace("s1", workspace, workspace), {})
    try:
        await worker.call(tool, (), {})
    finally:
        worker.stop()
    texts = kept()  # the session worker's
    assert any("patch:_type_patch" in text for text in texts)
    assert any("plain:_type_plain" in text for text in texts)


RACE = textwrap.dedent(
    """
    import sys, threading, types
    from pathlib import Path
    from vis_core import codegen_cache

    codegen_cache.install(Path(sys.argv[1]))
    sys.setswitchinterval(1e-6)

    def define(n):
        module = sys.modules[f"vis_core.racing_{n}"] = types.ModuleType(f"vis_core.racing_{n}")
        exec(f"import dataclasses\\n@dataclasses.dataclass\\nclass C{n}:\\n    f{n}: int = {n}\\n",
             module.__dict__)

    for n in range(300):
        define(n)
    stop = threading.Event()

    def keep_defining():
        n = 300
        while not stop.is_set():
            define(n)
            n += 1

    threading.Thread(target=keep_defining, daemon=True).start()
    try:
        for _ in range(10):  # saving the live table failed in 40 runs of 40 and in 40 of 10
            codegen_cache._Cache.added = True
            codegen_cache.save()
    finally:
        stop.set()
    print("saved")
    """
)


def test_the_cache_is_saved_while_another_thread_defines_classes(tmp_path: Path) -> None:
    """At exit a thread may still be importing (a ``vis run`` refused for a bad setting while
    its metadata thread loads): saving iterated the live table and printed "dictionary changed
    size during iteration" under the person's error."""
    cache = tmp_path / "codes.marshal"
    out = subprocess.run(
        [sys.executable, "-c", RACE, str(cache)], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0 and out.stdout.strip() == "saved", out.stderr
    assert "Traceback" not in out.stderr
    assert len(marshal.loads(cache.read_bytes())[2]) >= 300
