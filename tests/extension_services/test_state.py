"""``vis.state``: per-extension, plain data, surviving ``/reload`` and a new process."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import vis_core.extension as vis
from vis_core.paths import TrustStore, VisPaths

COUNTER = """
import vis_core.extension as vis

def count(ctx):
    vis.state["n"] = vis.state.get("n", 0) + 1
    data = {"items": dict(vis.state.items()), "len": len(vis.state)}
    return vis.ok(str(vis.state["n"]), data=data)

def store_object(ctx):
    vis.state["bad"] = object()

def forget(ctx):
    vis.state["n"] = None
    return vis.ok(str("n" in vis.state))

def loaded_with(ctx):
    return vis.ok(str(LOADED_WITH))

vis.register_extension(vis.Extension(
    name="counter",
    description="Counts.",
    slash_commands=[
        vis.SlashCommand("count", count),
        vis.SlashCommand("store-object", store_object),
        vis.SlashCommand("forget", forget),
        vis.SlashCommand("loaded-with", loaded_with),
    ],
))
LOADED_WITH = vis.state.get("n", 0)  # readable while the entry file loads, once registered
"""

OTHER = """
import vis_core.extension as vis

def peek(ctx):
    return vis.ok(repr(vis.state.get("n")))

vis.register_extension(vis.Extension(
    name="other", description="Never shares state.",
    slash_commands=[vis.SlashCommand("peek", peek)],
))
"""

NEW_PROCESS = textwrap.dedent("""
    import asyncio, sys
    from pathlib import Path
    from vis_core.host import Host, HostOptions

    async def main():
        host = await Host.open(HostOptions(workspace=Path(sys.argv[1]), provider="scripted"))
        try:
            session = await host.new_session()
            print((await host.commands.run(session, "/count")).title)
        finally:
            await host.close()

    asyncio.run(main())
""")


async def test_state_survives_reload_and_a_new_process(
    extension, scripted, workspace: Path, vis_home: Path
):
    extension("counter", COUNTER)
    extension("other", OTHER)
    run = await scripted([])
    session = await run.session()
    assert (await run.host.commands.run(session, "/count")).title == "1"
    assert (await run.host.commands.run(session, "/count")).title == "2"
    assert (await run.host.commands.run(session, "/peek")).title == "None"
    reloaded = await run.host.commands.run(session, "/reload")
    assert reloaded.ok
    # the entry file read its state while loading (in the worker that runs the command)
    assert (await run.host.commands.run(session, "/loaded-with")).title == "2"
    third = await run.host.commands.run(session, "/count")
    assert third.title == "3" and third.data == {"items": {"n": 3}, "len": 1}

    env = {**os.environ, "VIS_HOME": str(vis_home)}
    done = subprocess.run(
        [sys.executable, "-c", NEW_PROCESS, str(workspace)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "4"
    assert run.state("counter") == {"n": 4}

    refused = await run.host.commands.run(session, "/store-object")
    assert not refused.ok and "plain data" in refused.body
    # what the extension stored, not the proxy Vis made of it in another process
    assert "the state value 'bad' of extension 'counter' holds an object" in refused.body
    assert "RemoteObject" not in refused.body
    assert (await run.host.commands.run(session, "/forget")).title == "False"
    assert run.state("counter") == {}


async def test_project_override_shares_state(extension, scripted, workspace: Path):
    extension("counter", COUNTER)
    project_ext = workspace / ".vis" / "extensions"
    project_ext.mkdir(parents=True)
    (project_ext / "counter.py").write_text(
        COUNTER.replace('description="Counts."', 'description="Project counter."')
    )
    first = await scripted([])
    assert first.host.catalog.loaded.get("counter").declaration.description == "Counts."
    assert (await first.host.commands.run(await first.session(), "/count")).title == "1"
    TrustStore(VisPaths.from_env()).trust(workspace)
    second = await scripted([])
    counter = second.host.catalog.loaded.get("counter")
    assert counter.declaration.description == "Project counter."
    assert (await second.host.commands.run(await second.session(), "/count")).title == "2"


def test_state_is_a_mutable_mapping_outside_vis():
    vis.state.clear()
    vis.state.update({"repo": "acme/widgets", "count": 0})
    assert "repo" in vis.state and len(vis.state) == 2
    assert vis.state.setdefault("count", 5) == 0
    assert vis.state.pop("count") == 0
    vis.state["repo"] = None  # None deletes
    assert dict(vis.state) == {}
    with pytest.raises(KeyError):
        del vis.state["missing"]
    with pytest.raises(ValueError, match="plain data"):
        vis.state["x"] = {1, 2}
    with pytest.raises(TypeError, match="keys must be strings"):
        vis.state[1] = "x"  # type: ignore[index]


async def test_state_before_registering_fails_the_load(extension, vis_home: Path):
    extension(
        "early",
        """
        import vis_core.extension as vis
        vis.state["x"] = 1
        vis.register_extension(vis.Extension(name="early", description="Too early."))
    """,
    )
    from vis_core.extension_host.loader import load_extensions

    loaded = load_extensions(paths=VisPaths.from_env(), bundled=None, include_packages=False)
    (error,) = loaded.errors
    assert error.line == 2 and "use it after vis.register_extension" in error.message
