"""vis.Setting declarations: ids, types, choices, parent, secrets, scopes, on_change, value()."""

from __future__ import annotations

from pathlib import Path

import pytest

import vis_core.extension as vis
from vis_core.extension.context import CallContext, calling
from vis_core.extension.runtime import OUTSIDE, RuntimeOverride
from vis_core.settings.core import CORE_SETTING_IDS


def test_spec_report_details_example_is_accepted() -> None:
    include_details = vis.Setting(
        id="report_details",
        label="Report details",
        default=False,
        scopes=["global", "project", "group", "session"],
        description="Include the supporting detail in reports.",
    )
    assert include_details.type == "boolean"
    assert include_details.scopes == ("global", "project", "group", "session")
    assert isinstance(include_details.scopes, tuple)
    assert include_details.value() is False


@pytest.mark.parametrize("good", ["model", "report_details", "a1", "x_2_y"])
def test_snake_case_ids_are_accepted(good: str) -> None:
    assert vis.Setting(id=good, label="L", default=True).id == good


@pytest.mark.parametrize(
    "bad", ["Report", "report-details", "_x", "x_", "a__b", "1x", "", "report details"]
)
def test_ids_that_are_not_lower_snake_case_are_rejected(bad: str) -> None:
    with pytest.raises(ValueError, match="lower-case snake_case"):
        vis.Setting(id=bad, label="L", default=True)


def test_boolean_is_the_default_type_and_needs_a_boolean_default() -> None:
    assert vis.Setting(id="flag", label="Flag", default=True).type is vis.SettingType.BOOLEAN
    with pytest.raises(ValueError, match="boolean setting needs default=True or default=False"):
        vis.Setting(id="flag", label="Flag", default="yes")
    with pytest.raises(ValueError, match="boolean setting"):
        vis.Setting(id="flag", label="Flag", default=1)


def test_enum_detail_level_example_is_accepted() -> None:
    detail_level = vis.Setting(
        id="report_detail_level",
        label="Detail level",
        type="enum",
        default="short",
        choices=["short", "full"],
        parent="report_details",
    )
    assert detail_level.choices == ("short", "full")
    assert detail_level.parent == "report_details"
    assert detail_level.value() == "short"


def test_enum_needs_choices_and_a_default_among_them() -> None:
    with pytest.raises(ValueError, match="needs string choices"):
        vis.Setting(id="mode", label="Mode", type="enum", default="a")
    with pytest.raises(ValueError, match="not one of its choices"):
        vis.Setting(id="mode", label="Mode", type="enum", default="c", choices=["a", "b"])
    with pytest.raises(ValueError, match="nonblank string"):
        vis.Setting(id="mode", label="Mode", type="enum", default="a", choices=["a", 2])
    with pytest.raises(ValueError, match="must not repeat"):
        vis.Setting(id="mode", label="Mode", type="enum", default="a", choices=["a", "a"])
    with pytest.raises(ValueError, match="list or tuple"):
        vis.Setting(id="mode", label="Mode", type="enum", default="a", choices="ab")


def test_choices_only_belong_to_enum() -> None:
    with pytest.raises(ValueError, match="choices belong to type='enum'"):
        vis.Setting(id="flag", label="Flag", default=False, choices=["a"])
    with pytest.raises(ValueError, match="choices belong to type='enum'"):
        vis.Setting(id="url", label="Url", type="string", default="", choices=["a"])


def test_unknown_type_is_rejected() -> None:
    with pytest.raises(ValueError, match="use 'boolean', 'enum' or 'string'"):
        vis.Setting(id="n", label="N", type="number", default=1)


def test_string_setting_strips_and_limits_its_default() -> None:
    server_url = vis.Setting(
        id="reports_server_url",
        label="Report server",
        type="string",
        default="  https://reports.example.com ",
    )
    assert server_url.default == "https://reports.example.com"
    assert server_url.value() == "https://reports.example.com"
    with pytest.raises(ValueError, match="the limit is 4096"):
        vis.Setting(id="s", label="S", type="string", default="x" * 4097)
    assert len(vis.Setting(id="s", label="S", type="string", default="x" * 4096).default) == 4096
    with pytest.raises(ValueError, match="control character"):
        vis.Setting(id="s", label="S", type="string", default="a\nb")
    with pytest.raises(ValueError, match="must be a string"):
        vis.Setting(id="s", label="S", type="string", default=3)


def test_coerce_checks_values_against_the_type() -> None:
    url = vis.Setting(id="s", label="S", type="string", default="")
    assert url.coerce("  host  ") == "host"
    with pytest.raises(ValueError, match="control character"):
        url.coerce("a\tb")
    # "no control characters, such as a line break": the C1 controls too (NEL ends a line, CSI
    # starts a terminal escape) and the Unicode line and paragraph separators
    for text in ("a\x85b", "a\x9b2Jb", "a\u2028b", "a\u2029b"):
        with pytest.raises(ValueError, match="control character"):
            url.coerce(text)
    assert url.coerce("café · naïve") == "café · naïve"
    mode = vis.Setting(id="m", label="M", type="enum", default="a", choices=["a", "b"])
    assert mode.coerce("b") == "b"
    with pytest.raises(ValueError, match="takes one of"):
        mode.coerce("c")
    flag = vis.Setting(id="f", label="F", default=False)
    with pytest.raises(ValueError, match="takes true or false"):
        flag.coerce("true")


def test_secret_token_example_is_accepted() -> None:
    server_token = vis.Setting(
        id="reports_server_token",
        label="Report server token",
        type="string",
        default="",
        is_secret=True,
    )
    assert server_token.is_secret and server_token.scopes == ("global",)


def test_secret_constraints_are_enforced() -> None:
    with pytest.raises(ValueError, match='needs default=""'):
        vis.Setting(id="tok", label="T", type="string", default="abc", is_secret=True)
    with pytest.raises(ValueError, match="only the 'global' scope"):
        vis.Setting(
            id="tok",
            label="T",
            type="string",
            default="",
            is_secret=True,
            scopes=["global", "project"],
        )
    with pytest.raises(ValueError, match="needs type='string'"):
        vis.Setting(id="tok", label="T", default=False, is_secret=True)


def test_scopes_default_to_global_and_accept_any_subset() -> None:
    assert vis.Setting(id="a", label="A", default=True).scopes == ("global",)
    assert vis.Setting(id="a", label="A", default=True, scopes=["session"]).scopes == ("session",)
    assert vis.Setting(id="a", label="A", default=True, scopes=("group", "project")).scopes == (
        "group",
        "project",
    )


def test_scopes_must_be_non_empty_known_and_duplicate_free() -> None:
    with pytest.raises(ValueError, match="must not be empty"):
        vis.Setting(id="a", label="A", default=True, scopes=[])
    with pytest.raises(ValueError, match="scope 'workspace' is unknown"):
        vis.Setting(id="a", label="A", default=True, scopes=["workspace"])
    with pytest.raises(ValueError, match="listed twice"):
        vis.Setting(id="a", label="A", default=True, scopes=["global", "global"])
    with pytest.raises(ValueError, match="list or tuple"):
        vis.Setting(id="a", label="A", default=True, scopes="global")


def test_steering_mode_example_with_on_change(tmp_path: Path) -> None:
    written = tmp_path / "steering-mode.txt"

    def record_mode(old: str, new: str, scope: str) -> None:
        written.write_text(new)

    steering_mode = vis.Setting(
        id="steering_mode",
        label="Steering mode",
        type="enum",
        default="vibe",
        choices=["vibe", "control"],
        scopes=["global", "project"],
        on_change=record_mode,
    )
    assert steering_mode.on_change is record_mode
    assert not written.exists()  # declaring never calls the hook
    with pytest.raises(ValueError, match="on_change must be a callable"):
        vis.Setting(id="m", label="M", default=True, on_change="record_mode")


def test_parent_must_be_another_setting_id() -> None:
    with pytest.raises(ValueError, match="its own parent"):
        vis.Setting(id="a", label="A", default=True, parent="a")
    with pytest.raises(ValueError, match="id of another setting"):
        vis.Setting(id="a", label="A", default=True, parent="Not An Id")


def test_label_and_description_are_checked() -> None:
    with pytest.raises(ValueError, match="label must be one nonblank line"):
        vis.Setting(id="a", label="  ", default=True)
    for label in ("Two\nlines", "Two\u2028lines", "Two\x85lines"):
        with pytest.raises(ValueError, match="label must be one nonblank line"):
            vis.Setting(id="a", label=label, default=True)
    with pytest.raises(ValueError, match="description must be a string"):
        vis.Setting(id="a", label="A", default=True, description=None)  # type: ignore[arg-type]


class _Saved(RuntimeOverride):
    """A runtime whose settings hold ``report_details = True``."""

    def setting_value(self, setting_id: str, default: object) -> object:
        return True if setting_id == "report_details" else default


def test_value_asks_the_runtime_of_the_running_call(tmp_path: Path) -> None:
    setting = vis.Setting(id="report_details", label="Report details", default=False)
    other = vis.Setting(id="other", label="Other", default=False)
    with calling(CallContext("s1", tmp_path, tmp_path, owner="reports", runtime=_Saved(OUTSIDE))):
        assert setting.value() is True
        assert other.value() is False
    assert setting.value() is False  # outside Vis: the declared default


def test_core_setting_ids_are_listed_once() -> None:
    assert CORE_SETTING_IDS == (
        "model",
        "jail",
        "introspection",
        "sessions_scope",
        "max_iterations",
        "summarize_steps",
        "theme",
        "extension_load_timeout",
        "block_time_limit",
        "memory_limit",
        "process_limit",
        "jail_home_writable",
        "jail_read_paths",
        "draft_model_approves",
        "network_allowed_hosts",
        "subagent_depth",
        "subagent_concurrency",
        "subagent_models",
    )
