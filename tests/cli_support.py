"""Running ``vis`` as a user does: a process of its own, no API keys, its own VIS_HOME."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml
from warm_servers import vis_command


def vis(
    *args: str,
    cwd: Path,
    env_home: Path | str,
    timeout: float = 120,
    text: bool = True,
    extra_env: dict[str, str] | None = None,
    cold: bool = False,
    **kw: Any,
) -> subprocess.CompletedProcess[Any]:
    """``vis ARGS`` in ``cwd`` with ``VIS_HOME=env_home`` (and ``extra_env``), without the
    caller's keys or model; its output captured (only stderr when ``stdout`` is given).
    Started warm (``warm_servers.vis_command``), or as a fresh ``python -m vis_core.cli``
    when ``cold``: for tests of the process itself (its start, its imports, its tree)."""
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(extra_env or {})
    env["VIS_HOME"] = str(env_home)
    seed_caches(Path(env_home))
    env.pop("VIS_MODEL", None)
    # given a ``stdout`` (a file, ``subprocess.DEVNULL``), only stderr is captured
    capture: dict[str, Any] = (
        {"stderr": subprocess.PIPE} if "stdout" in kw else {"capture_output": True}
    )
    command = [sys.executable, "-m", "vis_core.cli", *args] if cold else vis_command(*args, env=env)
    return subprocess.run(
        command,
        cwd=cwd,
        env=env,
        text=text,
        timeout=timeout,
        **capture,
        **kw,
    )


def seed_caches(home: Path) -> None:
    """A new ``home`` starts with this test's caches (``$VIS_HOME/cache``: the run's shared
    dataclass code, bundled declarations and installed distributions, tests/conftest.py), as
    the test's own home does; without them each fresh home's first start loads the bundled
    extensions in a registration worker. A home that has its cache folder keeps it; one that
    is not a folder yet is left for Vis to make."""
    mine = Path(os.environ.get("VIS_HOME", "")) / "cache"
    target = home / "cache"
    if home.is_dir() and mine.is_dir() and not os.path.lexists(target):
        shutil.copytree(mine, target)


def yaml_text(data: Any, **options: Any) -> str:
    """``data`` as YAML (``yaml.safe_dump``'s options), by libyaml's writer, ~30 times faster
    than Python's, which the tests ran for each script; Python's only for a lone surrogate,
    which libyaml cannot write (``\\uDC80`` in a double-quoted string)."""
    try:
        return yaml.dump(data, Dumper=yaml.CSafeDumper, **options)
    except UnicodeEncodeError:
        return yaml.safe_dump(data, **options)


def script(folder: Path, responses: list[dict[str, Any]]) -> Path:
    """A scripted-provider file in ``folder`` (a new name each call)."""
    path = folder / f"script-{len(list(folder.glob('script-*')))}.yaml"
    path.write_text(yaml_text(responses), encoding="utf-8")
    return path
