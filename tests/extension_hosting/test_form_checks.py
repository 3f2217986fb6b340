"""A form's check is the extension's own function: Vis runs it in the worker while its event
loop waits for the answer, and the check may read the extension's setting from there (an SDK
call back to the host, served while the loop waits)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from vis_core.interaction import FormRequest

from .harness import code_turn, install_extension, open_host, run_turn, write_script

ASKER = '''
import vis_core.extension as vis
from vis_core.extension import forms as F

LIMIT = vis.Setting(id="name_limit", label="Longest name", type="string", default="3")


def short_enough(text: str) -> str | None:
    limit = int(LIMIT.value())
    return None if len(text) <= limit else f"at most {limit} letters"


def loud(text: str) -> str | None:
    if text.startswith("A"):
        vis.notify(f"checking {text}")  # shown on the loop, which waits for this check
    return None


def name() -> str:
    """Asks for a short name."""
    answer = vis.ask("Name?", [F.plaintext("name", validate=short_enough)])
    return answer["name"] if answer else answer.reason.value


def shout() -> str:
    """Asks with a check that notifies."""
    answer = vis.ask("Shout?", [F.plaintext("name", validate=loud)])
    return answer["name"] if answer else answer.reason.value


vis.register_extension(vis.Extension(
    name="asker", alias="asker", description="Asks.", settings=[LIMIT],
    symbols=[vis.Symbol(name), vis.Symbol(shout)],
))
'''


class _Typist:
    """A front end that types each value in turn, as a person does after a field's message."""

    def __init__(self, *values: str) -> None:
        self.values = list(values)
        self.messages: list[dict[str, str]] = []

    async def present(self, request: FormRequest) -> Mapping[str, Any]:
        for value in self.values:
            problems = request.form.check({"name": value})  # on the loop, as the TUI checks
            self.messages.append(problems)
            if not problems:
                return {"name": value}
        raise AssertionError("no value passed the check")


async def test_a_check_reads_its_setting_while_the_loop_waits_on_it(
    vis_home: Path, workspace: Path, script_path: Path
) -> None:
    install_extension(vis_home, "asker", ASKER)
    write_script(script_path, code_turn("print(await asker.name())"))
    host = await open_host(workspace, script_path)
    typist = _Typist("Alice", "Al")
    host.interaction.add_presenter(typist)
    try:
        outcome = await run_turn(host)
        (block,) = outcome.blocks
        assert block.error is None, block.error
        assert block.stdout.strip() == "Al"
        assert typist.messages == [{"name": "at most 3 letters"}, {}]
    finally:
        await host.close()


async def test_a_check_that_needs_the_loop_is_told_so_instead_of_hanging(
    vis_home: Path, workspace: Path, script_path: Path
) -> None:
    install_extension(vis_home, "asker", ASKER)
    write_script(script_path, code_turn("print(await asker.shout())"))
    host = await open_host(workspace, script_path)
    typist = _Typist("Al", "Bo")
    host.interaction.add_presenter(typist)
    try:
        outcome = await run_turn(host)
        (block,) = outcome.blocks
        assert block.error is None, block.error
        assert block.stdout.strip() == "Bo"  # the second value, after the first check failed
        (problems, passed) = typist.messages
        assert (
            "The check of this field failed: RuntimeError: vis notify waits on Vis's"
            in (problems["name"])
        )
        assert "make the call from the tool instead" in problems["name"] and passed == {}
    finally:
        await host.close()
