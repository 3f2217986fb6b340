"""The SDK's one runtime: which one serves a call, and that a worker's calls reach the host's
runtime through the same operations (forwarded as frames) as the host's own calls."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import vis_core.extension as vis
from vis_core.extension.context import CallContext, calling, serving_runtime
from vis_core.extension.runtime import (
    OPERATIONS,
    OUTSIDE,
    current_runtime,
    install,
    installed_runtime,
)
from vis_core.extension_host.store_runtime import StoreRuntime
from vis_core.extension_host.worker_sdk import WorkerRuntime, run_service
from vis_core.ipc.kinds import TargetKind
from vis_core.store import Store


class _ToHost:
    """A worker's channel reduced to its meaning: the frame runs in the host, in the context
    of the host's call the worker's tool serves (here: a call served by ``host``)."""

    def __init__(self, host_call: CallContext) -> None:
        self.host_call = host_call
        self.frames: list[str] = []

    def call(self, target: TargetKind, name: str, args: tuple, kwargs: dict) -> Any:
        assert target is TargetKind.SDK
        self.frames.append(name)
        with calling(self.host_call):  # the host passes the runtime its call carries
            return run_service(serving_runtime(), name, args, kwargs)


def _call(root: Path, runtime: Any, session_id: str | None = "s1") -> CallContext:
    return CallContext(session_id, root, root, owner="counter", runtime=runtime)


def _acting(root: Path, owner: str) -> calling:
    """A call of extension ``owner`` with no runtime of its own (outside Vis)."""
    return calling(CallContext(None, root, root, owner=owner))


def test_a_worker_and_the_host_share_state_through_one_interface(tmp_path: Path):
    store = Store(tmp_path / "vis.db")
    host = StoreRuntime(store)
    channel = _ToHost(_call(tmp_path, host))
    worker = WorkerRuntime(channel)
    with calling(_call(tmp_path, worker)):  # the tool, in its worker
        vis.state["n"] = 1
        vis.state.update({"m": [1, 2]})
        assert vis.state.to_dict() == {"m": [1, 2], "n": 1}
        del vis.state["m"]
    assert channel.frames[0] == "runtime:state_write"
    assert store.state_items("counter") == {"n": 1}  # the host's database holds it
    with calling(_call(tmp_path, host)):  # a callback of the same extension, in the host
        assert vis.state["n"] == 1 and "m" not in vis.state
        vis.state["n"] = 2
    with calling(_call(tmp_path, worker)):
        assert dict(vis.state) == {"n": 2}
    store.close()


def test_the_host_runs_only_runtime_operations_for_a_worker(tmp_path: Path):
    channel = _ToHost(_call(tmp_path, StoreRuntime(Store(tmp_path / "vis.db"))))
    with pytest.raises(LookupError, match="not an operation of the SDK runtime"):
        channel.call(TargetKind.SDK, "runtime:__init__", (), {})
    with pytest.raises(LookupError, match="not an operation"):
        channel.call(TargetKind.SDK, "runtime:store", (), {})
    assert {"state_read", "log", "notify", "ask", "open_live"} <= OPERATIONS


def test_the_call_s_runtime_wins_then_the_one_the_process_installed(tmp_path: Path):
    assert installed_runtime() is None and current_runtime() is OUTSIDE
    installed, own = (StoreRuntime(Store(tmp_path / f"{n}.db")) for n in ("a", "b"))
    assert install(installed) is None
    try:
        assert current_runtime() is installed  # no call
        with calling(_call(tmp_path, None, "s1")):
            assert current_runtime() is installed  # a call without its own runtime
        with calling(_call(tmp_path, own, "s1")):
            assert current_runtime() is own  # the call's own runtime
    finally:
        assert install(None) is installed
    assert current_runtime() is OUTSIDE


def test_outside_vis_state_lives_in_memory_per_extension(tmp_path: Path):
    with _acting(tmp_path, "a"):
        vis.state["k"] = 1
    with _acting(tmp_path, "b"):
        assert "k" not in vis.state
        vis.state["k"] = 2
    with _acting(tmp_path, "a"):
        assert vis.state["k"] == 1
        vis.state.clear()
    assert OUTSIDE.state_items("b") == {"k": 2}
    OUTSIDE.state_clear("b")


def test_outside_vis_a_document_for_the_model_is_refused_in_words():
    """'A PDF or HTML document is for the user only': asked for the model, the error says so
    (it read 'a application/pdf document …')."""
    with pytest.raises(ValueError) as refused:
        vis.attach(b"%PDF-1.4 x", "report.pdf", audience="model")
    assert str(refused.value) == "application/pdf is for the user only; use audience='user'"
    assert vis.attach(b"%PDF-1.4 x", "report.pdf")["audience"] == "user"


def test_the_sandbox_runtime_refuses_what_belongs_to_trusted_code(tmp_path: Path):
    from vis_core.sandbox.sdk_runtime import SandboxRuntime

    runtime = SandboxRuntime()
    previous = install(runtime)
    try:
        declared = vis.Extension(name="probe", description="Built in the sandbox.")
        with pytest.raises(RuntimeError, match="trusted extension code"):
            vis.register_extension(declared)
        with (
            _acting(tmp_path, "probe"),
            pytest.raises(RuntimeError, match="trusted extension code"),
        ):
            vis.state["k"] = 1
        with pytest.raises(PermissionError, match="trusted extension code"):
            vis.fs.write(tmp_path / "x.txt", "x")
        with pytest.raises(RuntimeError, match="trusted extension code"):
            runtime.call_tool("cat", (), {})  # refused by the runtime itself too
        # each refusal names the call made (not a call it makes on its way), and a form or
        # a live view is refused like the other host calls, not "undeliverable" or "open"
        refused = {
            "vis.ask": lambda: vis.ask("t", [vis.plaintext("a", "A")]),
            "vis.live": lambda: vis.live("t", [vis.status("s", "x")]),
            "vis.workspace_files()": vis.workspace_files,
            "vis.run()": lambda: vis.run("hello"),
        }
        for name, call in refused.items():
            with pytest.raises(RuntimeError) as caught:
                call()
            assert str(caught.value).startswith(f"{name} belongs to trusted extension code")
        assert not (tmp_path / "x.txt").exists()
    finally:
        install(previous)
    with _acting(tmp_path, "probe"):  # trusted again: the outside-Vis runtime keeps it in memory
        vis.state["k"] = 1
        assert vis.state["k"] == 1
        vis.state.clear()


def test_vis_git_runs_git_immune_to_the_repository_configuration(tmp_path: Path):
    import subprocess

    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    marker = tmp_path / "pwned"
    subprocess.run(
        ["git", "-C", str(repo), "config", "core.fsmonitor", f"touch {marker}; false"], check=True
    )
    (repo / "a.txt").write_text("a", encoding="utf-8")
    done = vis.git("status", "--porcelain", cwd=repo)
    assert done.returncode == 0 and b"?? a.txt" in done.stdout
    assert not marker.exists()  # the repository's fsmonitor program never ran
    with pytest.raises(TypeError, match="as text"):
        vis.git("status", 3)  # type: ignore[arg-type]


def test_full_outputs_are_saved_by_the_runtime_of_the_call(tmp_path: Path, vis_home: Path):
    outside = vis.save_full_output("all of it\n", "build log")
    assert outside.is_relative_to(vis_home) and outside.parent.name == "extensions"
    assert outside.name.startswith("build-log-") and outside.read_text() == "all of it\n"
    store = Store(tmp_path / "vis.db")
    with calling(_call(tmp_path, StoreRuntime(store), "s9")):  # the session's folder
        text = vis.fit_output("".join(f"{i}\n" for i in range(2500)), keep="tail", label="x")
    assert text.startswith("[Output truncated: showing the last 2,000 of 2,500 lines")
    saved = Path(text.split("Full output saved to: ")[1].split("]")[0])
    assert saved.parent.name == "s9" and saved.read_text().count("\n") == 2500
    store.close()
