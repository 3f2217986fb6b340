"""``vis.Provider``: a model provider an extension declares, streamed from its worker."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from cli_support import vis as run_vis

import vis_core.extension as vis
from vis_core.events import AssistantMessage, Event
from vis_core.host import Host, HostOptions
from vis_core.model.conversation import Message
from vis_core.model_choices import ModelSource, model_entries
from vis_core.providers.base import ModelChoice, ModelRequest, ProviderError

from .harness import install_extension, open_host, write_script

# A provider that runs a block on the first request and answers with its output after it.
ECHO = """
import vis_core.extension as vis

async def stream(request):
    last = request.messages[-1]
    if last.role == "user":
        yield vis.TextDelta("running. ")
        yield vis.ToolCallReady(vis.ToolCall("c1", "python_execution", {"code": "print(6 * 7)"}))
        yield vis.UsageUpdate(vis.Usage(input=100, output=5))
        yield vis.ResponseDone("tool_use")
        return
    yield vis.TextDelta("the block said " + last.text.strip().splitlines()[-1])
    yield vis.UsageUpdate(vis.Usage(input=120, output=4))
    yield vis.ResponseDone("end_turn")

def malformed(request):
    yield vis.TextDelta("partial ")
    yield {"text": "not an event"}

def raising(request):
    raise ConnectionError("upstream is down")
    yield

vis.register_extension(vis.Extension(
    name="echo-provider",
    description="Models that echo",
    providers=[
        vis.Provider("echo", [vis.ProviderModel("echo-1", input_limit=32_000, input_price=1.0)],
                     stream, description="an echo"),
        vis.Provider("malformed", ["m1"], malformed),
        vis.Provider("raising", ["r1"], raising),
    ],
))
"""

# A provider that waits for ever on "go" (it notes its cancel in the file the system names)
SLOW = """
import asyncio
from pathlib import Path
import vis_core.extension as vis

async def stream(request):
    if request.messages[-1].text == "go":
        yield vis.TextDelta("waiting")
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            Path(request.system).write_text("cancelled")
            raise
    yield vis.TextDelta("second answer")
    yield vis.ResponseDone()

vis.register_extension(vis.Extension(
    name="slow-provider",
    description="A slow model",
    providers=[vis.Provider("slow", ["s1"], stream)],
))
"""


# A provider that begins a block, then waits for ever before its code (as a slow model does)
AHEAD = """
import asyncio
import vis_core.extension as vis

async def stream(request):
    yield vis.TextDelta("writing a block")
    yield vis.ToolCallStarted("python_execution")
    await asyncio.Event().wait()
    yield vis.ResponseDone()

vis.register_extension(vis.Extension(
    name="ahead-provider",
    description="A model that starts a call",
    providers=[vis.Provider("ahead", ["a1"], stream)],
))
"""


async def test_a_provider_s_call_start_starts_the_sandbox_before_its_code(
    vis_home: Path, workspace: Path
) -> None:
    """``vis.ToolCallStarted`` from an extension's stream reaches the session as a built-in
    provider's does: the block's sandbox child starts while the code is still to come."""
    install_extension(vis_home, "ahead_provider", AHEAD)
    host = await Host.open(HostOptions(workspace=workspace, model="ahead/a1"))
    try:
        session = await host.new_session()
        turn = asyncio.ensure_future(session.submit("go"))

        def child_runs() -> bool:
            proc = session.sandbox.inner._proc  # type: ignore[attr-defined]
            return proc is not None and proc.returncode is None

        for _ in range(3000):  # up to a minute: a loaded machine starts children slowly
            if child_runs() or turn.done():
                break
            await asyncio.sleep(0.02)
        assert child_runs(), turn.result() if turn.done() else "the child never started"
        session.cancel()
        await turn
    finally:
        await host.close()


def test_vis_run_uses_a_model_an_extension_declares(vis_home: Path, workspace: Path) -> None:
    install_extension(vis_home, "echo_provider", ECHO)
    done = run_vis("run", "--model", "echo/echo-1", "compute", cwd=workspace, env_home=vis_home)
    assert done.returncode == 0, done.stderr
    assert "the block said 42" in done.stdout


@pytest.mark.parametrize(
    ("model", "said"),
    [
        ("malformed/m1", "provider 'malformed' yielded dict {'text': 'not an event'}"),
        ("raising/r1", "ConnectionError: upstream is down"),
    ],
)
def test_a_failing_provider_fails_the_turn_with_its_name(
    vis_home: Path, workspace: Path, model: str, said: str
) -> None:
    install_extension(vis_home, "echo_provider", ECHO)
    done = run_vis("run", "--model", model, "go", cwd=workspace, env_home=vis_home)
    assert done.returncode == 1
    text = " ".join((done.stdout + done.stderr).split())
    assert said in text
    assert "extension 'echo-provider'" in text
    assert "Traceback" not in done.stdout + done.stderr


def test_an_undeclared_model_is_refused_by_name(vis_home: Path, workspace: Path) -> None:
    install_extension(vis_home, "echo_provider", ECHO)
    done = run_vis("run", "--model", "echo/echo-9", "go", cwd=workspace, env_home=vis_home)
    assert done.returncode != 0
    assert "provider 'echo' (extension 'echo-provider') has no model 'echo-9'" in done.stderr
    assert "echo/echo-1" in done.stderr


async def test_model_list_and_limits_come_from_the_declaration(
    vis_home: Path, workspace: Path, tmp_path: Path
) -> None:
    install_extension(vis_home, "echo_provider", ECHO)
    host: Host = await open_host(workspace, write_script(tmp_path / "s.yaml", [{"text": "x"}]))
    try:
        rows = {row.id: row for row in model_entries(host.command_deps)}
        assert rows["echo/echo-1"].source is ModelSource.EXTENSION
        assert rows["echo/echo-1"].ready
        chosen = host.models.session_model(ModelChoice("echo", "echo-1"))
        assert chosen.provider is not None
        info = chosen.provider.model_info("echo-1")
        assert (info.input_limit, info.input_price) == (32_000, 1.0)
        await chosen.provider.aclose()
    finally:
        await host.close()


async def test_cancelling_a_response_cancels_the_stream_in_the_worker(
    vis_home: Path, workspace: Path, tmp_path: Path
) -> None:
    install_extension(vis_home, "slow_provider", SLOW)
    host = await open_host(workspace, write_script(tmp_path / "s.yaml", [{"text": "x"}]))
    marker = tmp_path / "cancelled.txt"
    try:
        provider = host.models.session_model(ModelChoice("slow", "s1")).provider
        assert provider is not None

        def request(text: str) -> ModelRequest:
            return ModelRequest("s1", str(marker), (Message("user", text),))

        stream = provider.stream(request("go"))
        assert await anext(stream) == vis.TextDelta("waiting")
        await stream.aclose()  # the response is dropped (Esc): the worker's stream stops
        events = [event async for event in provider.stream(request("again"))]
        assert events == [vis.TextDelta("second answer"), vis.ResponseDone()]
        assert marker.read_text() == "cancelled"  # cancelled there, not killed with its worker
        with pytest.raises(ProviderError, match="has no model 's2'"):
            await anext(provider.stream(ModelRequest("s2", "", (Message("user", "x"),))))
        await provider.aclose()
    finally:
        await host.close()


def test_provider_declarations_are_checked() -> None:
    def stream(request: object) -> object:
        return iter(())

    with pytest.raises(ValueError, match="Vis's own provider"):
        vis.Provider("openai", ["x"], stream)
    with pytest.raises(ValueError, match="at least one model"):
        vis.Provider("p", [], stream)
    with pytest.raises(ValueError, match="input_price must be a number >= 0"):
        vis.ProviderModel("m", input_price=-1)
    with pytest.raises(ValueError, match="use vis.Provider declarations"):
        vis.Extension(name="x", description="d", providers=[{"name": "p"}])
    with pytest.raises(ValueError, match="provider 'p' is declared twice"):
        vis.Extension(
            name="x",
            description="d",
            providers=[vis.Provider("p", ["a"], stream), vis.Provider("p", ["b"], stream)],
        )


async def test_model_command_switches_a_session_to_an_extension_model(
    vis_home: Path, workspace: Path, tmp_path: Path
) -> None:
    from vis_core.model_choices import use_model

    install_extension(vis_home, "echo_provider", ECHO)
    host = await open_host(workspace, write_script(tmp_path / "s.yaml", [{"text": "scripted"}]))
    try:
        session = await host.new_session()
        result = await use_model(host.command_deps, session, "echo/echo-1")
        assert session.model.label == "echo/echo-1", result
        events: list[Event] = []
        session.subscribe(events.append)
        ended = await session.submit("compute")
        assert ended.error is None
        said = [e.text for e in events if isinstance(e, AssistantMessage)]
        assert said[-1] == "the block said 42"
        assert host.settings.value("model", session.id) == "echo/echo-1"
    finally:
        await host.close()
