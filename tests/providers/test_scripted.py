"""The scripted provider replays YAML/JSON scripts: text, code, tools, usage, errors, timing."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from vis_core.model.conversation import (
    ResponseDone,
    TextDelta,
    ToolCall,
    ToolCallReady,
    ToolCallStarted,
    UsageUpdate,
)
from vis_core.model.usage import Usage
from vis_core.providers.base import ModelRequest, ProviderConfigError, ProviderError, StreamEvent
from vis_core.providers.scripted import ScriptedProvider, ScriptError, load_tracks

from .samples import collect, simple_request

SCRIPT = """\
- text: "Let me look at the README."
  code: |
    r = await cat("README.md")
    print(r)
  usage: {input: 1200, output: 80, cache_read: 300, cache_write: 20}
- tool: {name: mcp__docs__search, arguments: {query: "install"}}
- text: "The README explains the install."
"""


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def texts(events: list[StreamEvent]) -> list[str]:
    return [e.text for e in events if isinstance(e, TextDelta)]


async def test_yaml_script_replays_responses_in_order(tmp_path: Path) -> None:
    provider = ScriptedProvider(write(tmp_path, "s.yaml", SCRIPT))

    first = await collect(provider)
    assert texts(first) == ["Let me look at t", "he README."]
    code = 'r = await cat("README.md")\nprint(r)\n'
    assert first[2:] == [
        ToolCallStarted("python_execution"),
        ToolCallReady(ToolCall("scripted-1", "python_execution", {"code": code})),
        UsageUpdate(Usage(1200, 80, 300, 20)),
        ResponseDone("tool_use"),
    ]

    second = await collect(provider)
    assert second[:2] == [
        ToolCallStarted("mcp__docs__search"),  # the call began: what it needs may start
        ToolCallReady(ToolCall("scripted-2", "mcp__docs__search", {"query": "install"})),
    ]
    assert second[-1] == ResponseDone("tool_use")

    third = await collect(provider)
    assert "".join(texts(third)) == "The README explains the install."
    assert third[-1] == ResponseDone("end_turn")
    assert provider.remaining == 0

    with pytest.raises(ProviderError) as failure:
        await collect(provider)
    assert str(failure.value) == "script exhausted after 3 responses"
    assert not failure.value.retryable


async def test_json_script_and_chunk_size(tmp_path: Path) -> None:
    script = [{"text": "abcdefghij", "chunk": 3}, {"code": "print(2)", "usage": {"input": 5}}]
    provider = ScriptedProvider(write(tmp_path, "s.json", json.dumps(script)))

    first = await collect(provider)
    assert texts(first) == ["abc", "def", "ghi", "j"]
    second = await collect(provider)
    assert second[:3] == [
        ToolCallStarted("python_execution"),
        ToolCallReady(ToolCall("scripted-2", "python_execution", {"code": "print(2)"})),
        UsageUpdate(Usage(input=5)),
    ]


async def test_usage_is_estimated_at_four_chars_per_token(tmp_path: Path) -> None:
    provider = ScriptedProvider(write(tmp_path, "s.yaml", '- text: "12345678"\n- code: "x = 1"\n'))
    request = ModelRequest(model="m", system="s" * 40, messages=())

    first = await collect(provider, request)
    assert UsageUpdate(Usage(input=10, output=2)) in first
    second = await collect(provider, request)
    # output: the call's name plus its JSON arguments
    chars = len("python_execution") + len(json.dumps({"code": "x = 1"}))
    assert UsageUpdate(Usage(input=10, output=(chars + 3) // 4)) in second


async def test_delay_lets_a_consumer_cancel_mid_stream(tmp_path: Path) -> None:
    provider = ScriptedProvider(
        write(tmp_path, "s.yaml", '- {text: "aaaabbbbccccdddd", chunk: 4, delay_ms: 200}\n')
    )
    seen: list[str] = []
    first_delta = asyncio.Event()

    async def consume() -> None:
        async for event in provider.stream(simple_request()):
            if isinstance(event, TextDelta):
                seen.append(event.text)
                first_delta.set()

    task = asyncio.create_task(consume())
    await first_delta.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert seen == ["aaaa"]


@pytest.mark.parametrize(
    ("status", "retryable", "error_type"),
    [
        (503, True, ProviderError),
        (429, True, ProviderError),
        (408, True, ProviderError),
        (400, False, ProviderError),
        (401, False, ProviderConfigError),
    ],
)
async def test_error_response_fails_the_request(
    tmp_path: Path, status: int, retryable: bool, error_type: type[ProviderError]
) -> None:
    script = f'- error: {{status: {status}, message: "boom"}}\n- text: "after"\n'
    provider = ScriptedProvider(write(tmp_path, "s.yaml", script))

    with pytest.raises(error_type) as failure:
        await collect(provider)
    assert str(failure.value) == "boom"
    assert failure.value.status == status
    assert failure.value.retryable is retryable
    assert "".join(texts(await collect(provider))) == "after"


async def test_error_after_text_streams_the_text_first(tmp_path: Path) -> None:
    provider = ScriptedProvider(
        write(tmp_path, "s.yaml", '- {text: "partial", error: {status: 500, message: "cut"}}\n')
    )
    seen: list[str] = []
    with pytest.raises(ProviderError, match="cut"):
        async for event in provider.stream(simple_request()):
            if isinstance(event, TextDelta):
                seen.append(event.text)
    assert seen == ["partial"]


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        (
            "a.yaml",
            '- text: hi\n- {code: "x", tool: {name: t}}\n',
            "response 2: has both code and tool",
        ),
        ("b.yaml", "- {txt: hi}\n", "response 1: unknown key(s) txt"),
        ("c.yaml", "- {text: hi, chunk: 0}\n", "response 1: chunk must be an integer >= 1"),
        ("d.yaml", "- {text: hi, delay_ms: -5}\n", "response 1: delay_ms must be an integer >= 0"),
        ("e.yaml", "text: hi\n", "a script is a list of responses"),
        ("f.yaml", "- [1, 2\n", "not valid YAML"),
        ("g.json", '[{"text": 1}]', "response 1: text must be a string"),
        ("h.json", "[", "not valid JSON"),
        ("i.txt", "[]", "must be a .yaml, .yml or .json file"),
        ("j.yaml", "- tool: {arguments: {}}\n", "response 1: tool must be {name: ..."),
        ("k.yaml", "- usage: {input: -1}\n", "response 1: usage.input must be an integer >= 0"),
        ("l.yaml", "- usage: {tokens: 3}\n", "response 1: usage must be a mapping of input"),
        ("m.yaml", "- {code: x, error: {status: 500}}\n", "cannot also hold code or tool"),
        ("n.yaml", "- error: {status: 5}\n", "error.status must be an integer >= 100"),
        ("o.yaml", "- 42\n", "response 1: expected a mapping"),
    ],
)
def test_invalid_scripts_name_the_file_and_response(
    tmp_path: Path, name: str, text: str, message: str
) -> None:
    path = write(tmp_path, name, text)
    with pytest.raises(ScriptError) as failure:
        ScriptedProvider(path)
    assert str(path) in str(failure.value)
    assert message in str(failure.value)
    assert isinstance(failure.value, ProviderConfigError)


def test_missing_script_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ScriptError, match="cannot read the script .*nope.yaml"):
        load_tracks(tmp_path / "nope.yaml")


async def test_empty_response_ends_the_turn_without_text(tmp_path: Path) -> None:
    provider = ScriptedProvider(write(tmp_path, "s.yml", "- {}\n"))
    events = await collect(provider)
    assert [type(e) for e in events] == [UsageUpdate, ResponseDone]
    assert events[-1] == ResponseDone("end_turn")


def test_model_info_uses_the_table_and_overrides(tmp_path: Path) -> None:
    path = write(tmp_path, "s.yaml", "- text: hi\n")
    provider = ScriptedProvider(path, model_overrides={"fake": {"input_limit": 1000}})
    assert provider.model_info("fake").input_limit == 1000
    assert provider.model_info("other").input_limit == 128_000
    assert provider.model_info("claude-sonnet-4-5").input_price == 3.0
