"""Secret rules: 0600 file, never in config/db/logs, [REDACTED] in stored events, owner-only."""

from __future__ import annotations

import json
import logging
import stat
from pathlib import Path

import pytest

from vis_core.extension.logs import log_file
from vis_core.extension.settings_decl import SettingScope
from vis_core.paths import TrustStore, VisPaths
from vis_core.settings.rows import NOT_SET, SAVED, row_state
from vis_core.settings.toggles import Toggles
from vis_core.settings.tree import build_tree

from .support import install, open_host, user_extensions

SECRET = "sk-test-5f2c9a77d1e04b"


def _script(folder: Path) -> Path:
    script = folder / "script.json"
    code = "print(await reports.token_echo())\nprint(await peeker.peek())"
    script.write_text(json.dumps([{"code": code}, {"text": "done"}]), encoding="utf-8")
    return script


def _bytes_under(folder: Path, *names: str) -> bytes:
    return b"".join(
        p.read_bytes()
        for p in folder.rglob("*")
        if p.is_file() and (not names or any(p.name.startswith(n) for n in names))
    )


async def test_a_saved_secret_never_reaches_config_db_or_logs(
    workspace: Path, vis_home: Path, tmp_path: Path
) -> None:
    user_extensions("reports", "peeker")
    host = await open_host(workspace, script=_script(tmp_path))
    try:
        tree = build_tree(host.catalog.loaded)
        node = tree.find("reports_server_token")
        assert node is not None
        assert row_state(host.settings, node, SettingScope.GLOBAL, None).display == NOT_SET
        await host.settings.set("reports_server_token", SECRET, "global")
        assert row_state(host.settings, node, SettingScope.GLOBAL, None).display == SAVED
        secrets = host.paths.secrets_file
        assert stat.S_IMODE(secrets.stat().st_mode) == 0o600
        session = await host.new_session()
        ended = await session.submit("show the token")
        assert ended.status.value == "completed", ended
        stored = json.dumps([json.loads(e.data) for e in host.store.events(session.id)])
        assert "token=[REDACTED]" in stored  # the owner read it; the store redacted it
        assert "peek=''" in stored  # another extension gets the default
        logging.getLogger("vis_core.test").error("leaking %s on purpose", SECRET)
        assert "leaking [REDACTED] on purpose" in log_file(host.paths).read_text()
    finally:
        await host.close()
    assert SECRET.encode() not in _bytes_under(vis_home, "config.toml", "vis.db")
    assert SECRET.encode() not in _bytes_under(vis_home / "logs")
    assert SECRET.encode() in secrets.read_bytes()


async def test_a_secret_is_read_only_by_its_owner_while_vis_calls_it(workspace: Path) -> None:
    user_extensions("reports", "peeker")
    host = await open_host(workspace)
    try:
        await host.settings.set("reports_server_token", SECRET, "global")
        ext = host.catalog.loaded.get("reports")
        assert ext is not None
        (token,) = [s for s in ext.settings if s.id == "reports_server_token"]
        assert token.value() == ""  # outside a call: the default
        session = await host.new_session()
        assert await session.invoker.call("token_echo", (), {}) == f"token={SECRET}"
        assert await session.invoker.call("peek", (), {}) == "peek=''"  # not its owner
    finally:
        await host.close()


async def test_a_project_extension_cannot_save_a_secret(workspace: Path) -> None:
    (workspace / ".vis").mkdir()
    install(workspace / ".vis" / "extensions", "reports")
    TrustStore(VisPaths.from_env()).trust(workspace)
    host = await open_host(workspace)
    try:
        ext = host.catalog.loaded.get("reports")
        assert ext is not None and ext.tag == "project"
        with pytest.raises(ValueError, match="secret of a project extension"):
            await host.settings.set("reports_server_token", SECRET, "global")
        session = await host.new_session()
        assert await session.invoker.call("token_echo", (), {}) == "token="
        assert not host.paths.secrets_file.exists() or SECRET.encode() not in (
            host.paths.secrets_file.read_bytes()
        )
        # --toggles said to save it with `vis settings set`, which refuses it (a tester)
        toggles = Toggles([f"reports_server_token={SECRET}"])
        problem = toggles.problem("reports_server_token", host.settings.owners())
        assert problem is not None and "vis settings set" not in problem
        assert problem.endswith(
            "Vis saves no secret for a project's extension, so it keeps its default"
        )
    finally:
        await host.close()


@pytest.mark.parametrize(
    "secret", ["sk-plain-5f2c9a77", 'pa"ss\\word\nnext\ttab\x01', "ключ-секрет-42", "a</b>&'c"]
)
def test_an_event_is_redacted_whatever_its_secret_escapes_to_and_kept_as_is_without_one(
    secret: str,
) -> None:
    """The store's hook looks for each secret as the event's JSON writes it (escaped), and
    leaves an event holding none untouched (the same objects: nothing walked or rebuilt)."""
    from vis_core.events import ActivityEnded, event_payload
    from vis_core.model.activity import (
        ActivityPresentation,
        ActivityRecord,
        ActivityState,
        SymbolTag,
    )
    from vis_core.settings.redact import Redactor
    from vis_core.system.redaction import REDACTED

    redactor = Redactor(lambda: ["other-secret-value", secret])

    def ended(error: str) -> ActivityEnded:
        record = ActivityRecord(
            "a1",
            "s1",
            "t1",
            "i1",
            "echo",
            SymbolTag.OBSERVATION,
            ActivityState.FAILED,
            ActivityPresentation("Echo", "done"),
            error=error,
        )
        return ActivityEnded("s1", activity=record)

    event = ended(f"failed with {secret} inside")
    data, payload = event_payload(event)
    redacted, cleaned, text = redactor.event(event, data, payload)
    assert redacted.activity is not None
    assert redacted.activity.error == f"failed with {REDACTED} inside"
    assert secret not in text and json.dumps(secret)[1:-1] not in text and REDACTED in text
    assert json.loads(text) == cleaned
    clean = ended("failed plainly")
    data, payload = event_payload(clean)
    kept = redactor.event(clean, data, payload)
    assert kept[0] is clean and kept[1] is data and kept[2] is payload
