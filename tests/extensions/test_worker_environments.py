"""Each extension's environment: its declared ``env`` plus the project's values, never another
extension's declared values. Extensions that resolve the same declared values share one worker
process per session; one with other values gets its own."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
import yaml
from processes import alive

from vis_core.events import BlockFinished, Event
from vis_core.host import Host, HostOptions
from vis_core.paths import TrustStore, VisPaths

NAMES = ("ALPHA_TOKEN", "BETA_TOKEN", "PROJECT_NAME", "OPENAI_API_KEY")

EXTENSION = '''
import os

import vis_core.extension as vis

NAMES = {names!r}


def seen() -> dict:
    return {{"pid": os.getpid(), "env": {{n: os.environ[n] for n in NAMES if n in os.environ}}}}


def {name}_env() -> dict:
    """What this extension's worker sees of the environment."""
    return seen()


vis.register_extension(vis.Extension(
    name="{name}",
    alias="{name}",
    description="Reports its environment.",
    env={env!r},
    ctx=lambda env: {{"{name}_ctx": sorted(seen()["env"])}},
    symbols=[vis.Symbol({name}_env)],
))
'''

# alpha and beta declare names the environment that started Vis defines; gamma and delta
# declare none; epsilon declares a name the project itself defines (everyone sees it anyway)
DECLARED = {
    "alpha": ["ALPHA_TOKEN"],
    "beta": ["BETA_TOKEN"],
    "gamma": [],
    "delta": [],
    "epsilon": ["PROJECT_NAME"],
}

BLOCK = (
    "import json\n"
    + "seen = {"
    + ", ".join(f"{name!r}: dict(await {name}_env())" for name in DECLARED)
    + "}\n"
    + "ctx = {"
    + ", ".join(f"{name!r}: session[{name + '_ctx'!r}]" for name in DECLARED)
    + "}\n"
    + 'print(json.dumps({"seen": seen, "ctx": ctx}))\n'
)


def _install() -> None:
    folder = Path(os.environ["VIS_HOME"]) / "extensions"
    folder.mkdir(parents=True, exist_ok=True)
    for name, env in DECLARED.items():
        text = EXTENSION.format(names=NAMES, name=name, env=env)
        (folder / f"{name}.py").write_text(text, encoding="utf-8")


async def _seen(session: Any) -> dict[str, Any]:
    events: list[Event] = []
    session.subscribe(events.append)
    await session.submit("go")
    (block,) = [e for e in events if isinstance(e, BlockFinished)]
    assert block.error is None, block.error
    return json.loads(block.stdout.strip().splitlines()[-1])


def _check(printed: dict[str, Any]) -> dict[str, int]:
    """Each sees its own declared value and the project's, nothing else; the pid of each."""
    seen, ctx = printed["seen"], printed["ctx"]
    project = {"PROJECT_NAME": "acme"}
    assert seen["alpha"]["env"] == {"ALPHA_TOKEN": "alpha-value", **project}
    assert seen["beta"]["env"] == {"BETA_TOKEN": "beta-value", **project}
    for name in ("gamma", "delta", "epsilon"):
        assert seen[name]["env"] == project, name
    # its callbacks (here ctx) run in the same worker as its tools
    assert ctx == {name: sorted(seen[name]["env"]) for name in DECLARED}
    pids = {name: seen[name]["pid"] for name in DECLARED}
    assert pids["gamma"] == pids["delta"] == pids["epsilon"]  # the same values: one worker
    assert len({pids["alpha"], pids["beta"], pids["gamma"]}) == 3  # other values: their own
    assert os.getpid() not in pids.values()
    return pids


async def test_an_extension_sees_only_its_own_declared_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ALPHA_TOKEN", "alpha-value")
    monkeypatch.setenv("BETA_TOKEN", "beta-value")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-host-only")  # no extension declares it
    _install()
    workspace = tmp_path / "work"
    workspace.mkdir()
    (workspace / "vis.yml").write_text("environment:\n  PROJECT_NAME: acme\n", encoding="utf-8")
    TrustStore(VisPaths.from_env()).trust(workspace)
    script = tmp_path / "script.yaml"
    turns = [{"code": BLOCK}, {"text": "done"}]
    script.write_text(yaml.safe_dump(turns * 3), encoding="utf-8")
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted", script=script))
    try:
        session = await host.new_session()
        first = _check(await _seen(session))
        assert all(alive(pid) for pid in first.values())

        await host.reload()  # /reload stops every worker of the session; the next calls start anew
        assert not any(alive(pid) for pid in first.values())
        again = _check(await _seen(session))
        assert not set(again.values()) & set(first.values())

        await session.close()  # closing the session stops all of its workers
        assert not any(alive(pid) for pid in again.values())
    finally:
        await host.close()
