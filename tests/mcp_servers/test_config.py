"""mcp.json rules: names, transports, SSE, exposure, values, project over user, naming."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from vis_core.mcp.config import Exposure, Source, Transport, load_config, parse_entry
from vis_core.mcp.names import tool_names
from vis_core.mcp.values import ExpansionError, expand

from .conftest import write_config


def _entry(name: str, raw: object):
    return parse_entry(name, raw, source=Source.USER, origin="mcp.json")


def test_an_entry_copied_from_other_clients_works_unchanged() -> None:
    stdio = _entry(
        "fs",
        {
            "command": "npx",
            "args": ["-y", "@modelcontextprotocol/server-filesystem", "."],
            "env": {"K": "v"},
        },
    )
    assert stdio.transport is Transport.STDIO and stdio.args[-1] == "."
    assert stdio.timeout == 60 and stdio.enabled and stdio.exposure is Exposure.CODEMODE
    http = _entry(
        "docs",
        {
            "type": "streamable-http",
            "url": "https://example.com/mcp",
            "headers": {"Authorization": "Bearer ${DOCS_TOKEN}"},
            "description": "Search the docs",
            "timeout": 5,
            "enabled": False,
        },
    )
    assert http.transport is Transport.HTTP and http.headers[0][1] == "Bearer ${DOCS_TOKEN}"
    assert http.timeout == 5 and not http.enabled and http.description == "Search the docs"


@pytest.mark.parametrize(
    ("name", "raw", "message"),
    [
        ("bad name", {"command": "x"}, "letters, digits, '_' and '-'"),
        ("docs\n", {"command": "x"}, "letters, digits, '_' and '-'"),  # '$' let a \n end it
        ("s", {"type": "sse", "url": "http://h/sse"}, "commonly at /mcp instead of /sse"),
        ("s", {"type": "websocket", "url": "http://h"}, "stdio, http or streamable-http"),
        ("s", {"command": "x", "url": "http://h"}, "not both"),
        ("s", {}, "needs a 'command'"),
        ("s", {"type": "stdio", "url": "http://h"}, "does not match"),
        ("s", {"command": "x", "args": "-y pkg"}, "'args' must be a list of strings"),
        ("s", {"url": "ftp://h"}, "http:// or https://"),
        ("s", {"command": "x", "timeout": 0}, "positive number"),
        ("s", {"command": "x", "timeout": float("nan")}, "positive number"),  # json reads NaN
        ("s", {"command": "x", "timeout": float("inf")}, "positive number"),
        ("s", {"command": "x", "exposure": "loud"}, "codemode, deferred, direct, hidden"),
        ("s", {"command": "x", "enabled": "no"}, "true or false"),
        ("s", {"command": "x", "env": {"A": 1}}, "object of strings"),
        ("s", {"command": "npx -y pkg"}, "not a shell command string: put its arguments in 'args'"),
    ],
)
def test_invalid_entries_say_what_is_wrong(name: str, raw: object, message: str) -> None:
    with pytest.raises(ValueError, match=None) as info:
        _entry(name, raw)
    assert message in str(info.value)


def test_tool_exposure_exact_names_win_then_the_first_pattern() -> None:
    server = _entry(
        "gh",
        {
            "url": "https://h/mcp",
            "exposure": "deferred",
            "toolExposure": {
                "get_*": "codemode",
                "get_secret": "hidden",
                "*": "direct",
                "delete_*": "hidden",
            },
        },
    )
    assert server.exposure_of("get_secret") is Exposure.HIDDEN
    assert server.exposure_of("get_issue") is Exposure.CODEMODE
    assert server.exposure_of("delete_repo") is Exposure.DIRECT  # "*" came first
    assert _entry("a", {"command": "x", "exposure": "codemode-deferred"}).exposure == "codemode"


def test_files_project_replaces_user_and_bad_entries_are_skipped(tmp_path: Path) -> None:
    user = write_config(
        tmp_path / "home" / "mcp.json",
        {
            "docs": {"url": "https://user/mcp"},
            "dev-tools": {"command": "a"},
            "dev_tools": {"command": "b"},
            "broken": {"type": "sse", "url": "http://x/sse"},
            "ok": {"command": "c"},
        },
    )
    project = tmp_path / "proj"
    write_config(project / ".vis" / "mcp.json", {"docs": {"command": "project-docs"}})
    config = load_config(user, project, trusted=True)
    names = [s.name for s in config.servers]
    assert names == ["dev-tools", "ok", "docs"]
    assert config.get("docs").command == "project-docs"
    assert config.get("dev_tools").command == "a"  # '-' and '_' name the same server
    problems = "\n".join(str(p) for p in config.problems)
    assert "'dev_tools'" in problems and "same server" in problems
    assert "'broken'" in problems and "SSE" in problems
    untrusted = load_config(user, project, trusted=False)
    assert untrusted.get("docs").url == "https://user/mcp"


def test_a_file_that_is_not_json_is_one_problem(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text('{"mcpServers": {', encoding="utf-8")
    config = load_config(path, None, trusted=False)
    assert config.servers == () and "not valid JSON" in str(config.problems[0])
    write_config(path, [])  # type: ignore[arg-type]
    assert "must be an object" in str(load_config(path, None, trusted=False).problems[0])


def test_a_vs_code_file_says_where_its_entries_go(tmp_path: Path) -> None:
    path = write_config(tmp_path / "mcp.json", {})
    path.write_text('{"servers": {"fs": {"command": "npx"}}}', encoding="utf-8")
    config = load_config(path, None, trusted=False)
    assert config.servers == ()
    assert "top-level 'servers' object (VS Code's layout)" in str(config.problems[0])
    assert "move the entries under 'mcpServers'" in str(config.problems[0])


def test_the_notes_say_whether_an_entry_or_the_whole_file_was_skipped(
    tmp_path: Path, vis_home: Path
) -> None:
    from vis_core.mcp.manager import McpManager
    from vis_core.paths import VisPaths

    broken = tmp_path / "broken.json"
    broken.write_text('{"mcpServers": {', encoding="utf-8")
    one_bad = write_config(tmp_path / "one.json", {"bad name": {"command": "x"}})
    for path, said in ((broken, "the file was skipped"), (one_bad, "the entry was skipped")):
        config = load_config(path, None, trusted=False)
        manager = McpManager(config, workspace=tmp_path, paths=VisPaths.from_env())
        (note,) = manager.unreported("/mcp")
        assert note.endswith(said)


def test_a_command_that_is_a_path_with_spaces_is_one_executable() -> None:
    assert _entry("s", {"command": "/opt/My Tools/server"}).command == "/opt/My Tools/server"


def test_values_expand_variables_and_a_whole_value_command() -> None:
    env = {"TOKEN": "abc", "PATH": "/usr/bin:/bin"}
    assert expand("Bearer ${TOKEN}", "header", env) == "Bearer abc"
    assert expand("!echo Bearer $TOKEN", "header", env) == "Bearer abc"
    assert expand("a!b ${TOKEN}", "header", env) == "a!b abc"  # ! only as the whole value
    with pytest.raises(ExpansionError, match="MISSING is not set"):
        expand("${MISSING}", "env KEY", env)
    with pytest.raises(ExpansionError, match="the command failed"):
        expand("!exit 3", "env KEY", env)


def test_tool_names_replace_characters_and_hash_only_colliding_names() -> None:
    tools = ["search", "do.thing", "do-thing", "ünï"]
    names = {tool: name for (_, tool), name in tool_names(("dev-radius", t) for t in tools).items()}
    assert names["search"] == "mcp__dev_radius__search"
    assert names["do.thing"].startswith("mcp__dev_radius__do_thing_")
    assert names["do-thing"].startswith("mcp__dev_radius__do_thing_")
    assert names["do.thing"] != names["do-thing"]
    assert names["ünï"] == "mcp__dev_radius___n_"
    assert all(name.isidentifier() for name in names.values())


def test_tool_names_two_servers_make_alike_are_hashed_too() -> None:
    """Server ``a``'s ``b__c`` and server ``a__b``'s ``c``, server ``a``'s ``_x`` and server
    ``a_``'s ``x``: one name each pair, which failed every turn once both servers connected."""
    pairs = [("a", "b__c"), ("a__b", "c"), ("a", "_x"), ("a_", "x"), ("a", "d")]
    names = tool_names(pairs)
    assert len(set(names.values())) == len(pairs)
    assert names["a", "b__c"].startswith("mcp__a__b__c_")
    assert names["a__b", "c"].startswith("mcp__a__b__c_")
    assert names["a", "_x"].startswith("mcp__a___x_") and names["a_", "x"].startswith("mcp__a___x_")
    assert names["a", "d"] == "mcp__a__d"


def test_tool_names_past_the_apis_limit_are_cut_to_fit_and_stay_apart() -> None:
    """OpenAI and Anthropic refuse a tool name over 64 characters: a direct tool of a long
    server and tool name failed every request of the session with HTTP 400."""
    long = "add_pull_request_review_comment_to_pending_review"
    pairs = [("github-enterprise", long), ("github-enterprise", long + "_2"), ("gh", long)]
    names = tool_names(pairs)
    assert names["gh", long] == f"mcp__gh__{long}"  # 58 characters: kept whole
    cut = [names["github-enterprise", long], names["github-enterprise", long + "_2"]]
    assert all(len(name) == 64 and name.isidentifier() for name in cut)
    assert cut[0] != cut[1] and cut[0].startswith("mcp__github_enterprise__add_pull")
    assert tool_names(pairs) == names  # the same names every time


def test_stdio_entry_uses_one_executable() -> None:
    entry = _entry("py", {"command": sys.executable, "args": ["-V"], "cwd": "~/x"})
    assert entry.command == sys.executable and entry.cwd == "~/x"
