"""Vis's Python children run isolated from the working folder: a never-trusted checkout's
``uuid.py``, ``json.py``, ``typing.py``, ``site*.py`` or ``vis_core/`` never runs in them."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from cli_support import script

from vis_core.model.channel import Channel

# Each planted module writes a marker (its name, the importing process's command line) into
# the workspace's ``markers/`` (writable inside the jail too), then stays an empty module.
MARKER = """\
import os as _os
_os.makedirs({markers!r}, exist_ok=True)
with open(_os.path.join({markers!r}, __name__ + "-" + str(_os.getpid())), "wb") as _f:
    with open("/proc/self/cmdline", "rb") as _c:
        _f.write(_c.read().replace(b"\\0", b" "))
"""
PLANTED = ("uuid", "json", "typing", "site", "sitecustomize", "usercustomize")

# A user extension; loading it leaves ``loaded-PID`` (the loading process's command line) beside it.
EXTENSION = """\
import os
import vis_core.extension as vis

with open(os.path.join(os.path.dirname(__file__), f"loaded-{os.getpid()}"), "wb") as f:
    with open("/proc/self/cmdline", "rb") as c:
        f.write(c.read().replace(b"\\0", b" "))

def forecast(city: str) -> str:
    \"\"\"Tomorrow's weather in a city.\"\"\"
    return f"Sunny in {city}"

vis.register_extension(vis.Extension(
    name="weather", description="Weather.", alias="weather", symbols=[vis.Symbol(forecast)]))
"""

# The command lines of Vis's children that load an extension (the sandbox child runs blocks).
KINDS = {
    "registration worker": "vis_core.extension_host.worker_start:load_only",
    "session worker": "vis_core.extension_host.worker_start:main",
}


def plant(workspace: Path) -> Path:
    """The shadowing modules at the top of ``workspace``; returns the markers folder."""
    markers = workspace / "markers"
    for name in PLANTED:
        (workspace / f"{name}.py").write_text(MARKER.format(markers=str(markers)))
    (workspace / "vis_core").mkdir()
    (workspace / "vis_core" / "__init__.py").write_text(MARKER.format(markers=str(markers)))
    return markers


def planted_by_block(markers: Path) -> str:
    """A block that writes the same modules into its workspace (cwd)."""
    return textwrap.dedent(
        f"""
        import os
        source = {MARKER.format(markers=str(markers))!r}
        for name in {PLANTED!r}:
            with open(name + ".py", "w") as f:
                f.write(source)
        os.makedirs("vis_core", exist_ok=True)
        with open("vis_core/__init__.py", "w") as f:
            f.write(source)
        print("planted")
        """
    )


def found(markers: Path) -> dict[str, str]:
    """Every marker: the module's file name and the command line that imported it."""
    if not markers.is_dir():
        return {}
    return {p.name: p.read_text(errors="replace") for p in sorted(markers.iterdir())}


def vis(*args: str, cwd: Path, home: Path) -> subprocess.CompletedProcess[str]:
    """``vis ARGS`` as the console script starts it: its own folder on ``sys.path``, not the
    working folder (``-P``), so only the children Vis starts can meet the planted modules."""
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["VIS_HOME"] = str(home)
    env.pop("VIS_MODEL", None)
    return subprocess.run(
        [sys.executable, "-P", "-m", "vis_core.cli", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )


def run(workspace: Path, home: Path, responses: list[dict]) -> str:
    """``vis run --json`` of a scripted turn: its events, one JSON object a line."""
    path = script(home.parent, responses)
    done = vis(
        "run",
        "--json",
        "--provider",
        "scripted",
        "--script",
        str(path),
        "go",
        cwd=workspace,
        home=home,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_a_checkout_module_never_runs_in_a_vis_child(workspace: Path, vis_home: Path) -> None:
    """One turn starts each child: the registration worker and the session worker load the
    extension, and the block runs in the sandbox child and calls the extension's tool."""
    markers = plant(workspace)
    (vis_home / "extensions").mkdir()
    (vis_home / "extensions" / "weather.py").write_text(EXTENSION)
    code = "print('ran', 6 * 7)\nprint(await weather.forecast('Oslo'))"
    out = run(workspace, vis_home, [{"code": code}, {"text": "done"}])
    planted = found(markers)
    assert not planted, planted
    # each child really started and did its work
    loaded = [p.read_text() for p in (vis_home / "extensions").glob("loaded-*")]
    assert any(KINDS["registration worker"] in line for line in loaded), loaded
    assert any(KINDS["session worker"] in line for line in loaded), loaded
    assert "ran 42" in out and "Sunny in Oslo" in out, out


def test_vis_doctor_runs_no_checkout_module(workspace: Path, vis_home: Path) -> None:
    markers = plant(workspace)
    (vis_home / "extensions").mkdir()
    (vis_home / "extensions" / "weather.py").write_text(EXTENSION)
    done = vis("doctor", cwd=workspace, home=vis_home)
    assert "weather" in done.stdout and "Traceback" not in done.stderr, done.stdout + done.stderr
    assert not found(markers)


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="the jail needs bubblewrap")
def test_modules_a_jailed_block_writes_do_not_run_at_the_next_start(
    workspace: Path, vis_home: Path
) -> None:
    markers = workspace / "markers"
    (vis_home / "config.toml").write_text("jail = true\n")
    (vis_home / "extensions").mkdir()
    (vis_home / "extensions" / "weather.py").write_text(EXTENSION)
    out = run(workspace, vis_home, [{"code": planted_by_block(markers)}, {"text": "done"}])
    assert "planted" in out and (workspace / "json.py").is_file(), out
    again = [
        {"code": "import json, uuid, typing\nprint(await weather.forecast('Oslo'))"},
        {"text": "done"},
    ]
    assert "Sunny in Oslo" in run(workspace, vis_home, again)
    done = vis("doctor", cwd=workspace, home=vis_home)
    assert "weather" in done.stdout, done.stdout + done.stderr
    assert not found(markers)


def test_the_models_blocks_still_import_the_workspace_s_own_modules(
    workspace: Path, vis_home: Path
) -> None:
    (workspace / "shapes.py").write_text("def area(w, h):\n    return w * h\n")
    out = run(
        workspace, vis_home, [{"code": "import shapes\nprint(shapes.area(6, 7))"}, {"text": "ok"}]
    )
    assert "42" in out


def test_a_trusted_projects_python_variables_reach_its_commands_not_vis_children(
    workspace: Path, vis_home: Path
) -> None:
    """``PYTHONPATH`` and friends in a project's ``environment:`` stay for what the model and
    extensions start, but Vis's own interpreters ignore them (``-I``)."""
    markers = workspace / "markers"
    lib = workspace / "lib"
    lib.mkdir()
    for name in ("sitecustomize", "json", "typing"):
        (lib / f"{name}.py").write_text(MARKER.format(markers=str(markers)))
    (workspace / "startup.py").write_text(MARKER.format(markers=str(markers)))
    (workspace / "vis.yml").write_text(
        "environment:\n"
        f"  PYTHONPATH: {lib}\n"
        f"  PYTHONSTARTUP: {workspace / 'startup.py'}\n"
        "  PYTHONINSPECT: '1'\n"
        "  PYTHONWARNINGS: error\n"
    )
    (vis_home / "extensions").mkdir()
    (vis_home / "extensions" / "weather.py").write_text(EXTENSION)
    assert vis("trust", str(workspace), cwd=workspace, home=vis_home).returncode == 0
    code = "import os\nprint(await weather.forecast('Oslo'), os.environ['PYTHONPATH'])"
    out = run(workspace, vis_home, [{"code": code}, {"text": "done"}])
    assert not found(markers)
    assert f"Sunny in Oslo {lib}" in out, out  # the block's own commands still get it


def test_the_welcome_probe_runs_no_checkout_module(workspace: Path) -> None:
    """`vis`'s welcome probe starts in the workspace (a never-trusted checkout) as the app
    opens: its planted ``json.py``, ``typing.py`` or ``vis_core/`` never run in it."""
    from vis_core import welcome_probe

    markers = plant(workspace)
    probe = welcome_probe.start(
        workspace, provider=None, model=None, toggles=(), channel=Channel.TUI
    )
    assert probe is not None
    facts = welcome_probe.read(probe)
    assert facts is not None and not facts.trusted  # it answered, as Vis's own code
    assert not markers.exists() or list(markers.iterdir()) == []
