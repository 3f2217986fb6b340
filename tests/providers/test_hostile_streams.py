"""``vis run`` against a real local server that streams forever or sends a broken stream:
the turn ends (failed, or cancelled when the person stops it), and the error names the server
and the fault. What ``vis run`` adds (its exit code, JSON stream, output and stored turns) is
checked through ``vis run``; the faults' wording on sessions in the test's process, which
import the provider SDKs once (on the ``sdk-imports`` worker) instead of in a process each."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

import pytest
from warm_servers import vis_command

from vis_core.events import AssistantThinking, BlockFinished, UsageReported
from vis_core.host import Host, HostOptions
from vis_core.model.turn import TurnStatus

from .wire_servers import WireReply, WireServer, WireToolCall, openai_reply

# the tests that run sessions here import the provider SDKs in the test process
IN_PROCESS = pytest.mark.xdist_group("sdk-imports")

CHUNK = {
    "id": "chatcmpl-endless",
    "object": "chat.completion.chunk",
    "created": 1,
    "model": "m",
    "choices": [{"index": 0, "delta": {"content": "and again " * 40}, "finish_reason": None}],
}
ENDLESS = f"data: {json.dumps(CHUNK)}\n\n"
# The same stream in 40 KB events: the default cap (4 MiB) is reached in ~100 of them, not in
# ~7,000 small ones, each parsed by the SDK and streamed as its own delta (half the run's CPU).
LARGE = {**CHUNK, "choices": [{**CHUNK["choices"][0], "delta": {"content": "and again " * 4000}}]}
ENDLESS_LARGE = f"data: {json.dumps(LARGE)}\n\n"


def configure(home: Path, server: WireServer, extra: str = "") -> None:
    (home / "config.toml").write_text(
        f'[providers.local]\nkind = "openai"\nbase_url = "{server.openai_base_url}"\n'
        f'api_key_env = ""\n{extra}',
        encoding="utf-8",
    )


def vis_run(home: Path, workspace: Path, *args: str, **kw: Any) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["VIS_HOME"] = str(home)
    return subprocess.Popen(
        [*vis_command(env=env), "run", "--json", "--model", "local/m", *args],
        cwd=workspace,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **kw,
    )


def turn_statuses(home: Path) -> list[str]:
    with sqlite3.connect(home / "vis.db") as db:
        return [status for (status,) in db.execute("SELECT status FROM turns")]


def test_an_endless_stream_is_cut_at_the_response_cap(vis_home: Path, workspace: Path) -> None:
    with WireServer() as server:
        configure(vis_home, server)
        server.reply(WireReply(forever=ENDLESS_LARGE))
        run = vis_run(vis_home, workspace, "write forever")
        out, err = run.communicate(timeout=120)
    assert run.returncode == 1, err
    ended = json.loads(out.splitlines()[-1])
    assert ended["type"] == "TurnEnded" and ended["status"] == "failed"
    error = ended["error"]
    assert f"The model server at {server.openai_base_url} (provider local)" in error
    assert "more than 4.0 MiB for one response" in error
    assert "max_response_bytes" in error and "8192-token output limit" in error
    assert turn_statuses(vis_home) == ["failed"]
    stored = sum(p.stat().st_size for p in vis_home.glob("vis.db*"))
    assert stored < 64 * 1024 * 1024  # the 120 s of text once made a 670 MB vis.db


def test_max_response_bytes_sets_the_cap(vis_home: Path, workspace: Path) -> None:
    with WireServer() as server:
        configure(vis_home, server, "max_response_bytes = 20000\n")
        server.reply(WireReply(forever=ENDLESS))
        run = vis_run(vis_home, workspace, "write forever")
        out, err = run.communicate(timeout=120)
    assert run.returncode == 1, err
    ended = json.loads(out.splitlines()[-1])
    assert "more than 20,000 bytes for one response" in ended["error"]
    assert "max_response_bytes = 20000 under [providers.local]" in ended["error"]
    assert sum(len(line) for line in out.splitlines()) < 200_000


def test_ctrl_c_during_an_endless_stream_ends_the_turn(vis_home: Path, workspace: Path) -> None:
    with WireServer() as server:
        configure(vis_home, server, "max_response_bytes = 0\n")  # no cap: only the person
        server.reply(WireReply(forever=ENDLESS))
        run = vis_run(vis_home, workspace, "write forever")
        assert run.stdout is not None
        for line in run.stdout:
            if json.loads(line)["type"] == "AssistantDelta":
                break  # the answer is streaming
        run.send_signal(signal.SIGINT)
        run.communicate(timeout=60)
    assert run.returncode == 130
    assert turn_statuses(vis_home) == ["cancelled"]


def _chunk(delta: dict[str, Any], finish: Any = None) -> dict[str, Any]:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    return {
        "id": "c",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "m",
        "choices": [choice],
    }


def _call_chunk(**function: Any) -> dict[str, Any]:
    return _chunk(
        {"tool_calls": [{"index": 0, "id": "c1", "type": "function", "function": function}]}
    )


def _frame(data: Any) -> str:
    return f"data: {data if isinstance(data, str) else json.dumps(data)}\n\n"


DONE = "data: [DONE]\n\n"
HELLO = _frame(_chunk({"content": "hello "}))
MALFORMED = {
    "invalid JSON": (
        (HELLO, _frame('{"id": "c", "choices": [{"delta": {"content": "x"}'), DONE),
        "an event that is not valid JSON (Expecting ',' delimiter, at character",
    ),
    "no choices": (
        (_frame({"id": "c", "object": "chat.completion.chunk"}), DONE),
        'no event held choices (where the answer goes), e.g. "{\\"id\\": \\"c\\"',
    ),
    "choices not a list": (
        (_frame({"id": "c", "choices": {"0": "x"}}), DONE),
        "an event Vis cannot read (AttributeError:",
    ),
    "a number as text": (
        (_frame(_chunk({"content": 5})), DONE),
        "an event Vis cannot read (TypeError:",
    ),
    "a number in the content's parts": (
        (_frame(_chunk({"content": [{"type": "text", "text": "a"}, 5]})), DONE),
        "an event Vis cannot read (TypeError: a content part is a number, not an object)",
    ),
    "a content part of an unknown type": (
        (_frame(_chunk({"content": [{"type": "audio", "data": "AAAA"}]})), DONE),
        "(TypeError: a content part of type 'audio' is neither text nor thinking): \"{",
    ),
    "a list as a tool call's arguments": (
        (_frame(_call_chunk(name="f", arguments=[1])), DONE),
        "(TypeError: a tool call's arguments is a list, not text)",
    ),
    "a number as a tool's name": (
        (_frame(_call_chunk(name=7)), DONE),
        "(TypeError: a tool call's name is a number, not text)",
    ),
    "a list as the finish reason": (
        (HELLO, _frame(_chunk({}, ["stop"])), DONE),
        "(TypeError: finish_reason is a list, not text)",
    ),
    "control characters in JSON": (
        (HELLO, _frame(_chunk({"content": "bell"})).replace("bell", "be\x07ll"), DONE),
        "an event that is not valid JSON (Invalid control character, at character",
    ),
}


def _failed(home: Path, workspace: Path, reply: WireReply) -> tuple[str, str]:
    with WireServer() as server:
        configure(home, server)
        server.reply(reply)
        run = vis_run(home, workspace, "hi")
        out, err = run.communicate(timeout=120)
    assert run.returncode == 1, err
    ended = json.loads(out.splitlines()[-1])
    assert ended["type"] == "TurnEnded" and ended["status"] == "failed", ended
    assert "Traceback" not in err
    return ended["error"], server.openai_base_url


async def _turns(workspace: Path, server: WireServer, *replies: WireReply) -> list[Any]:
    """One turn a reply in one session of this process against ``server`` (configured)."""
    host = await Host.open(HostOptions(workspace=workspace, provider="local", model="m"))
    try:
        session = await host.new_session()
        ended = []
        for reply in replies:
            server.reply(reply)
            ended.append(await session.submit("hi"))
        return ended
    finally:
        await host.close()


async def _failed_here(home: Path, workspace: Path, reply: WireReply) -> tuple[str, str]:
    with WireServer() as server:
        configure(home, server)
        [ended] = await _turns(workspace, server, reply)
    assert ended.status is TurnStatus.FAILED, ended
    return ended.error, server.openai_base_url


@IN_PROCESS
async def test_a_malformed_stream_names_the_server_and_the_fault(
    vis_home: Path, workspace: Path
) -> None:
    with WireServer() as server:
        configure(vis_home, server)
        replies = [WireReply(frames=frames) for frames, _ in MALFORMED.values()]
        turns = await _turns(workspace, server, *replies)
    prefix = f"The model server at {server.openai_base_url} (provider local) sent a malformed "
    for name, (_, fault), ended in zip(MALFORMED, MALFORMED.values(), turns, strict=True):
        error = ended.error
        assert ended.status is TurnStatus.FAILED, (name, ended)
        assert error.startswith(f"model request failed: {prefix}") or error.startswith(prefix), (
            name,
            error,
        )
        assert fault in error, (name, error)


def test_a_stream_without_its_end_names_the_server(vis_home: Path, workspace: Path) -> None:
    error, url = _failed(vis_home, workspace, WireReply(frames=(HELLO,)))
    assert "ended unfinished (after 6 characters)" in error and url in error


@IN_PROCESS
async def test_an_html_page_with_200_is_not_a_stream(vis_home: Path, workspace: Path) -> None:
    page = "<html><head><title>502</title></head><body><h1>Bad gateway</h1></body></html>"
    reply = WireReply(body=page, headers=(("Content-Type", "text/html"),), raw=True)
    error, url = await _failed_here(vis_home, workspace, reply)
    assert f"The model server at {url} (provider local) sent a malformed stream" in error
    assert 'it answered text/html instead of an event stream: "502 Bad gateway"' in error
    assert "check base_url under [providers.local]" in error


def test_tool_names_repeated_in_every_chunk_still_run(vis_home: Path, workspace: Path) -> None:
    call = WireToolCall("call_1", "python_execution", {"code": "print(6 * 7)"})
    with WireServer() as server:
        configure(vis_home, server)
        server.reply(openai_reply(tool_calls=[call], repeat_name=True), openai_reply("It is 42."))
        run = vis_run(vis_home, workspace, "compute")
        out, err = run.communicate(timeout=120)
    assert run.returncode == 0, err
    events = [json.loads(line) for line in out.splitlines()]
    [started] = [e for e in events if e["type"] == "IterationStarted"]
    assert started["tool"] == "python_execution" and started["code"] == "print(6 * 7)"
    assert events[-1]["content"] == "It is 42."


def test_a_lone_surrogate_keeps_the_answer(vis_home: Path, workspace: Path) -> None:
    frames = (
        HELLO,
        _frame(_chunk({"content": "a\ud800b"})),  # json.dumps writes it as \\ud800
        _frame(_chunk({"content": " and the rest"})),
        _frame(_chunk({}, "stop")),
        DONE,
    )
    assert "\\ud800" in frames[1]
    for args in ([], ["--json"]):
        with WireServer() as server:
            configure(vis_home, server)
            server.reply(WireReply(frames=frames))
            env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
            env["VIS_HOME"] = str(vis_home)
            done = subprocess.run(
                [*vis_command(env=env), "run", *args, "--model", "local/m", "hi"],
                cwd=workspace,
                env=env,
                capture_output=True,
                timeout=120,
            )
        assert done.returncode == 0, done.stderr
        out = done.stdout.decode("utf-8")  # valid UTF-8: the character written out
        if args:
            assert json.loads(out.splitlines()[-1])["content"] == "hello a\\ud800b and the rest"
        else:
            assert out == "hello a\\ud800b and the rest\n"
    with sqlite3.connect(vis_home / "vis.db") as db:
        rows = db.execute("SELECT data FROM events WHERE type = 'TurnEnded'").fetchall()
    assert [json.loads(data)["content"] for (data,) in rows] == ["hello a\\ud800b and the rest"] * 2


@IN_PROCESS
async def test_a_malformed_anthropic_stream_names_the_server_and_the_fault(
    vis_home: Path, workspace: Path
) -> None:
    start = {
        "type": "message_start",
        "message": {
            "id": "m",
            "type": "message",
            "role": "assistant",
            "model": "c",
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1},
        },
    }
    broken = WireReply(
        frames=(
            f"event: message_start\ndata: {json.dumps(start)}\n\n",
            'event: content_block_start\ndata: {"type": "content_block_start", "index": 0\n\n',
        )
    )
    endless = WireReply(forever=f"event: ping\ndata: {json.dumps({'type': 'ping'})}\n\n")
    with WireServer() as server:
        (vis_home / "config.toml").write_text(
            f'[providers.claude]\nkind = "anthropic"\n'
            f'base_url = "{server.anthropic_base_url}"\n'
            'api_key_env = ""\nmax_response_bytes = 50000\n',
            encoding="utf-8",
        )
        host = await Host.open(HostOptions(workspace=workspace, provider="claude", model="c"))
        try:
            session = await host.new_session()
            for reply, fault in (
                (broken, "sent a malformed stream: an event that is not valid JSON"),
                (endless, "for one response (the cap: max_response_bytes = 50000"),
            ):
                server.reply(reply)
                ended = await session.submit("hi")
                assert ended.status is TurnStatus.FAILED, ended
                assert f"The model server at {server.anthropic_base_url} (provider claude)" in (
                    ended.error
                )
                assert fault in ended.error, ended.error
        finally:
            await host.close()


@IN_PROCESS
async def test_a_line_that_never_ends_is_cut_too(vis_home: Path, workspace: Path) -> None:
    with WireServer() as server:
        configure(vis_home, server, "max_response_bytes = 100000\n")
        endless_line = WireReply(
            frames=('data: {"id": "c", "choices": [{"delta": {"content": "',),
            forever="x" * 4096,
        )
        [ended] = await _turns(workspace, server, endless_line)
    assert ended.status is TurnStatus.FAILED, ended
    assert "more than 100,000 bytes for one response" in ended.error


@IN_PROCESS
async def test_an_endless_error_body_is_cut(vis_home: Path, workspace: Path) -> None:
    reply = WireReply(status=500, frames=("{",), forever="x" * 4096)
    error, url = await _failed_here(vis_home, workspace, reply)
    assert f"The model server at {url} (provider local)" in error
    assert "answered an error whose body is longer than 1.0 MiB" in error


@IN_PROCESS
async def test_an_endless_props_answer_does_not_stop_the_turn(
    vis_home: Path, workspace: Path
) -> None:
    with WireServer() as server:
        configure(vis_home, server)
        server.serve("/props", WireReply(frames=('{"n_ctx": ',), forever="1" * 4096))
        [ended] = await _turns(workspace, server, openai_reply("Still here."))
    assert ended.status is TurnStatus.COMPLETED, ended
    assert ended.content == "Still here."
    assert "/props" in server.gets


@IN_PROCESS
async def test_typed_content_parts_and_object_arguments_are_read(
    vis_home: Path, workspace: Path
) -> None:
    """Mistral's Magistral streams ``content`` as a list of typed parts, some servers send a
    tool call's arguments as a JSON object: both ended the turn with a bare TypeError."""
    thinking = {"type": "thinking", "thinking": [{"type": "text", "text": "Hm, "}]}
    parts = [{"type": "thinking", "thinking": "five."}, {"type": "text", "text": "It is"}]
    magistral = (
        _frame(_chunk({"content": [thinking]})),
        _frame(_chunk({"content": parts})),
        _frame(_chunk({"content": " five."})),
        _frame(_chunk({}, "stop")),
        DONE,
    )
    code = "print('café', 2 + 3)"
    call = _call_chunk(name="python_execution", arguments={"code": code})
    object_arguments = (_frame(call), _frame(_chunk({}, "tool_calls")), DONE)
    with WireServer() as server:
        configure(vis_home, server)
        host = await Host.open(HostOptions(workspace=workspace, provider="local", model="m"))
        try:
            session = await host.new_session()
            events: list[Any] = []
            session.subscribe(events.append)
            server.reply(WireReply(frames=magistral))
            first = await session.submit("hi")
            server.reply(WireReply(frames=object_arguments), openai_reply("Ran it."))
            second = await session.submit("run it")
        finally:
            await host.close()
    assert first.status is TurnStatus.COMPLETED and first.content == "It is five.", first
    thought = [e.text for e in events if isinstance(e, AssistantThinking)]
    assert thought == ["Hm, five."]
    assert second.status is TurnStatus.COMPLETED and second.content == "Ran it.", second
    [block] = [e for e in events if isinstance(e, BlockFinished)]
    assert block.stdout == "café 5\n"
    [sent] = [m for m in server.bodies[-1]["messages"] if m.get("tool_calls")]
    assert json.loads(sent["tool_calls"][0]["function"]["arguments"]) == {"code": code}


def _completion(message: dict[str, Any], finish: str, usage: tuple[int, int]) -> WireReply:
    """A whole ``chat.completion``: a server that ignores ``stream: true`` answers so."""
    prompt, completion = usage
    return WireReply(
        body={
            "id": "chatcmpl-whole",
            "object": "chat.completion",
            "created": 1,
            "model": "m",
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": completion},
        }
    )


@IN_PROCESS
async def test_a_whole_answer_instead_of_a_stream_is_the_answer(
    vis_home: Path, workspace: Path
) -> None:
    """It was refused as a page, with advice to check that base_url ends in /v1."""
    call = {
        "id": "call_w",
        "type": "function",
        "function": {"name": "python_execution", "arguments": json.dumps({"code": "print(6 * 7)"})},
    }
    with WireServer() as server:
        configure(vis_home, server)
        server.reply(
            _completion(
                {"role": "assistant", "content": "Computing.", "tool_calls": [call]},
                "tool_calls",
                (120, 30),
            ),
            _completion(
                {"role": "assistant", "content": "<think>It printed 42.</think>It is 42."},
                "stop",
                (200, 9),
            ),
        )
        host = await Host.open(HostOptions(workspace=workspace, provider="local", model="m"))
        try:
            session = await host.new_session()
            events: list[Any] = []
            session.subscribe(events.append)
            ended = await session.submit("6 * 7?")
        finally:
            await host.close()
    assert ended.status is TurnStatus.COMPLETED, ended.error
    assert ended.content == "It is 42."
    [block] = [e for e in events if isinstance(e, BlockFinished)]
    assert block.stdout == "42\n"
    assert [e.text for e in events if isinstance(e, AssistantThinking)] == ["It printed 42."]
    usage = [(e.usage.input, e.usage.output) for e in events if isinstance(e, UsageReported)]
    assert usage == [(120, 30), (200, 9)]
    assert "Computing." in json.dumps(server.bodies[1]["messages"])


@IN_PROCESS
async def test_a_whole_answer_of_the_wrong_shape_names_the_server_and_quotes_it(
    vis_home: Path, workspace: Path
) -> None:
    reply = _completion({"role": "assistant", "content": 42}, "stop", (1, 1))
    error, url = await _failed_here(vis_home, workspace, reply)
    assert f"The model server at {url} (provider local) sent a malformed stream" in error
    assert "(TypeError: content is a number, not text or a list of parts)" in error
    assert '\\"content\\": 42' in error
    reply = WireReply(body={"error": "model 'm' not loaded"})  # LM Studio, with 200
    error, _ = await _failed_here(vis_home, workspace, reply)
    assert error.endswith("(provider local) answered with an error: model 'm' not loaded")
