"""Sessions and groups: create, look up by prefix, list, title, group, delete, turn pages."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from vis_core.events import AssistantMessage, TurnEnded, TurnStarted
from vis_core.store import Store, StoreError


def test_create_and_get_by_id_prefix_and_marker(store: Store, workspace: Path) -> None:
    session = store.create_session(workspace, workspace / "proj", title="Fix CI", group="work")
    assert len(session.id) == 32 and uuid.UUID(hex=session.id).version == 4
    assert (session.title, session.group, session.workspace) == ("Fix CI", "work", str(workspace))
    assert session.project_root == str(workspace / "proj")
    assert session.turn_count == 0 and session.forked_from is None
    assert store.get_session(session.id) == session
    assert store.get_session(session.id[:6]) == session
    assert store.get_session(f"vis_session_id#{session.id}") == session
    assert store.get_session("zz") is None
    assert store.get_session("") is None
    fork = store.create_session(workspace, workspace, forked_from=session.id)
    assert fork.forked_from == session.id


def test_ambiguous_prefix_is_an_error(store: Store) -> None:
    ids = {store.create_session("/w", "/w").id for _ in range(40)}
    firsts = [i[0] for i in ids]
    shared = next(c for c in firsts if firsts.count(c) > 1)
    with pytest.raises(StoreError, match="more than one session"):
        store.get_session(shared)


def test_list_sessions_newest_first_and_by_workspace(store: Store) -> None:
    a = store.create_session("/a", "/a", title="a")
    b = store.create_session("/b", "/b", title="b")
    c = store.create_session("/a", "/a", title="c")
    assert [s.id for s in store.list_sessions()] == [c.id, b.id, a.id]
    assert [s.id for s in store.list_sessions(workspace="/a")] == [c.id, a.id]
    assert [s.id for s in store.list_sessions(limit=1)] == [c.id]
    turn = uuid.uuid4().hex
    store.append(TurnStarted(a.id, turn_id=turn, position=0, request="again"))
    store.append(TurnEnded(a.id, turn_id=turn))
    assert store.list_sessions()[0].id == a.id
    latest = store.latest_session("/a")
    assert latest is not None and latest.id == a.id
    assert store.latest_session("/nowhere") is None


def test_title_and_group_changes(store: Store) -> None:
    session = store.create_session("/w", "/w")
    store.set_title(session.id, "Renamed")
    store.set_group(session.id, "release")
    row = store.get_session(session.id)
    assert row is not None and (row.title, row.group) == ("Renamed", "release")
    assert [g.name for g in store.groups()] == ["release"]
    store.set_group(session.id, None)
    row = store.get_session(session.id)
    assert row is not None and row.group is None
    store.set_group(session.id, "docs")
    assert [g.name for g in store.groups()] == ["docs", "release"]
    with pytest.raises(StoreError, match="no session"):
        store.set_title("missing", "x")
    with pytest.raises(ValueError, match="blank"):
        store.set_group(session.id, "  ")


def test_turns_page_reads_back_from_the_end(store: Store) -> None:
    sid = store.create_session("/w", "/w").id
    for position in range(45):
        store.append(
            TurnStarted(sid, turn_id=f"t{position}", position=position, request=f"r{position}")
        )
        store.append(AssistantMessage(sid, turn_id=f"t{position}", text=f"reply {position}"))
    last = store.turns_page(sid)
    assert [t.position for t in last] == list(range(25, 45))
    assert last[0].replies == ("reply 25",)
    older = store.turns_page(sid, before_position=25, limit=20)
    assert [t.position for t in older] == list(range(5, 25))
    assert [t.position for t in store.turns_page(sid, before_position=5)] == list(range(5))
    assert len(store.turns(sid)) == 45


def test_delete_session_removes_everything_of_it(store: Store) -> None:
    keep = store.create_session("/w", "/w", title="keep searching")
    gone = store.create_session("/w", "/w", title="gone searching")
    for session in (keep, gone):
        store.append(
            TurnStarted(session.id, turn_id=f"t-{session.id}", position=0, request="searching")
        )
        store.append(AssistantMessage(session.id, turn_id=f"t-{session.id}", text="searching"))
        store.add_prompt(session.id, "searching")
        store.set_override("session", session.id, "model", "x")
        store.save_sandbox_snapshot(session.id, {"vars": {}})
    assert store.delete_session(gone.id) is True
    assert store.delete_session(gone.id) is False
    assert store.get_session(gone.id) is None
    assert store.events(gone.id) == [] and store.turns(gone.id) == []
    assert store.prompts(gone.id) == []
    assert store.list_overrides("session", gone.id) == {}
    assert store.load_sandbox_snapshot(gone.id) is None
    assert [h.session.id for h in store.search_sessions("searching")] == [keep.id]
    assert len(store.events(keep.id)) == 2
