"""A secret too short to redact safely: refused when saved, and one saved before never
touches ids (a secret ``b`` or a PIN once turned a session id into ``…[REDACTED]…``)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from cli_support import script, vis

from vis_core.model_choices import check_key
from vis_core.store import Store

from .support import open_host, user_extensions

HEX_ID = re.compile(r"[0-9a-f]{32}")


def test_vis_run_keeps_ids_whole_with_a_one_letter_secret_and_a_pin(
    workspace: Path, vis_home: Path, tmp_path: Path
) -> None:
    # saved before Vis refused short secrets
    (vis_home / "secrets").write_text(json.dumps({"letter": "b", "pin": "1234"}))
    os.chmod(vis_home / "secrets", 0o600)
    answer = "abba said the PIN is 1234, not 12345"
    turn = script(tmp_path, [{"code": "print('block ran')"}, {"text": answer}])
    done = vis(
        "run",
        "--json",
        "--provider",
        "scripted",
        "--script",
        str(turn),
        "go",
        cwd=workspace,
        env_home=vis_home,
    )
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert events[-1]["type"] == "TurnEnded" and events[-1]["status"] == "completed"
    session_id = events[0]["session_id"]
    assert HEX_ID.fullmatch(session_id), session_id
    assert {e["session_id"] for e in events} == {session_id}
    turn_ids = {e["turn_id"] for e in events if "turn_id" in e}
    assert len(turn_ids) == 1 and HEX_ID.fullmatch(turn_ids.pop())
    # the PIN standing alone is redacted; inside words and numbers nothing changes
    assert events[-1]["content"] == "abba said the PIN is [REDACTED], not 12345"
    # the person is told, by the secret's name (never its value)
    assert "'pin' is 4 characters long" in done.stderr and "'letter'" in done.stderr
    store = Store(vis_home / "vis.db")
    try:
        [row] = store.list_sessions()
        assert row.id == session_id
        [turn_row] = store.turns(session_id)
        assert HEX_ID.fullmatch(turn_row.id)
        assert all(e.session_id == session_id for e in store.events(session_id))
    finally:
        store.close()
    assert "[REDACTED]" not in session_id


def test_vis_settings_set_refuses_a_three_character_secret(workspace: Path, vis_home: Path) -> None:
    user_extensions("reports")
    done = vis(
        "settings", "set", "reports_server_token", cwd=workspace, env_home=vis_home, input="abc\n"
    )
    assert done.returncode == 2, done.stderr
    assert "'reports_server_token' is 3 characters long" in done.stderr
    assert "at least" not in done.stdout and "8 characters" in done.stderr
    assert "abc" not in done.stderr
    assert not (vis_home / "secrets").exists()
    long = vis(
        "settings",
        "set",
        "reports_server_token",
        cwd=workspace,
        env_home=vis_home,
        input="sk-long-enough-1\n",
    )
    assert long.returncode == 0, long.stderr
    assert "sk-long-enough-1" in (vis_home / "secrets").read_text()


async def test_settings_form_and_login_refuse_a_short_secret(workspace: Path) -> None:
    user_extensions("reports")
    host = await open_host(workspace)
    try:
        with pytest.raises(ValueError, match="8 characters"):
            await host.settings.set("reports_server_token", "1234", "global")
        assert not host.settings.secret_saved("reports_server_token")
    finally:
        await host.close()
    problem = check_key("sk-12")
    assert problem is not None and "5 characters long" in problem
    assert check_key("sk-0123456789") is None


def test_ids_are_never_searched_for_a_short_secret_but_are_for_a_long_one() -> None:
    from vis_core.settings.redact import Redactor

    redactor = Redactor(lambda: ["b", "1234", "sk-long-secret-1"])
    data = {
        "type": "IterationStarted",
        "session_id": "b1234b",
        "turn_id": "b",
        "iteration_id": "call_sk-long-secret-1",
        "status": "completed",
        "code": "b = 1234 + len('sk-long-secret-1') + 12345",
    }
    assert redactor.value(data) == {
        "type": "IterationStarted",
        "session_id": "b1234b",
        "turn_id": "b",
        "iteration_id": "call_[REDACTED]",
        "status": "completed",
        "code": "[REDACTED] = [REDACTED] + len('[REDACTED]') + 12345",
    }


def test_streamed_text_holds_back_an_end_that_could_start_a_secret() -> None:
    from vis_core.settings.redact import Redactor

    redactor = Redactor(lambda: ["1234", "sk-long-secret-1"])
    assert redactor.secret_start("the key is sk-lo") == len("sk-lo")
    assert redactor.secret_start("the key is s") == 1
    assert redactor.secret_start("a PIN 1234") == 4  # "12345" would not be the PIN
    assert redactor.secret_start("nothing here.") == 0
