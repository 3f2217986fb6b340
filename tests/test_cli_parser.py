"""``vis SUBCOMMAND …`` builds only that subcommand's parser; it parses as the whole one does."""

from __future__ import annotations

import pytest

from vis_core.cli import SUBCOMMANDS, build_parser


@pytest.mark.parametrize(
    "argv",
    [
        ["run", "--provider", "scripted", "--script", "s.yaml", "hi"],
        ["run", "--json", "--continue", "-C", "somewhere", "--toggles", "a=1", "do it"],
        ["run", "--resume", "abc", "--model", "anthropic/x", "more"],
        ["trust"],
        ["trust", "elsewhere"],
        ["doctor"],
        ["sessions", "a query"],
        ["settings", "get", "model"],
        ["settings", "set", "model", "x/y", "--scope", "session", "--session", "s1"],
        ["mcp", "list"],
    ],
)
def test_the_named_subcommand_alone_parses_as_the_whole_parser(argv: list[str]) -> None:
    assert argv[0] in SUBCOMMANDS
    assert vars(build_parser(argv[0]).parse_args(argv)) == vars(build_parser().parse_args(argv))


def test_every_subcommand_of_the_whole_parser_is_known() -> None:
    (commands,) = [a for a in build_parser()._actions if a.dest == "command"]
    assert tuple(commands.choices) == SUBCOMMANDS  # type: ignore[union-attr]
