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
    assert hits[0].fields == ("title",) and hits[0].is_in_title
    assert hits[1].is_in_request and not hits[1].is_in_title
    assert hits[2].fields == ("reply",) and hits[2].is_in_reply
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
