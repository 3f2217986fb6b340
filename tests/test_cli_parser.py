"""``vis SUBCOMMAND …`` builds only that subcommand's parser, ``vis`` alone none of them; each
parses ``argv`` as the whole parser does."""

from __future__ import annotations

import argparse

import pytest

from vis_core.cli import SUBCOMMANDS, build_parser, main, parsers_for


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
    assert _parsed(build_parser(argv[0]), argv) == _parsed(build_parser(), argv)


def _parsed(parser: argparse.ArgumentParser, argv: list[str]) -> dict[str, object]:
    """What ``parser`` makes of ``argv``, but the parser object of its command."""
    return {k: v for k, v in vars(parser.parse_args(argv)).items() if k != "command_parser"}


@pytest.mark.parametrize(
    ("argv", "usage"),
    [
        (["run", "--bogus", "x"], "usage: vis run [-h] [--json]"),
        (["--bogus"], "usage: vis [-h]"),
        (["sessions", "q", "--bogus"], "usage: vis sessions [-h]"),
    ],
)
def test_an_unknown_option_is_said_with_the_usage_of_its_command(
    argv: list[str], usage: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """``vis run --bogus x`` printed the top parser's usage, whose command list held only
    ``{run}`` (the only parser built), or ``{}`` for ``vis --bogus``."""
    with pytest.raises(SystemExit) as ended:
        main(argv)
    err = capsys.readouterr().err
    assert ended.value.code == 2
    assert err.startswith(usage) and "unrecognized arguments: --bogus" in err, err
    assert "{run}" not in err and "{}" not in err


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
def test_the_parsers_chosen_for_argv_parse_it_as_the_whole_parser(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    only = parsers_for(argv)
    if argv == ["--version"]:  # prints and exits 0 (not 2, an unknown option): as the whole
        from vis_core import __version__

        for parser in (build_parser(only), build_parser()):
            with pytest.raises(SystemExit) as ended:
                parser.parse_args(argv)
            assert (ended.value.code, capsys.readouterr().out) == (0, f"vis {__version__}\n")
        return
    assert _parsed(build_parser(only), argv) == _parsed(build_parser(), argv)


def test_the_app_alone_builds_no_subcommand_parser_but_help_lists_them_all() -> None:
    assert parsers_for([]) == parsers_for(["--continue"]) == ""
    (commands,) = [a for a in build_parser("")._actions if a.dest == "command"]
    assert not commands.choices  # type: ignore[union-attr]
    assert parsers_for(["--help"]) is None
    assert parsers_for(["-h", "--continue"]) is None
    assert "run" in build_parser(parsers_for(["--help"])).format_help()


def test_vis_mcp_add_help_shows_where_the_servers_command_goes(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Its usage was ``vis mcp add [-h] [-l] [--env K=V] … name``: nothing said that the
    server's command goes after ``--``, and four options had no words."""
    with pytest.raises(SystemExit):
        main(["mcp", "add", "--help"])
    out = capsys.readouterr().out
    assert out.startswith("usage: vis mcp add [-l] NAME [--env K=V]… [--cwd DIR] -- CMD ARGS…\n")
    assert "vis mcp add [-l] NAME --url URL" in out
    for option in ("NAME", "--env K=V", "--url URL", "--header K=V"):  # each says what it is
        (line,) = [line.strip() for line in out.splitlines() if line.strip().startswith(option)]
        assert line != option, line
