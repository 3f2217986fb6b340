"""Vis against a server that answers as llama.cpp's ``llama-server`` does: a forced tool
reaches it in the form it reads, ``required`` forces a turn's first request only, and the
context size it reports (or states in a refusal) is the session's input limit and budget."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from vis_core.events import UsageReported
from vis_core.host import Host, HostOptions
from vis_core.model.conversation import ToolDefinition
from vis_core.model.turn import TurnStatus
from vis_core.providers.anthropic_provider import AnthropicProvider
from vis_core.providers.errors import context_overflow
from vis_core.providers.limits import soft_budget
from vis_core.providers.openai_provider import OpenAIProvider

from .llama_server import LlamaServer
from .samples import PYTHON_EXECUTION_TOOL, collect, conversation_request, providers, simple_request
from .wire_servers import (
    RecordedRequest,
    WireReply,
    WireServer,
    WireToolCall,
    anthropic_reply,
    openai_error,
    openai_reply,
)

SEARCH_TOOL = ToolDefinition(
    "mcp__docs__search", "Search the docs.", {"type": "object", "properties": {}}
)

# the provider SDKs are imported in the test process (anthropic ~2 s of CPU): on one worker
pytestmark = pytest.mark.xdist_group("sdk-imports")


@pytest.fixture
def llama() -> Iterator[LlamaServer]:
    with LlamaServer(n_ctx=8192) as server:
        yield server


@pytest.fixture
async def openai_at() -> AsyncIterator[Callable[..., OpenAIProvider]]:
    async with providers(OpenAIProvider, api_key="") as make:
        yield make


def two_tools(request: Any) -> Any:
    return replace(request, tools=(PYTHON_EXECUTION_TOOL, SEARCH_TOOL))


# --- tool_choice ---------------------------------------------------------------------------


async def test_a_named_tool_that_is_the_only_one_is_sent_as_required(
    llama: LlamaServer, openai_at: Callable[..., OpenAIProvider]
) -> None:
    llama.reply(openai_reply(tool_calls=[WireToolCall("c1", "python_execution", {"code": "1"})]))
    provider = openai_at(
        base_url=llama.base_url, model_overrides={"smol": {"tool_choice": "python_execution"}}
    )
    await collect(provider, simple_request("smol"))
    assert llama.wire.bodies[0]["tool_choice"] == "required"
    assert llama.read_tool_choice == ["required"] and llama.log == []


async def test_llama_server_gets_a_named_tool_among_several_as_required(
    llama: LlamaServer, openai_at: Callable[..., OpenAIProvider]
) -> None:
    """/props shows llama.cpp's server, which reads the object form as "auto"."""
    llama.reply(openai_reply(tool_calls=[WireToolCall("c1", "python_execution", {"code": "1"})]))
    provider = openai_at(
        base_url=llama.base_url, model_overrides={"smol": {"tool_choice": "python_execution"}}
    )
    await collect(provider, two_tools(simple_request("smol")))
    assert llama.read_tool_choice == ["required"] and llama.log == []


async def test_other_servers_get_the_named_object_among_several_tools(
    wire_server: WireServer, openai_at: Callable[..., OpenAIProvider]
) -> None:
    wire_server.reply(openai_reply("hi"))
    provider = openai_at(
        base_url=wire_server.openai_base_url,
        model_overrides={"m": {"tool_choice": "python_execution"}},
    )
    await collect(provider, two_tools(simple_request("m")))
    named = {"type": "function", "function": {"name": "python_execution"}}
    assert wire_server.bodies[0]["tool_choice"] == named


async def test_a_server_refusing_the_object_form_is_asked_again_with_required(
    openai_at: Callable[..., OpenAIProvider],
) -> None:
    def strict(request: RecordedRequest) -> WireReply | None:
        if isinstance(request.body.get("tool_choice"), dict):
            return openai_error(
                400,
                "Wrong type supplied for parameter 'tool_choice'. Expected 'string'",
                "invalid_request_error",
            )
        return None

    with WireServer(checks=strict) as server:
        server.reply(openai_reply("one"), openai_reply("two"))
        provider = openai_at(
            base_url=server.openai_base_url,
            model_overrides={"m": {"tool_choice": "python_execution"}},
        )
        await collect(provider, two_tools(simple_request("m")))
        await collect(provider, two_tools(simple_request("m")))
        sent = [body["tool_choice"] for body in server.bodies]
    assert sent[0] == {"type": "function", "function": {"name": "python_execution"}}
    assert sent[1:] == ["required", "required"]  # learnt: asked in the object form once only


async def test_required_forces_only_the_first_request_of_a_turn(
    llama: LlamaServer, openai_at: Callable[..., OpenAIProvider]
) -> None:
    llama.reply(openai_reply("a"), openai_reply("b"))
    provider = openai_at(
        base_url=llama.base_url, model_overrides={"smol": {"tool_choice": "required"}}
    )
    await collect(provider, simple_request("smol"))
    after_results = conversation_request("smol")
    await collect(provider, replace(after_results, messages=after_results.messages[:4]))
    assert llama.read_tool_choice == ["required", "auto"]


async def test_anthropic_required_forces_only_the_first_request_of_a_turn(
    wire_server: WireServer,
) -> None:
    wire_server.reply(anthropic_reply("a"), anthropic_reply("b"))
    async with providers(
        AnthropicProvider, api_key="sk-ant", base_url=wire_server.anthropic_base_url
    ) as make:
        provider = make(model_overrides={"m": {"tool_choice": "required"}})
        await collect(provider, simple_request("m"))
        after_results = conversation_request("m")
        await collect(provider, replace(after_results, messages=after_results.messages[:4]))
    first, later = wire_server.bodies
    assert first["tool_choice"] == {"type": "any"} and later["tool_choice"] == {"type": "auto"}


# --- the context size ----------------------------------------------------------------------


def test_llama_cpps_refusal_states_both_figures_in_its_message_alone() -> None:
    """Ollama passes llama.cpp's refusal on as a message only: the figures are read from it."""
    message = (
        "request (9177 tokens) exceeds the available context size (4096 tokens), try increasing it"
    )
    overflow = context_overflow("local", 400, {"error": message})
    assert overflow is not None
    assert (overflow.input_tokens, overflow.limit) == (9177, 4096)


def configure_local(vis_home: Path, base_url: str) -> None:
    (vis_home / "config.toml").write_text(
        f'model = "local/smol"\n[providers.local]\nkind = "openai"\nbase_url = "{base_url}"\n'
        'api_key_env = ""\n',
        encoding="utf-8",
    )


async def run_turn(workspace: Path, request: str) -> tuple[Any, list[Any], dict[str, Any]]:
    host = await Host.open(HostOptions(workspace=workspace))
    try:
        session = await host.new_session()
        events: list[Any] = []
        session.subscribe(events.append)
        ended = await session.submit(request)
        return ended, events, session.utilization()
    finally:
        await host.close()


async def test_the_context_size_llama_server_reports_is_the_sessions_limit_and_budget(
    llama: LlamaServer, vis_home: Path, workspace: Path
) -> None:
    configure_local(vis_home, llama.base_url)
    llama.reply(openai_reply("hello", usage=(3000, 5, 0)))
    ended, events, utilization = await run_turn(workspace, "hi")
    assert ended.status is TurnStatus.COMPLETED, ended.error
    usage = next(e for e in events if isinstance(e, UsageReported))
    budget = soft_budget("smol", 8192)
    assert budget == int(8192 * 0.9)
    assert (usage.context_limit, usage.context_budget) == (8192, budget)
    assert utilization["model_input_limit"] == 8192
    assert utilization["auto_compress_above"] == budget


async def test_the_context_size_a_refusal_states_is_learnt(vis_home: Path, workspace: Path) -> None:
    with LlamaServer(n_ctx=1024, props=False) as llama:
        configure_local(vis_home, llama.base_url)
        ended, events, utilization = await run_turn(workspace, "x" * 6000)
    assert ended.status is TurnStatus.FAILED
    assert "exceeds the available context size (1024 tokens)" in (ended.error or "")
    rejected = [e for e in events if isinstance(e, UsageReported) and e.purpose == "rejected"]
    assert rejected and rejected[-1].context_limit == 1024
    assert utilization["model_input_limit"] == 1024
    assert utilization["auto_compress_above"] == soft_budget("smol", 1024)
