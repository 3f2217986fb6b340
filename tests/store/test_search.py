"""Session search: FTS5 over titles, requests and replies, ranked title > request > reply."""

from __future__ import annotations

import uuid

from vis_core.events import AssistantMessage, TurnStarted
from vis_core.store import Store


def _session(store: Store, title: str, request: str, reply: str) -> str:
    sid = store.create_session("/w", "/w", title=title).id
    tid = uuid.uuid4().hex
    store.append(TurnStarted(sid, turn_id=tid, position=0, request=request))
    store.append(AssistantMessage(sid, turn_id=tid, text=reply))
    return sid


def test_title_matches_rank_before_requests_before_replies(store: Store) -> None:
    in_reply = _session(store, "Misc", "tidy up", "The release is tagged.")
    in_title = _session(store, "Release checklist", "what next", "ok")
    in_request = _session(store, "Chores", "prepare the release notes", "done")
    _session(store, "Unrelated", "nothing", "here")
    hits = store.search_sessions("release")
    assert [h.session.id for h in hits] == [in_title, in_request, in_reply]
    assert [h.rank for h in hits] == [1, 2, 3]
    assert hits[0].fields == ("title",)
    assert "request" in hits[1].fields and "title" not in hits[1].fields
    assert hits[2].fields == ("reply",)
    assert hits[0].snippet == "**Release** checklist"
    assert "**release**" in hits[2].snippets["reply"]
    assert [h.session.id for h in store.search_sessions("release", limit=2)] == [
        in_title,
        in_request,
    ]


def test_prefix_words_diacritics_and_all_fields(store: Store) -> None:
    sid = _session(store, "Café deploy", "deploy the café app", "Deployed café")
    hit = store.search_sessions("cafe depl")[0]
    assert hit.session.id == sid
    assert hit.fields == ("title", "request", "reply")
    assert store.search_sessions("") == []
    assert store.search_sessions('"*) OR (') == []
    assert store.search_sessions("zebra") == []


def test_title_change_updates_the_index(store: Store) -> None:
    sid = _session(store, "Old name", "a", "b")
    store.set_title(sid, "Fresh name")
    assert store.search_sessions("old") == []
    assert [h.session.id for h in store.search_sessions("fresh")] == [sid]


def test_thinking_ranks_after_replies_and_leaves_with_its_session(store: Store) -> None:
    from vis_core.events import AssistantThinking

    in_reply = _session(store, "A", "one", "the walrus is fine")
    in_thinking = _session(store, "B", "two", "ok")
    turn = store.turns(in_thinking)[0].id
    store.append(AssistantThinking(in_thinking, turn_id=turn, text="check the walrus config"))
    hits = store.search_sessions("walrus")
    assert [(h.session.id, h.fields) for h in hits] == [
        (in_reply, ("reply",)),
        (in_thinking, ("thinking",)),
    ]
    assert hits[1].snippet == "check the **walrus** config"
    assert store.delete_session(in_thinking)
    assert [h.session.id for h in store.search_sessions("walrus")] == [in_reply]
    with store._db.read("count") as conn:
        assert conn.execute("SELECT count(*) FROM search_thinking").fetchone() == (0,)
