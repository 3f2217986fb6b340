"""vis.Extension, vis.SlashCommand, vis.OpHook and register_extension rules."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

import vis_core.extension as vis
from vis_core.extension.declarations import (
    ENV_KEYS,
    CommandResult,
    callback_env,
    registering,
    standalone_registration,
    state_key_of,
)


def _prompt(env: dict[str, Any]) -> str:
    return "p"


def test_extension_arguments_are_keyword_only() -> None:
    with pytest.raises(TypeError):
        vis.Extension("acme", "Acme integration.")  # type: ignore[misc]


def test_minimal_extension_and_defaults() -> None:
    ext = vis.Extension(name="acme", description="Acme integration.", env=["ACME_API_KEY"])
    assert ext.alias is None and ext.prompt is None and ext.activation is None
    assert ext.symbols == () and ext.slash_commands == () and ext.op_hooks == ()
    assert ext.network_filters == () and ext.providers == () and ext.grants == ()
    assert ext.settings == () and ext.kind is None and ext.version is None
    assert ext.env == ("ACME_API_KEY",)


def test_collections_are_stored_as_tuples() -> None:
    setting = vis.Setting(id="acme_flag", label="Flag", default=False)
    command = vis.SlashCommand("acme", lambda ctx: "hi")
    hook = vis.OpHook(["patch"], lambda call: None)
    source_settings = [setting]
    ext = vis.Extension(
        name="acme",
        description="Acme.",
        settings=source_settings,
        slash_commands=[command],
        op_hooks=[hook],
        env=["A"],
    )
    source_settings.append(vis.Setting(id="other", label="O", default=True))
    assert ext.settings == (setting,)
    assert isinstance(ext.slash_commands, tuple) and isinstance(ext.op_hooks, tuple)
    assert isinstance(ext.env, tuple)


@pytest.mark.parametrize("name", ["", "has space", "-lead", "x" * 65, 3])
def test_bad_names_are_rejected(name: object) -> None:
    with pytest.raises(ValueError, match="extension name"):
        vis.Extension(name=name, description="D.")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "declare",
    [
        lambda end: vis.Extension(name="reports" + end, description="D."),
        lambda end: vis.Extension(name="e", description="D.", env=["ACME_API_KEY" + end]),
        lambda end: vis.SlashCommand("goal" + end, lambda ctx: "ok"),
        lambda end: vis.Setting(id="report_details" + end, label="Details", default=False),
        lambda end: vis.Setting(id="a", label="A", default=False, parent="report_details" + end),
        lambda end: vis.plaintext("query" + end),
        lambda end: vis.mcp_server("docs" + end, {"url": "https://example.com/mcp"}),
        lambda end: vis.NetworkFilter("audit" + end, lambda request: None),
        lambda end: vis.rewrite_headers({"X-Trace" + end: "1"}),
        lambda end: vis.rewrite_headers(remove=["Cookie" + end]),
        lambda end: vis.Provider("local" + end, (vis.ProviderModel("m"),), lambda request: None),
    ],
)
def test_a_name_does_not_end_in_a_line_break(declare: Any) -> None:
    """Each name rule is a pattern ending in '$', which re.match lets end before a final line
    break: 'reports\\n' passed as an extension name, 'X-Trace\\n' as a header name."""
    declare("")
    with pytest.raises(ValueError):
        declare("\n")


def test_names_from_the_spec_are_accepted() -> None:
    for name in ("reports", "visual-comparisons", "java-tools", "todo", "acme"):
        assert vis.Extension(name=name, description="D.").name == name


def test_description_is_required_and_one_line() -> None:
    with pytest.raises(ValueError, match="description must be a nonblank"):
        vis.Extension(name="a", description=" ")
    with pytest.raises(ValueError, match="one line"):
        vis.Extension(name="a", description="two\nlines")
    with pytest.raises(ValueError, match="one line"):
        vis.Extension(name="a", description="two\u2028lines")


def test_alias_must_be_an_identifier() -> None:
    assert vis.Extension(name="visual-comparisons", description="D.", alias="visual").alias == (
        "visual"
    )
    for bad in ("visual-comparisons", "class", "1x", "_private"):
        with pytest.raises(ValueError, match="alias"):
            vis.Extension(name="v", description="D.", alias=bad)


def test_prompt_is_text_or_a_callable() -> None:
    assert vis.Extension(name="a", description="D.", prompt="Use a.").prompt == "Use a."
    assert vis.Extension(name="a", description="D.", prompt=_prompt).prompt is _prompt
    with pytest.raises(ValueError, match="prompt must be text"):
        vis.Extension(name="a", description="D.", prompt=3)  # type: ignore[arg-type]


def test_activation_and_ctx_must_be_callables() -> None:
    ext = vis.Extension(name="a", description="D.", activation=lambda env: True, ctx=lambda e: {})
    assert callable(ext.activation) and callable(ext.ctx)
    with pytest.raises(ValueError, match="activation must be a callable"):
        vis.Extension(name="a", description="D.", activation=True)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="ctx must be a callable"):
        vis.Extension(name="a", description="D.", ctx={"a": 1})  # type: ignore[arg-type]


def test_a_state_only_ctx_names_one_key_with_at_most_the_session_id() -> None:
    ctx = lambda env: {}  # noqa: E731
    ext = vis.Extension(name="a", description="D.", ctx=ctx, ctx_state_key="s:{session_id}")
    assert state_key_of(ext, "abc") == "s:abc"
    assert state_key_of(vis.Extension(name="a", description="D.", ctx=ctx), "abc") is None
    assert vis.Extension(name="a", description="D.", ctx=ctx, ctx_state_key="list").ctx_state_key
    with pytest.raises(ValueError, match="declare ctx too"):
        vis.Extension(name="a", description="D.", ctx_state_key="list")
    for key, said in (
        ("", "nonblank string"),
        (3, "nonblank string"),
        ("s:{session}", "may hold only {session_id}"),
        ("s:{}", "may hold only {session_id}"),
        ("s:{session_id", "is not a key template"),
    ):
        with pytest.raises(ValueError, match=said):
            vis.Extension(name="a", description="D.", ctx=ctx, ctx_state_key=key)  # type: ignore[arg-type]


def test_collections_reject_strings_mappings_and_wrong_items() -> None:
    with pytest.raises(ValueError, match="env must be a list or tuple"):
        vis.Extension(name="a", description="D.", env="ACME_API_KEY")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="environment variable names"):
        vis.Extension(name="a", description="D.", env=["NOT-A-NAME"])
    with pytest.raises(ValueError, match=r"settings\[0\] is dict; use vis.Setting"):
        vis.Extension(name="a", description="D.", settings=[{"id": "x"}])  # type: ignore[list-item]
    with pytest.raises(ValueError, match=r"slash_commands\[0\] is str"):
        vis.Extension(name="a", description="D.", slash_commands=["todo"])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="op_hooks must be a list or tuple"):
        vis.Extension(name="a", description="D.", op_hooks={"patch": 1})  # type: ignore[arg-type]


def test_duplicate_settings_and_commands_inside_one_extension_are_rejected() -> None:
    s = vis.Setting(id="same", label="S", default=True)
    with pytest.raises(ValueError, match="setting id 'same' is declared twice"):
        vis.Extension(name="a", description="D.", settings=[s, s])
    c = vis.SlashCommand("todo", lambda ctx: "x")
    with pytest.raises(ValueError, match="/todo is declared twice"):
        vis.Extension(name="a", description="D.", slash_commands=[c, c])


def test_kind_and_version_are_display_text() -> None:
    ext = vis.Extension(name="a", description="D.", kind="tools", version="1.2")
    assert (ext.kind, ext.version) == ("tools", "1.2")
    with pytest.raises(ValueError, match="version must be a nonblank string"):
        vis.Extension(name="a", description="D.", version=1)  # type: ignore[arg-type]


def test_grants_are_checked() -> None:
    grant = vis.Grant("~/.m2", reason="maven builds")
    assert vis.Extension(name="a", description="D.", grants=[grant]).grants == (grant,)
    with pytest.raises(ValueError, match=r"grants\[0\] is str; use vis.Grant"):
        vis.Extension(name="a", description="D.", grants=["~/.m2"])  # type: ignore[list-item]


def test_slash_command_declaration() -> None:
    command = vis.SlashCommand("todo", lambda ctx: "ok", doc="Show todos.", usage="/todo [add …]")
    assert (command.doc, command.usage, command.saveable) == ("Show todos.", "/todo [add …]", False)
    assert vis.SlashCommand("goal", lambda ctx: "x", saveable=True).saveable is True
    with pytest.raises(ValueError, match="without the leading '/'"):
        vis.SlashCommand("/todo", lambda ctx: "x")
    with pytest.raises(ValueError, match="lower-case letters"):
        vis.SlashCommand("To Do", lambda ctx: "x")
    with pytest.raises(ValueError, match="run must be a callable"):
        vis.SlashCommand("todo", "run")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="saveable must be True or False"):
        vis.SlashCommand("todo", lambda ctx: "x", saveable="yes")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="usage must be one line"):
        vis.SlashCommand("todo", lambda ctx: "x", usage="a\nb")
    with pytest.raises(ValueError, match="usage must be one line"):
        vis.SlashCommand("todo", lambda ctx: "x", usage="a\x85b")


def test_ok_err_and_plain_string_results() -> None:
    expected = CommandResult(True, "Added", "**1** item", {"n": 1})
    assert vis.ok("Added", "**1** item", {"n": 1}) == expected
    assert vis.err("Nope").ok is False
    assert CommandResult.of("Done") == CommandResult(True, "Done")
    with pytest.raises(TypeError, match="return vis.ok"):
        CommandResult.of(3)
    with pytest.raises(ValueError, match="nonblank title"):
        vis.ok("")


def test_op_hook_declaration() -> None:
    hook = vis.OpHook("patch", lambda call: None)
    assert hook.ops == ("patch",) and hook.phase == "before"
    assert vis.OpHook(["patch", "python_execution"], print, phase="after").phase == "after"
    with pytest.raises(ValueError, match="use 'before' or 'after'"):
        vis.OpHook(["patch"], print, phase="during")
    with pytest.raises(ValueError, match="at least one operation"):
        vis.OpHook([], print)
    with pytest.raises(ValueError, match="fn must be a callable"):
        vis.OpHook(["patch"], None)  # type: ignore[arg-type]


def test_callback_env_holds_exactly_the_documented_keys(tmp_path: Path) -> None:
    env = callback_env(
        workspace_root=tmp_path, project_root=tmp_path / "p", session_id="s1", channel="tui"
    )
    keys = ("cwd", "workspace_root", "project_root", "session_id", "channel")
    assert tuple(env) == ENV_KEYS == keys
    assert env["cwd"] == env["workspace_root"] == str(tmp_path)
    assert env["project_root"] == str(tmp_path / "p")


def test_register_once_per_entry_file(tmp_path: Path) -> None:
    first = vis.Extension(name="a", description="D.")
    with registering(tmp_path / "a.py") as registration:
        vis.register_extension(first)
        with pytest.raises(RuntimeError, match="twice.*call it once per entry file"):
            vis.register_extension(vis.Extension(name="b", description="D."))
    assert registration.declaration is first


def test_register_needs_an_extension() -> None:
    with pytest.raises(TypeError, match=r"expects vis.Extension\(...\)"):
        vis.register_extension({"name": "a"})  # type: ignore[arg-type]


def test_register_outside_vis_keeps_the_declaration_for_tests() -> None:
    ext = vis.Extension(name="a", description="D.")
    vis.register_extension(ext)
    assert standalone_registration(__name__) is ext


def test_register_resolves_declared_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ACME_API_KEY", "before")
    monkeypatch.delenv("UNDECLARED", raising=False)
    with registering(tmp_path / "a.py", {"ACME_API_KEY": "k1", "UNDECLARED": "x"}):
        vis.register_extension(vis.Extension(name="acme", description="D.", env=["ACME_API_KEY"]))
    assert os.environ["ACME_API_KEY"] == "k1"
    assert "UNDECLARED" not in os.environ


def _report() -> str:
    """Prepare a report."""
    return "Summary"


def test_symbols_need_an_alias_and_symbol_declarations() -> None:
    symbol = vis.Symbol(_report, name="report", activity=vis.Activity(label="Prepare report"))
    ext = vis.Extension(name="reports", alias="reports", description="D.", symbols=[symbol])
    assert ext.symbols == (symbol,)
    with pytest.raises(ValueError, match="an extension with symbols needs an alias"):
        vis.Extension(name="reports", description="D.", symbols=[symbol])
    with pytest.raises(ValueError, match=r"symbols\[0\] is function; use vis.Symbol"):
        vis.Extension(name="reports", alias="reports", description="D.", symbols=[_report])


def test_bundled_entry_file_can_be_imported_outside_vis() -> None:
    import importlib

    module = importlib.import_module("vis_extensions.git")
    declaration = standalone_registration(module.__name__)
    assert declaration is not None and declaration.name == "git" and declaration.alias == "git"
