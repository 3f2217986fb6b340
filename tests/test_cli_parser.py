"""``vis SUBCOMMAND …`` builds only that subcommand's parser, ``vis`` alone none of them; each
parses ``argv`` as the whole parser does."""

from __future__ import annotations

import pytest

from vis_core.cli import SUBCOMMANDS, build_parser, parsers_for


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


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["--continue"],
        ["--resume"],
        ["--version"],
        ["--resume", "abc"],
        ["--model", "anthropic/x"],
        ["-C", "somewhere", "run", "do it"],
        ["--toggles", "a=1", "trust"],
    ],
)
def test_the_parsers_chosen_for_argv_parse_it_as_the_whole_parser(argv: list[str]) -> None:
    only = parsers_for(argv)
    if argv == ["--version"]:  # prints and exits: the same text either way
        with pytest.raises(SystemExit):
            build_parser(only).parse_args(argv)
        return
    assert vars(build_parser(only).parse_args(argv)) == vars(build_parser().parse_args(argv))


def test_the_app_alone_builds_no_subcommand_parser_but_help_lists_them_all() -> None:
    assert parsers_for([]) == parsers_for(["--continue"]) == ""
    (commands,) = [a for a in build_parser("")._actions if a.dest == "command"]
    assert not commands.choices  # type: ignore[union-attr]
    assert parsers_for(["--help"]) is None
    assert parsers_for(["-h", "--continue"]) is None
    assert "run" in build_parser(parsers_for(["--help"])).format_help()
