"""Vis against a server that answers as vLLM's does: it refuses a prompt plus output limit
(max_tokens) beyond its context, so Vis asks for what the context leaves, learns from a
refusal how much that is, and tells a prompt too long apart from an output limit too large."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from vis_core.events import UsageReported
from vis_core.host import Host, HostOptions
from vis_core.model.conversation import TextDelta
from vis_core.model.turn import TurnStatus
from vis_core.providers.base import ContextOverflowError
from vis_core.providers.common import MIN_OUTPUT_TOKENS, estimate_tokens, request_chars
from vis_core.providers.errors import OutputLimitTooLarge, output_limit_refusal
from vis_core.providers.openai_provider import OpenAIProvider

from .samples import collect, providers, simple_request
from .vllm_server import VllmServer
from .wire_servers import openai_reply

# the provider SDKs are imported in the test process (anthropic ~2 s of CPU): on one worker
pytestmark = pytest.mark.xdist_group("sdk-imports")


def asking(output: int, text: str = "Say hi") -> Any:
    return replace(simple_request("qwen", text), max_tokens=output)


def answer(events: list[Any]) -> str:
    return "".join(e.text for e in events if isinstance(e, TextDelta))


@pytest.mark.parametrize("wording", ["old", "new"])
async def test_a_refused_output_limit_is_asked_again_with_what_the_context_leaves(
    wording: str,
) -> None:
    with VllmServer(2048, wording=wording, models=False) as vllm:
        vllm.reply(openai_reply("fits now"), openai_reply("fits at once"))
        async with providers(OpenAIProvider, api_key="", base_url=vllm.base_url) as make:
            provider = make()
            events = await collect(provider, asking(8192))
            prompt = vllm.prompt_tokens(vllm.wire.bodies[0])
            assert vllm.asked_output == [8192, 2048 - prompt]
            assert answer(events) == "fits now"
            # the context the refusal stated is known from now on: asked for up front
            assert provider.known_input_limit("qwen") == 2048
            later = await collect(provider, asking(8192))
    assert answer(later) == "fits at once"
    assert len(vllm.asked_output) == 3 and vllm.asked_output[2] < 2048  # refused no more


async def test_the_context_vllm_lists_caps_the_first_request() -> None:
    with VllmServer(4096) as vllm:
        vllm.reply(openai_reply("hello"))
        async with providers(OpenAIProvider, api_key="", base_url=vllm.base_url) as make:
            request = asking(8192, "Say hi. " * 200)
            events = await collect(make(), request)
    assert answer(events) == "hello"
    estimate = estimate_tokens(request_chars(request))
    assert MIN_OUTPUT_TOKENS < vllm.asked_output[0] < 4096 - estimate  # capped up front


async def test_an_output_limit_already_within_the_context_is_sent_as_asked() -> None:
    with VllmServer(32768) as vllm:
        vllm.reply(openai_reply("hello"))
        async with providers(OpenAIProvider, api_key="", base_url=vllm.base_url) as make:
            await collect(make(), asking(8192))
    assert vllm.asked_output == [8192]


@pytest.mark.parametrize("wording", ["old", "new"])
async def test_a_prompt_that_leaves_no_room_is_too_long_measured_by_its_messages(
    wording: str,
) -> None:
    with VllmServer(2048, wording=wording, models=False) as vllm:
        async with providers(OpenAIProvider, api_key="", base_url=vllm.base_url) as make:
            request = asking(8192, "word " * 1400)
            with pytest.raises(ContextOverflowError) as failure:
                await collect(make(), request)
    prompt = vllm.prompt_tokens(vllm.wire.bodies[0])
    assert 2048 - MIN_OUTPUT_TOKENS < prompt < 2048  # the messages fit, no answer would
    assert (failure.value.input_tokens, failure.value.limit) == (prompt, 2048)
    assert len(vllm.wire.requests) == 1


@pytest.mark.parametrize(
    ("message", "tokens", "limit"),
    [
        (  # OpenAI, with tool schemas counted apart
            "This model's maximum context length is 128000 tokens. However, you requested "
            "131000 tokens (120000 in the messages, 2808 in the functions, 8192 in the "
            "completion). Please reduce the length of the messages, functions, or completion.",
            122808,
            128000,
        ),
        (  # SGLang
            "Requested token count exceeds the model's maximum context length of 8192 tokens. "
            "You requested a total of 9469 tokens: 1277 tokens from the input messages and "
            "8192 tokens for the completion. Please reduce the number of tokens in the input "
            "messages or the completion to fit within the limit.",
            1277,
            8192,
        ),
        (  # Text Generation Inference
            "`inputs` tokens + `max_new_tokens` must be <= 8192. Given: 1277 `inputs` tokens "
            "and 8192 `max_new_tokens`",
            1277,
            8192,
        ),
        (  # Anthropic
            "input length and `max_tokens` exceed context limit: 195000 + 8192 > 200000, "
            "decrease input length or `max_tokens` and try again",
            195000,
            200000,
        ),
    ],
)
def test_other_servers_refusals_of_the_output_limit_are_read(
    message: str, tokens: int, limit: int
) -> None:
    refusal = output_limit_refusal("p", 400, {"error": {"message": message}})
    assert isinstance(refusal, OutputLimitTooLarge)
    assert (refusal.input_tokens, refusal.limit, refusal.room) == (tokens, limit, limit - tokens)


def configure(vis_home: Path, base_url: str) -> None:
    (vis_home / "config.toml").write_text(
        f'model = "local/qwen"\n[providers.local]\nkind = "openai"\nbase_url = "{base_url}"\n'
        'api_key_env = ""\n',
        encoding="utf-8",
    )


async def run_turns(workspace: Path, *requests: str) -> tuple[list[Any], list[Any]]:
    host = await Host.open(HostOptions(workspace=workspace))
    try:
        session = await host.new_session()
        events: list[Any] = []
        session.subscribe(events.append)
        return [await session.submit(r) for r in requests], events
    finally:
        await host.close()


@pytest.mark.parametrize("models", [True, False])
async def test_a_session_on_an_8k_vllm_is_answered(
    models: bool, vis_home: Path, workspace: Path
) -> None:
    with VllmServer(8192, models=models) as vllm:
        configure(vis_home, vllm.base_url)
        vllm.reply(openai_reply("Hello."), openai_reply("Again."))
        ended, events = await run_turns(workspace, "hi", "once more")
    assert [e.status for e in ended] == [TurnStatus.COMPLETED] * 2, ended[0].error
    assert [e.content for e in ended] == ["Hello.", "Again."]
    assert all(asked < 8192 for asked in vllm.asked_output[-2:])
    assert len(vllm.wire.requests) <= 3  # a refusal teaches how the server counts: once at most
    assert not [e for e in events if isinstance(e, UsageReported) and e.purpose == "rejected"]


async def test_a_conversation_filling_the_context_counts_its_messages_not_the_sum(
    vis_home: Path, workspace: Path
) -> None:
    with VllmServer(32768, models=False) as vllm:
        configure(vis_home, vllm.base_url)
        vllm.reply(openai_reply("Hello."), openai_reply("Folded."))
        host = await Host.open(HostOptions(workspace=workspace))
        try:
            session = await host.new_session()
            events: list[Any] = []
            session.subscribe(events.append)
            await session.submit("hi")
            # the next request's messages fit, but leave less than an answer needs
            vllm.max_model_len = vllm.prompt_tokens(vllm.wire.bodies[0]) + 600
            await session.submit("and again")
        finally:
            await host.close()
    refused = vllm.wire.bodies[1]
    rejected = [e for e in events if isinstance(e, UsageReported) and e.purpose == "rejected"]
    assert rejected, "the refusal was not measured"
    assert rejected[0].context_tokens == vllm.prompt_tokens(refused)  # not it + max_tokens
    assert rejected[0].context_tokens < vllm.max_model_len == rejected[0].context_limit
