"""``vis mcp add/remove/list`` from a shell: JSON edits keep unrelated content, exit codes."""

from __future__ import annotations

import json
import os
import select
import sys
from pathlib import Path

import pytest

from vis_core.cli import main

from .conftest import http_entry, write_config
from .oauth_fixture import free_port


def _read(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def test_add_and_remove_keep_unrelated_content(
    vis_home: Path, workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_config(
        vis_home / "mcp.json",
        {"keep": {"command": "x", "autoApprove": ["a"]}},
        autoEnableCodemode=False,
    )
    code = main(
        ["-C", str(workspace), "mcp", "add", "fs", "--env", "K=${TOKEN}", "--", "npx", "-y", "pkg"]
    )
    assert code == 0
    assert "a running Vis starts it at /reload" in capsys.readouterr().out
    data = _read(path)
    assert data["autoEnableCodemode"] is False
    assert data["mcpServers"]["keep"] == {"command": "x", "autoApprove": ["a"]}
    assert data["mcpServers"]["fs"] == {
        "command": "npx",
        "args": ["-y", "pkg"],
        "env": {"K": "${TOKEN}"},
    }
    assert path.stat().st_mode & 0o777 == 0o600
    code = main(
        [
            "-C", str(workspace), "mcp", "add", "docs", "--url", "https://example.com/mcp",
            "--header", "X-Team=core", "--bearer-token-env-var", "DOCS_TOKEN",
        ]
    )  # fmt: skip
    assert code == 0
    assert _read(path)["mcpServers"]["docs"] == {
        "url": "https://example.com/mcp",
        "headers": {"X-Team": "core", "Authorization": "Bearer ${DOCS_TOKEN}"},
    }
    assert main(["-C", str(workspace), "mcp", "add", "fs", "--", "other"]) == 1
    assert "already defines server 'fs'" in capsys.readouterr().err
    assert main(["-C", str(workspace), "mcp", "remove", "fs"]) == 0
    assert set(_read(path)["mcpServers"]) == {"keep", "docs"}
    assert main(["-C", str(workspace), "mcp", "remove", "fs"]) == 1
    assert "defines no server 'fs'" in capsys.readouterr().err


def test_add_usage_errors_exit_2(workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["-C", str(workspace), "mcp", "add", "bad name", "--", "x"]) == 2
    assert main(["-C", str(workspace), "mcp", "add", "s"]) == 2
    assert "give the server's command after --" in capsys.readouterr().err
    assert main(["-C", str(workspace), "mcp", "add", "s", "--url", "x", "--", "cmd"]) == 2
    assert main(["-C", str(workspace), "mcp", "add", "s", "--header", "A=b", "--", "x"]) == 2


def test_add_refuses_a_shell_string_and_two_authorization_headers(
    vis_home: Path, workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["-C", str(workspace), "mcp", "add", "c", "--", "npx -y foo"]) == 2
    assert "not a shell command string" in capsys.readouterr().err
    argv = ["-C", str(workspace), "mcp", "add", "d", "--url", "https://h/mcp"]
    assert main([*argv, "--header", "Authorization=Bearer x", "--bearer-token-env-var", "T"]) == 2
    assert "not both" in capsys.readouterr().err
    assert main(["-C", str(workspace), "mcp", "add", "e", "--url", "https://h", "--cwd", "."]) == 2
    assert not (vis_home / "mcp.json").exists()


def test_add_notes_what_a_relative_argument_of_your_own_server_names(
    vis_home: Path, workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fs = ["-C", str(workspace), "mcp", "add", "fs", "--", "npx", "-y", "server-filesystem", "."]
    assert main(fs) == 0
    assert "'.' names that folder" in capsys.readouterr().err
    assert main(["-C", str(workspace), "mcp", "add", "here", "--cwd", ".", "--", "npx", "."]) == 0
    assert "names that folder" not in capsys.readouterr().err
    assert _read(vis_home / "mcp.json")["mcpServers"]["here"]["cwd"] == "."


def test_local_writes_the_project_file(vis_home: Path, workspace: Path) -> None:
    (workspace / ".vis").mkdir()
    assert main(["-C", str(workspace), "mcp", "add", "-l", "tools", "--", "uvx", "tools"]) == 0
    assert _read(workspace / ".vis" / "mcp.json")["mcpServers"]["tools"]["command"] == "uvx"
    assert not (vis_home / "mcp.json").exists()


def test_list_connects_and_reports_state_tools_and_exposure(
    vis_home: Path, workspace: Path, capsys: pytest.CaptureFixture[str], http_server: str
) -> None:
    write_config(
        vis_home / "mcp.json",
        {
            "fixture": http_entry(
                http_server,
                toolExposure={"echo": "direct", "die": "hidden", "do_thing": "direct"},
            ),
            "off": {"command": "nothing", "enabled": False},
        },
    )
    assert main(["-C", str(workspace), "mcp", "list"]) == 0
    out = capsys.readouterr().out
    assert "fixture  connected  10 tools  codemode  user" in out
    assert "  mcp__fixture__echo  direct" in out and "  mcp__fixture__die  hidden" in out
    assert "mcp__fixture__weather" not in out  # same exposure as its server
    assert "off  disabled" in out
    # a key that names no tool (Vis's name instead of the server's) is pointed out
    assert "note: toolExposure 'do_thing' matches no tool of 'fixture'; the server calls it" in out


def test_list_exits_1_on_invalid_entries_and_failed_servers(
    vis_home: Path,
    workspace: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    crash = "import sys; print('config missing: set API_URL', file=sys.stderr); sys.exit(4)"
    write_config(
        vis_home / "mcp.json",
        {
            "crash": {"command": sys.executable, "args": ["-c", crash], "timeout": 7},
            "legacy": {"type": "sse", "url": "http://localhost/sse"},
        },
    )
    master, follower = os.openpty()  # stderr on a terminal: the wait is said there
    with os.fdopen(follower, "w") as terminal:
        monkeypatch.setattr(sys, "stderr", terminal)
        assert main(["-C", str(workspace), "mcp", "list"]) == 1
    # it printed nothing until the slowest server answered or reached its timeout (60 s)
    assert select.select([master], [], [], 0)[0], "nothing on the terminal"
    assert os.read(master, 4096) == "Connecting to 1 server (a slow one up to 7 s)…\r\n".encode()
    os.close(master)
    out = capsys.readouterr().out
    assert "crash  failed" in out
    assert "config missing: set API_URL" in out  # the stderr tail
    assert "invalid: server 'legacy'" in out and "/mcp instead of /sse" in out


def test_list_says_nothing_answers_at_an_http_servers_address(
    vis_home: Path, workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An HTTP server that is not running said only "ConnectError: All connection attempts
    failed"; it names where nothing answered (without the URL's credentials)."""
    port = free_port()  # nothing listens on it
    write_config(vis_home / "mcp.json", {"down": {"url": f"http://alice:pw@127.0.0.1:{port}/mcp"}})
    assert main(["-C", str(workspace), "mcp", "list"]) == 1
    out = capsys.readouterr().out
    assert f"nothing answers at 127.0.0.1:{port}: is the server running? (ConnectError" in out
    assert "alice" not in out and "pw@" not in out


def test_list_http_needs_sign_in_and_accepts_a_bearer_token(
    vis_home: Path,
    workspace: Path,
    http_server: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A server refusing the Authorization header of its entry showed "needs sign-in", which
    `vis mcp login` then refused (OAuth is for servers without the header): it fails, and
    says the header was refused."""
    write_config(vis_home / "mcp.json", {"locked": {"url": f"{http_server}/auth/mcp"}})
    assert main(["-C", str(workspace), "mcp", "list"]) == 1
    out = capsys.readouterr().out
    assert "locked  needs sign-in" in out and "run `vis mcp login locked`" in out
    assert "bearer" not in out.lower()  # a 401 leads to the sign-in, not to a token
    headers = {"Authorization": "Bearer wrong-token"}
    write_config(
        vis_home / "mcp.json", {"locked": {"url": f"{http_server}/auth/mcp", "headers": headers}}
    )
    assert main(["-C", str(workspace), "mcp", "list"]) == 1
    out = capsys.readouterr().out  # signing in would not replace the header: no sign-in
    assert "locked  failed" in out, out
    assert (
        "error: the server refused its Authorization header (401 Unauthorized): check the token "
        "it sends, or remove the header to sign in with OAuth (`vis mcp login locked`)"
    ) in out
    (vis_home / "mcp.json").unlink()
    monkeypatch.setenv("SESAME", "sesame")
    url = f"{http_server}/auth/mcp"
    assert main(["-C", str(workspace), "mcp", "add", "locked", "--url", url,
                 "--bearer-token-env-var", "SESAME"]) == 0  # fmt: skip
    assert main(["-C", str(workspace), "mcp", "list"]) == 0
    assert "locked  connected  10 tools" in capsys.readouterr().out


def test_list_skips_an_untrusted_project_and_says_so(
    vis_home: Path, workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_config(workspace / ".vis" / "mcp.json", {"p": {"command": "x"}})
    assert main(["-C", str(workspace), "mcp", "list"]) == 0
    out = capsys.readouterr().out
    assert "the project is not trusted" in out and "vis trust" in out


DECLARING = """
import vis_core.extension as vis

vis.register_extension(vis.Extension(
    name="declarer", alias="declarer", description="Declares an MCP server.",
    mcp_servers=[vis.mcp_server("fromext", {config!r})],
))
"""


def test_list_includes_servers_an_extension_declares(
    vis_home: Path, workspace: Path, capsys: pytest.CaptureFixture[str], http_server: str
) -> None:
    """``/mcp`` shows a server a user extension declares; ``vis mcp list`` lists the same,
    connected like a configured one and marked as the extension's, with no mcp.json at all."""
    (vis_home / "extensions").mkdir()
    source = DECLARING.replace("{config!r}", repr(http_entry(http_server)))
    (vis_home / "extensions" / "declarer.py").write_text(source, encoding="utf-8")
    assert main(["-C", str(workspace), "mcp", "list"]) == 0
    out = capsys.readouterr().out
    assert "No MCP servers are configured" not in out
    assert "fromext  connected  10 tools  codemode  extension (declarer)" in out


SHADOWED = """
import vis_core.extension as vis

vis.register_extension(vis.Extension(
    name="declarer", alias="declarer", description="Declares MCP servers.",
    mcp_servers=[vis.mcp_server("fromext", {config!r}), vis.mcp_server("shadowed", {config!r})],
))
"""


def test_list_marks_servers_extensions_add_and_the_ones_a_file_overrides(
    vis_home: Path, workspace: Path, capsys: pytest.CaptureFixture[str], http_server: str
) -> None:
    (vis_home / "extensions").mkdir()
    source = SHADOWED.replace("{config!r}", repr(http_entry(http_server)))
    (vis_home / "extensions" / "declarer.py").write_text(source, encoding="utf-8")
    mcp_file = write_config(
        vis_home / "mcp.json", {"shadowed": http_entry(http_server, enabled=False)}
    )
    assert main(["-C", str(workspace), "mcp", "list"]) == 0
    out = capsys.readouterr().out
    assert "fromext  connected  10 tools  codemode  extension (declarer)" in out
    assert (
        f"shadowed  overridden  extension (declarer): the user ({mcp_file}) entry of the same "
        "name wins"
    ) in out


CALLED = """
import vis_core.extension as vis

vis.mcp_server("extdemo", {config!r})
vis.register_extension(vis.Extension(name="mcpext", description="Adds MCP servers."))
vis.mcp_server("after", {config!r})
"""


def test_list_includes_a_server_an_entry_file_adds_by_calling_vis_mcp_server(
    vis_home: Path, workspace: Path, capsys: pytest.CaptureFixture[str], http_server: str
) -> None:
    """``vis.mcp_server(name, config)`` called in an entry file, as the README shows it (no
    ``mcp_servers=``), was dropped without a word: the extension loaded, no server was there.
    The server now belongs to the extension the file registers, before or after the call."""
    (vis_home / "extensions").mkdir()
    source = CALLED.replace("{config!r}", repr(http_entry(http_server)))
    (vis_home / "extensions" / "mcpext.py").write_text(source, encoding="utf-8")
    assert main(["-C", str(workspace), "mcp", "list"]) == 0
    out = capsys.readouterr().out
    assert "extdemo  connected  10 tools  codemode  extension (mcpext)" in out
    assert "after  connected  10 tools  codemode  extension (mcpext)" in out


NOISY = """
import runpy, sys
print("Welcome to noisy server v1.0", flush=True)
print("\\x1b[2Jready", flush=True)
runpy.run_path(sys.argv[2], run_name="__main__")
"""


def test_list_says_in_a_line_what_a_server_wrote_that_is_not_mcp(
    vis_home: Path, workspace: Path, tmp_path: Path
) -> None:
    """A stdio server that prints a banner before it serves: `vis mcp list` printed the SDK's
    'Failed to parse JSONRPC message from server' and a pydantic traceback per line on
    stderr (no logging was set up, so Python's last resort printed them). They now go to the
    day's log, as in a session, and one line under the server says what was skipped."""
    from cli_support import vis
    from warm_servers import command

    from .conftest import SERVER

    noisy = tmp_path / "noisy.py"
    noisy.write_text(NOISY, encoding="utf-8")
    program, *args = command(noisy, "stdio", str(SERVER))
    write_config(vis_home / "mcp.json", {"noisy": {"command": program, "args": args}})
    listed = vis("mcp", "list", cwd=workspace, env_home=vis_home)
    assert listed.returncode == 0, listed.stderr
    assert listed.stderr == ""
    lines = listed.stdout.splitlines()
    assert lines[0].startswith("noisy  connected  10 tools"), listed.stdout
    assert lines[1] == (
        "  note: 2 lines of its stdout were not MCP and skipped (a stdio server may write only "
        "MCP messages there); the first: 'Welcome to noisy server v1.0'"
    )
    (log,) = (vis_home / "logs").glob("*/vis.log")
    assert "MCP server noisy wrote a line to its stdout that is no MCP message (skipped): " in (
        log.read_text()
    )


FLOOD = """
import runpy, sys
for n in range(2000):
    print(f"log line {n} " + "x" * 100)
sys.stdout.flush()
runpy.run_path(sys.argv[2], run_name="__main__")
"""


def test_a_server_flooding_its_stdout_writes_a_few_lines_to_the_log(
    vis_home: Path, workspace: Path, tmp_path: Path
) -> None:
    """A server printing 50,000 lines to its stdout before it served wrote the SDK's record
    and pydantic traceback of each to ``vis.log``: 48 MB at every start. The first three are
    logged, a line each, and at the end how many there were."""
    from cli_support import vis
    from warm_servers import command

    from .conftest import SERVER

    flood = tmp_path / "flood.py"
    flood.write_text(FLOOD, encoding="utf-8")
    program, *args = command(flood, "stdio", str(SERVER))
    write_config(vis_home / "mcp.json", {"flood": {"command": program, "args": args}})
    listed = vis("mcp", "list", cwd=workspace, env_home=vis_home)
    assert listed.returncode == 0, listed.stderr
    assert "2,000 lines of its stdout were not MCP and skipped" in listed.stdout
    (log,) = (vis_home / "logs").glob("*/vis.log")
    lines = log.read_text().splitlines()
    assert len(lines) == 4, lines[:10]
    assert "(skipped): 'log line 0 xxx" in lines[0] and "log line 2 " in lines[2]
    assert lines[2].endswith("; further ones are counted")
    assert lines[3].endswith(
        "MCP server flood wrote 2,000 lines to its stdout that were no MCP message (skipped; "
        "the first 3 are logged above)"
    )


def test_the_persons_own_local_edit_keeps_a_trusted_project_trusted(
    vis_home: Path, workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`vis mcp add -l` / `remove -l` in a trusted project keep it trusted, as a project
    setting saved with `vis settings set` does; a control file changed by something else
    meanwhile still takes the trust back."""
    from vis_core.paths import TrustStore, VisPaths

    assert main(["trust", str(workspace)]) == 0
    args = ["-C", str(workspace), "settings", "set", "max_iterations", "10", "--scope", "project"]
    assert main(args) == 0
    get = ["-C", str(workspace), "settings", "get", "max_iterations"]
    trust = TrustStore(VisPaths.from_env())
    capsys.readouterr()
    assert main(["-C", str(workspace), "mcp", "add", "-l", "tools", "--", "uvx", "tools"]) == 0
    assert trust.is_trusted(workspace)
    assert main(get) == 0 and capsys.readouterr().out.splitlines()[-1] == "10"
    assert main(["-C", str(workspace), "mcp", "remove", "-l", "tools"]) == 0
    assert trust.is_trusted(workspace)
    assert main(get) == 0 and capsys.readouterr().out.splitlines()[-1] == "10"
    (workspace / "vis.yml").write_text("environment:\n  PLANTED: 1\n")  # not the person's edit
    assert main(["-C", str(workspace), "mcp", "add", "-l", "tools", "--", "uvx", "tools"]) == 0
    assert not trust.is_trusted(workspace)
    assert main(get) == 0 and capsys.readouterr().out.splitlines()[-1] == "50"


def test_list_redacts_a_key_written_in_the_file_as_it_is(vis_home: Path, workspace: Path) -> None:
    """A server's env named like a key is a secret also when mcp.json holds the value itself
    (not ``${VAR}``): what the server prints of it is redacted in `vis mcp list`."""
    from cli_support import vis

    leak = workspace / "leak.py"
    leak.write_text(
        "import os, sys\n"
        "print('my key is', os.environ['MY_API_KEY'], 'and tok', os.environ['GH_TOKEN'],"
        " file=sys.stderr)\n"
        "sys.exit(3)\n"
    )
    env = ["--env", "MY_API_KEY=sk-literal-secret-123456", "--env", "GH_TOKEN=${GH_TOKEN}"]
    added = vis("mcp", "add", "leak", *env, "--", sys.executable, str(leak), cwd=workspace,
                env_home=vis_home)  # fmt: skip
    assert added.returncode == 0, added.stderr
    token = {"GH_TOKEN": "ghp_from_the_environment_0123"}
    listed = vis("mcp", "list", cwd=workspace, env_home=vis_home, extra_env=token)
    assert listed.returncode == 1 and "leak  failed" in listed.stdout, listed.stdout
    assert "my key is [REDACTED] and tok [REDACTED]" in listed.stdout
    assert "sk-literal-secret-123456" not in listed.stdout + listed.stderr
