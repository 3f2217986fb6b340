"""vis run's asker: real prompt-toolkit prompts fed through a pipe; no terminal, no prompts."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path

import pytest
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from vis_core.ask_terminal import TerminalPresenter, install_terminal_asker
from vis_core.extension import forms as F
from vis_core.host import Host, HostOptions
from vis_core.interaction import FormRequest


def _request(*nodes: object, cancellable: bool = True) -> FormRequest:
    return FormRequest(
        "r1", F.Form("Deploy", tuple(nodes), is_cancellable=cancellable), None, "deploy"
    )


async def test_each_field_is_asked_and_wrong_values_asked_again() -> None:
    request = _request(
        F.heading("Target"),
        F.plaintext("service", is_required=True),
        F.select("env", options=["staging", "prod"]),
        F.multiselect("regions", options=["eu", "us", "ap"]),
        F.checkbox("confirm", is_required=True),
        F.slider("replicas", min=1, max=5),
        F.password("token", min_length=3),
        F.otp("code"),
    )
    with create_pipe_input() as pipe:
        for line in ["", "api", "9", "2", "3,1", "n", "y", "4", "ab", "s3cret", "12", "123456"]:
            pipe.send_text(line + "\r")
        values = await asyncio.wait_for(TerminalPresenter(pipe, DummyOutput()).present(request), 10)
    assert values is not None
    answer = request.form.answer(values)
    assert answer["service"] == "api" and answer["env"] == "prod"
    assert answer["regions"] == ["eu", "ap"] and answer["confirm"] is True
    assert answer["replicas"] == 4 and answer.reveal("token") == "s3cret"
    assert answer.reveal("code") == "123456"


async def test_ctrl_c_cancels() -> None:
    with create_pipe_input() as pipe:
        pipe.send_text("\x03")
        values = await asyncio.wait_for(
            TerminalPresenter(pipe, DummyOutput()).present(_request(F.plaintext("name"))), 10
        )
    assert values is None


class _Stream(io.StringIO):
    def __init__(self, tty: bool) -> None:
        super().__init__()
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


@pytest.mark.parametrize(("tty", "installed"), [(False, False), (True, True)])
async def test_the_asker_needs_a_terminal(workspace: Path, tty: bool, installed: bool) -> None:
    host = await Host.open(HostOptions(workspace=workspace, channel="cli"))
    try:
        assert (
            install_terminal_asker(host.interaction, stdin=_Stream(tty), stdout=_Stream(tty))
            is installed
        )
        if not installed:  # no terminal: a form is answered at once as undeliverable
            answer = await host.interaction.ask_async(_request(F.plaintext("x")).form, None, "t")
            assert answer.reason is F.AnswerReason.UNDELIVERABLE
    finally:
        await host.close()
