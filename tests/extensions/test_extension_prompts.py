"""Extension prompts and ctx in a model request: text or callable, activation, failures skipped."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from vis_core.extension.declarations import callback_env
from vis_core.extension_host.loaded import LoadedExtensions
from vis_core.extension_host.loader import load_extensions
from vis_core.extension_host.prompts import active_among, extension_prompts
from vis_core.extension_host.session_context import collect_context
from vis_core.extension_host.worker_client import SessionWorker, WorkerPlace
from vis_core.paths import VisPaths

Installer = Callable[..., Path]
Worker = Callable[[LoadedExtensions], SessionWorker]


def _env(workspace: Path, channel: str = "tui") -> dict[str, object]:
    return callback_env(
        workspace_root=workspace, project_root=workspace, session_id="s1", channel=channel
    )


def _load():
    return load_extensions(bundled=None, include_packages=False)


@pytest.fixture(name="worker")
def worker_fixture(workspace: Path) -> Iterator[Worker]:
    """``worker(loaded)``: a session worker of ``loaded``, where the callbacks run."""
    started: list[SessionWorker] = []

    def make(loaded: LoadedExtensions) -> SessionWorker:
        worker = SessionWorker(lambda: loaded, WorkerPlace("s1", workspace, workspace), {})
        started.append(worker)
        return worker

    yield make
    for worker in started:
        worker.stop()


async def test_text_and_callable_prompts_follow_activation(
    workspace: Path, install: Installer, worker: Worker
) -> None:
    install(VisPaths.from_env().extensions_dir, "metadata_probe", "steering_mode")
    loaded = _load()
    ours = worker(loaded)
    text = await extension_prompts(loaded, _env(workspace), worker=ours)
    assert text == (
        "### probe\nBuild metadata probe.\nProbe prompt.\n\n"
        "### steering-mode\nChoose how closely the agent follows instructions.\n"
        f"Steering mode is vibe in {workspace}."
    )
    hidden = await extension_prompts(loaded, _env(workspace, channel="hidden"), worker=ours)
    assert "probe" not in hidden and "### steering-mode" in hidden
    active = await active_among(loaded.enabled, _env(workspace, "hidden"), ours)
    assert [e.name for e in active] == ["steering-mode"]


async def test_failing_prompt_and_activation_are_logged_and_skipped(
    workspace: Path, caplog: pytest.LogCaptureFixture, worker: Worker
) -> None:
    folder = VisPaths.from_env().extensions_dir
    folder.mkdir(parents=True)
    (folder / "bad_prompt.py").write_text(
        "import vis_core.extension as vis\n"
        "def _prompt(env):\n    raise RuntimeError('prompt broke')\n"
        "vis.register_extension(vis.Extension(name='bad-prompt', description='Bad prompt.',"
        " prompt=_prompt))\n"
    )
    (folder / "bad_activation.py").write_text(
        "import vis_core.extension as vis\n"
        "vis.register_extension(vis.Extension(name='bad-activation', description='Hidden.',"
        " prompt='never', activation=lambda env: 1 / 0))\n"
    )
    with caplog.at_level(logging.WARNING):
        loaded = _load()
        text = await extension_prompts(loaded, _env(workspace), worker=worker(loaded))
    assert text == "### bad-prompt\nBad prompt."
    assert "prompt callback of extension 'bad-prompt' failed" in caplog.text
    assert "activation of extension 'bad-activation' failed" in caplog.text


async def test_ctx_is_merged_with_reserved_keys_dropped(
    workspace: Path, install: Installer, worker: Worker
) -> None:
    install(VisPaths.from_env().extensions_dir, "metadata_probe")
    folder = VisPaths.from_env().extensions_dir
    (folder / "more_ctx.py").write_text(
        "import vis_core.extension as vis\n"
        "vis.register_extension(vis.Extension(name='more', description='More ctx.',"
        " ctx=lambda env: {'probe': {'more': env['session_id']}, 'session_env': {'m': 2}}))\n"
    )
    (folder / "not_dict.py").write_text(
        "import vis_core.extension as vis\n"
        "vis.register_extension(vis.Extension(name='not-dict', description='Bad ctx.',"
        " ctx=lambda env: ['x']))\n"
    )
    loaded = _load()
    ours = worker(loaded)
    merged = await collect_context(loaded, _env(workspace), worker=ours)
    assert merged == {"probe": {"seen": True, "more": "s1"}, "env": {"probe": 1, "m": 2}}
    assert await collect_context(loaded, _env(workspace, "hidden"), worker=ours) == {
        "probe": {"more": "s1"},
        "env": {"m": 2},
    }
