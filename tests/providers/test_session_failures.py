"""A real session against wire servers that fail the way real ones do: what the person and
the model are told, what is stored, what runs and what does not."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from warm_servers import vis_command

from vis_core.events import (
    AssistantMessage,
    BlockFinished,
    IterationStarted,
    Notification,
    UsageReported,
)
from vis_core.host import Host, HostOptions
from vis_core.model.turn import TurnStatus

from .wire_servers import (
    WireReply,
    WireServer,
    WireToolCall,
    llama_cpp_python_checks,
    openai_error,
    openai_reply,
)

# the provider SDKs are imported in the test process (anthropic ~2 s of CPU): on one worker
pytestmark = pytest.mark.xdist_group("sdk-imports")


def configure(vis_home: Path, server: WireServer, extra: str = "") -> None:
    (vis_home / "config.toml").write_text(
        f'[providers.wire]\nkind = "openai"\nbase_url = "{server.openai_base_url}"\n'
        f'api_key_env = ""\n{extra}',
        encoding="utf-8",
    )


async def run(workspace: Path, *requests: str) -> tuple[list[Any], list[Any], Host]:
    host = await Host.open(HostOptions(workspace=workspace, provider="wire", model="test-model"))
    session = await host.new_session()
    events: list = []
    session.subscribe(events.append)
    ended = [await session.submit(request) for request in requests]
    return ended, events, host


async def test_a_tool_turn_against_a_server_that_rejects_null_content(
    vis_home: Path, workspace: Path
) -> None:
    with WireServer(checks=llama_cpp_python_checks) as server:
        configure(vis_home, server)
        call = WireToolCall("call_1", "python_execution", {"code": "print(6 * 7)"})
        server.reply(openai_reply(tool_calls=[call]), openai_reply("It is 42."))
        [ended], events, host = await run(workspace, "compute")
        await host.close()
    assert ended.status is TurnStatus.COMPLETED, ended.error
    assert ended.content == "It is 42."
    assert server.bodies[1]["messages"][2]["content"] == ""


async def test_a_cut_answer_is_told_to_the_person_and_the_model(
    vis_home: Path, workspace: Path, wire_server: WireServer
) -> None:
    configure(vis_home, wire_server)
    wire_server.reply(
        openai_reply("The three reasons are: first, the cach", finish_reason="length"),
        openai_reply("Go on: second..."),
    )
    ended, events, host = await run(workspace, "why?", "continue")
    stored = host.store.turns(ended[0].session_id)
    await host.close()
    assert ended[0].content == "The three reasons are: first, the cach"
    assert ended[0].status is TurnStatus.INCOMPLETE  # not a plain success
    assert ended[0].error is not None and "cut at the model's output limit" in ended[0].error
    assert stored[0].status == "incomplete"
    message = next(e for e in events if isinstance(e, AssistantMessage))
    assert message.incomplete == "max_tokens"
    assert ended[1].status is TurnStatus.COMPLETED  # the next, whole answer is a success
    replayed = wire_server.bodies[1]["messages"][2]
    assert replayed["role"] == "assistant"
    assert replayed["content"].startswith("The three reasons are: first, the cach")
    assert "cut here" in replayed["content"] and "output limit" in replayed["content"]


async def test_a_cut_tool_call_is_not_run_and_the_model_reads_why(
    vis_home: Path, workspace: Path, wire_server: WireServer
) -> None:
    configure(vis_home, wire_server)
    marker = workspace / "ran.txt"
    raw = '{"code": "open(' + repr(str(marker)) + ', \\"w\\").write(\\"x'
    call = WireToolCall("call_1", "python_execution")
    wire_server.reply(
        openai_reply("Writing:", [call], raw_arguments=[raw], finish_reason="length"),
        openai_reply("Sorry, shorter then."),
    )
    [ended], events, host = await run(workspace, "write it")
    stored = [row.event for row in host.store.events(ended.session_id)]
    await host.close()
    assert not marker.exists()
    started = next(e for e in events if isinstance(e, IterationStarted))
    assert started.arguments == {"raw_arguments": raw}
    assert any(isinstance(e, IterationStarted) and e.arguments == started.arguments for e in stored)
    block = next(e for e in events if isinstance(e, BlockFinished))
    assert block.error is not None and "cut at the output limit" in block.error
    tool_result = wire_server.bodies[1]["messages"][-1]
    assert tool_result["role"] == "tool" and "not run" in tool_result["content"]
    assert ended.status is TurnStatus.COMPLETED and ended.content == "Sorry, shorter then."
    notices = [e.text for e in events if isinstance(e, Notification)]
    assert any("the tool call it was writing was not run" in t for t in notices)


async def test_invalid_arguments_are_stored_raw_and_the_turn_goes_on(
    vis_home: Path, workspace: Path, wire_server: WireServer
) -> None:
    configure(vis_home, wire_server)
    raw = '{"code": print(1)}'
    call = WireToolCall("call_1", "python_execution")
    wire_server.reply(
        openai_reply(tool_calls=[call], raw_arguments=[raw]),
        openai_reply("Fixed."),
    )
    [ended], events, host = await run(workspace, "go")
    await host.close()
    block = next(e for e in events if isinstance(e, BlockFinished))
    assert block.error is not None and "not valid JSON (Expecting value" in block.error
    assert "output limit" not in block.error
    assert ended.status is TurnStatus.COMPLETED


async def test_a_failed_turn_keeps_its_partial_answer_and_usage(
    vis_home: Path, workspace: Path, wire_server: WireServer
) -> None:
    configure(vis_home, wire_server)
    wire_server.reply(openai_reply("Partial answer about zeppelins", unfinished=True))
    [ended], events, host = await run(workspace, "tell me")
    hits = host.store.search_sessions("zeppelins")
    await host.close()
    assert ended.status is TurnStatus.FAILED
    assert ended.error is not None and "ended unfinished" in ended.error
    assert ended.content == "Partial answer about zeppelins"
    message = next(e for e in events if isinstance(e, AssistantMessage))
    assert message.incomplete == "failed"
    usage = next(e for e in events if isinstance(e, UsageReported))
    assert usage.usage.input > 0 and usage.usage.output > 0
    assert ended.usage == usage.usage
    assert [hit.session.id for hit in hits] == [ended.session_id]


async def test_a_retried_error_is_told_once(
    vis_home: Path, workspace: Path, wire_server: WireServer
) -> None:
    configure(vis_home, wire_server)
    wire_server.reply(*(openai_error(503, "the model is loading") for _ in range(3)))
    host = await Host.open(HostOptions(workspace=workspace, provider="wire", model="test-model"))
    session = await host.new_session()
    session.limits.retry_base_delay = 0.01
    events: list = []
    session.subscribe(events.append)
    ended = await session.submit("hi")
    await host.close()
    assert ended.status is TurnStatus.FAILED
    notices = [e.text for e in events if isinstance(e, Notification)]
    assert len(notices) == 2
    assert sum("the model is loading" in t for t in notices) == 1
    assert "the model is loading" in (ended.error or "")


def test_vis_run_exits_1_and_says_so_when_the_answer_was_cut(
    vis_home: Path, workspace: Path, wire_server: WireServer
) -> None:
    configure(vis_home, wire_server)
    wire_server.reply(openai_reply("Half an ans", finish_reason="length"))
    done = subprocess.run(
        [*vis_command(), "run", "--model", "wire/test-model", "go"],
        cwd=workspace, env={**os.environ, "VIS_HOME": str(vis_home)},
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert done.stdout.startswith("Half an ans")
    assert "incomplete:" in done.stderr and "output limit (max_tokens)" in done.stderr
    assert "Task was destroyed" not in done.stderr  # the SSE events were closed in time


async def test_a_retried_error_is_told_once_not_once_per_try(
    vis_home: Path, workspace: Path, wire_server: WireServer
) -> None:
    import dataclasses

    configure(vis_home, wire_server)
    busy = openai_error(503, "the server is busy loading the model")
    wire_server.reply(busy, busy, openai_reply("Ready now."))
    host = await Host.open(HostOptions(workspace=workspace, provider="wire", model="test-model"))
    session = await host.new_session()
    session.limits = dataclasses.replace(session.limits, retry_base_delay=0.01)
    events: list = []
    session.subscribe(events.append)
    ended = await session.submit("hello")
    await host.close()
    assert ended.status is TurnStatus.COMPLETED and ended.content == "Ready now."
    notices = [e.text for e in events if isinstance(e, Notification)]
    assert len(notices) == 2
    assert "the server is busy loading the model" in notices[0] and "attempt 2 of 3" in notices[0]
    assert "busy" not in notices[1] and notices[1].startswith("Retrying in")


async def test_the_retry_notice_says_the_wait_the_server_asked_for(
    vis_home: Path, workspace: Path, wire_server: WireServer
) -> None:
    import dataclasses

    configure(vis_home, wire_server)
    limited = openai_error(429, "Rate limit reached for requests", "requests")
    wire_server.reply(
        dataclasses.replace(limited, headers=(("retry-after-ms", "50"),)), openai_reply("Ready.")
    )
    [ended], events, host = await run(workspace, "hello")
    await host.close()
    assert ended.status is TurnStatus.COMPLETED and ended.content == "Ready."
    [notice] = [e.text for e in events if isinstance(e, Notification)]
    assert "Rate limit reached" in notice
    assert "retrying in 0.05 s, as the server asked (attempt 2 of 3)" in notice


async def test_a_password_in_base_url_is_not_printed_or_stored(
    vis_home: Path, workspace: Path, wire_server: WireServer
) -> None:
    url = wire_server.url.replace("http://", "http://proxyuser:hunter2Secret@")
    (vis_home / "config.toml").write_text(
        f'[providers.wire]\nkind = "openai"\nbase_url = "{url}"\napi_key_env = ""\n',
        encoding="utf-8",
    )
    wire_server.reply(WireReply(status=404, body={"detail": "Not Found"}))
    [ended], events, host = await run(workspace, "hi")
    stored = [repr(row.event) for row in host.store.events(ended.session_id)]
    await host.close()
    assert ended.status is TurnStatus.FAILED and "try base_url" in (ended.error or "")
    assert "hunter2Secret" not in (ended.error or "") and "***@" in (ended.error or "")
    assert not [e for e in [*map(repr, events), *stored] if "hunter2Secret" in e]
    written = b"".join(p.read_bytes() for p in vis_home.rglob("*") if p.is_file())
    assert b"hunter2Secret" not in written.replace(url.encode(), b"")  # but in config.toml


async def test_a_huge_error_body_is_told_and_stored_cut(
    vis_home: Path, workspace: Path, wire_server: WireServer
) -> None:
    configure(vis_home, wire_server)
    huge = openai_error(400, "boom " + "x" * 900_000)
    wire_server.reply(huge)
    [ended], events, host = await run(workspace, "hi")
    stored = [repr(row.event) for row in host.store.events(ended.session_id)]
    await host.close()
    assert ended.status is TurnStatus.FAILED
    assert "(cut: 900,005 characters in all)" in (ended.error or "")
    assert len(ended.error or "") < 1000
    assert sum(map(len, stored)) < 20_000  # not 900 KB each time it is told


async def test_an_answer_finished_before_the_connection_broke_completes_the_turn(
    vis_home: Path, workspace: Path, wire_server: WireServer
) -> None:
    import dataclasses

    configure(vis_home, wire_server)
    whole = openai_reply("The whole answer.")
    wire_server.reply(dataclasses.replace(whole, cut_after=len(whole.frames) - 2))
    [ended], events, host = await run(workspace, "hi")
    await host.close()
    assert ended.status is TurnStatus.COMPLETED, ended.error
    assert ended.content == "The whole answer."
    usage = next(e for e in events if isinstance(e, UsageReported))
    assert usage.usage.input > 0 and usage.usage.output > 0  # estimated
    assert not [e for e in events if isinstance(e, Notification)]
