"""Prompt history, extension state, settings overrides, sandbox snapshots and attachments."""

from __future__ import annotations

from pathlib import Path

import pytest

from vis_core.model.attachments import Audience
from vis_core.store import Store, StoreError
from vis_core.store.rows import OverrideScope


def test_prompt_history_skips_consecutive_duplicates(store: Store) -> None:
    sid = store.create_session("/w", "/w").id
    other = store.create_session("/w", "/w").id
    assert store.add_prompt(sid, "fix the tests") is True
    assert store.add_prompt(sid, "fix the tests") is False
    assert store.add_prompt(sid, "   ") is False
    assert store.add_prompt(sid, "/goal ship it") is True
    assert store.add_prompt(sid, "fix the tests") is True
    assert store.add_prompt(other, "elsewhere") is True
    assert [p.text for p in store.prompts(sid)] == [
        "fix the tests",
        "/goal ship it",
        "fix the tests",
    ]
    assert [p.text for p in store.prompts(sid, limit=2)] == ["/goal ship it", "fix the tests"]
    assert [p.text for p in store.prompts(other)] == ["elsewhere"]


def test_extension_state_is_kept_per_extension(store: Store, db_path: Path) -> None:
    store.state_set("todo", "items", ["a", {"done": False, "n": 1.5}])
    store.state_set("todo", "count", 2)
    store.state_set("other", "count", 9)
    assert store.state_get("todo", "items") == ["a", {"done": False, "n": 1.5}]
    assert store.state_get("todo", "missing", "default") == "default"
    assert store.state_keys("todo") == ["count", "items"]
    assert store.state_items("other") == {"count": 9}
    store.state_set("todo", "count", None)  # None removes the key
    assert store.state_keys("todo") == ["items"]
    assert store.state_delete("todo", "items") is True
    assert store.state_delete("todo", "items") is False
    store.state_set("todo", "kept", True)
    store.close()
    with Store(db_path) as reopened:
        assert reopened.state_get("todo", "kept") is True
        assert reopened.state_clear("todo") == 1
        assert reopened.state_keys("todo") == []


@pytest.mark.parametrize("value", [object(), {1: "a"}, float("nan"), [b"bytes"]])
def test_state_refuses_values_that_are_not_plain_data(store: Store, value: object) -> None:
    with pytest.raises(ValueError, match="todo"):
        store.state_set("todo", "k", value)


def test_settings_overrides_by_scope_and_owner(store: Store) -> None:
    store.set_override(OverrideScope.GROUP, "release", "model", "claude")
    store.set_override("session", "s1", "model", "gpt")
    store.set_override("session", "s1", "limits.iterations", 12)
    assert store.list_overrides("group", "release") == {"model": "claude"}
    assert store.list_overrides("group", "s1") == {}
    assert store.list_overrides("session", "s1") == {"limits.iterations": 12, "model": "gpt"}
    store.set_override("session", "s1", "model", {"name": "x"})
    assert store.list_overrides("session", "s1")["model"] == {"name": "x"}
    assert store.delete_override("session", "s1", "model") is True
    assert store.delete_override("session", "s1", "model") is False
    with pytest.raises(ValueError):
        store.set_override("global", "x", "model", "y")


def test_a_session_s_settings_copied_onto_another_replace_its_own(store: Store) -> None:
    """One copy, in one commit, for a fork and a child session alike: the other session's
    values replace the target's own (one it had that the source has not is gone)."""
    store.set_override("session", "parent", "jail", True)
    store.set_override("session", "parent", "jail_read_paths", ["/opt"])
    store.set_override("session", "child", "jail", False)
    store.set_override("session", "child", "limits.iterations", 3)
    store.set_override("group", "child", "jail", False)  # a group's, named like the session
    store.copy_session_overrides("parent", "child")
    assert store.list_overrides("session", "child") == {"jail": True, "jail_read_paths": ["/opt"]}
    assert store.list_overrides("session", "parent") == {"jail": True, "jail_read_paths": ["/opt"]}
    assert store.list_overrides("group", "child") == {"jail": False}
    store.copy_session_overrides("nobody", "child")
    assert store.list_overrides("session", "child") == {}


def test_sandbox_snapshot_round_trip(store: Store) -> None:
    sid = store.create_session("/w", "/w").id
    assert store.load_sandbox_snapshot(sid) is None
    store.save_sandbox_snapshot(sid, {"helpers": ["def f(): pass"], "vars": {"n": 1}})
    store.save_sandbox_snapshot(sid, {"helpers": [], "vars": {"n": 2}})
    assert store.load_sandbox_snapshot(sid) == {"helpers": [], "vars": {"n": 2}}


def test_attachments_are_versioned_per_filename(store: Store, tmp_path: Path) -> None:
    sid = store.create_session("/w", "/w").id
    first = store.add_attachment(sid, "totals.csv", "text/csv", tmp_path / "a1", size=10)
    png = store.add_attachment(
        sid, "chart.png", "image/png", tmp_path / "p", kind="image", audience="model", label="Chart"
    )
    second = store.add_attachment(
        sid,
        "totals.csv",
        "text/csv",
        tmp_path / "a2",
        size=12,
        audience=Audience.USER,
        commentable=True,
        iteration_id="it-3",
    )
    assert (first.version, second.version, png.version) == (1, 2, 1)
    assert second.audience is Audience.USER and second.commentable
    assert second.iteration_id == "it-3" and second.path == str(tmp_path / "a2")
    assert png.kind == "image" and png.label == "Chart" and png.audience is Audience.MODEL
    assert [a.version for a in store.list_attachments(sid, "totals.csv")] == [1, 2]
    assert len(store.list_attachments(sid)) == 3
    assert store.get_attachment(sid, "totals.csv") == second
    assert store.get_attachment(sid, "totals.csv", version=1) == first
    assert store.get_attachment(sid, "totals.csv", version=-2) == first
    assert store.get_attachment(sid, "totals.csv", version=7) is None
    assert store.get_attachment(sid, png.id) == png
    assert store.get_attachment(sid, "nothing.txt") is None
    with pytest.raises(StoreError, match="counts back too far"):
        store.get_attachment(sid, "totals.csv", version=-3)
    with pytest.raises(ValueError):
        store.add_attachment(sid, "x", "text/plain", tmp_path, audience="everyone")
