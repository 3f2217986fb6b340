"""``vis.log`` and every other writer of the log folder write saved secrets as ``[REDACTED]``."""

from __future__ import annotations

from pathlib import Path

import vis_core.extension as vis
from vis_core.extension.logs import log_file, write_log
from vis_core.paths import VisPaths
from vis_core.settings.storage import SecretsFile

from .support import open_host, user_extensions

SECRET = "sk-log-8d41be02f7aa19"
# Logs the secret while its entry file loads (before the Host attaches its log redactor),
# and again from a tool call with a traceback that holds it.
LEAKY = f'''"""Fixture: logs a secret on purpose."""
import vis_core.extension as vis

vis.log("warn", "loading with {SECRET}")


def leak() -> str:
    """Log the secret, with a traceback."""
    vis.log("error", "calling with {SECRET}")
    try:
        raise RuntimeError("boom {SECRET}")
    except RuntimeError:
        import traceback
        from vis_core.extension.logs import write_log
        write_log("error", "failed", source="leaky", detail=traceback.format_exc())
    return "leaked"


vis.register_extension(vis.Extension(
    name="leaky", alias="leaky", description="Leaks.", symbols=[vis.Symbol(leak)],
))
'''


def _log_bytes() -> bytes:
    folder = VisPaths.from_env().log_dir
    return b"".join(p.read_bytes() for p in folder.rglob("*") if p.is_file())


async def test_vis_log_redacts_a_saved_secret_at_load_in_calls_and_after_close(
    workspace: Path,
) -> None:
    user_extensions("reports")
    (VisPaths.from_env().extensions_dir / "leaky.py").write_text(LEAKY, encoding="utf-8")
    # Saved before Vis starts: the entry file logs it before the Host exists.
    SecretsFile(VisPaths.from_env().ensure().secrets_file).write("reports_server_token", SECRET)
    host = await open_host(workspace)
    try:
        leaky = host.catalog.loaded.get("leaky")
        assert leaky is not None and leaky.error is None, host.catalog.loaded
        session = await host.new_session()
        assert await session.invoker.call("leak", (), {}) == "leaked"
        text = log_file(host.paths).read_text()
        assert "loading with [REDACTED]" in text
        assert "ERROR [leaky] calling with [REDACTED]" in text
        assert "RuntimeError: boom [REDACTED]" in text
    finally:
        await host.close()
    vis.log("info", f"after close {SECRET}")  # no Host attached: the secrets file still counts
    assert "INFO  [vis] after close [REDACTED]" in log_file(VisPaths.from_env()).read_text()
    assert SECRET.encode() not in _log_bytes()


async def test_a_secret_saved_while_vis_runs_is_redacted_at_once(workspace: Path) -> None:
    user_extensions("reports")
    host = await open_host(workspace)
    try:
        write_log("info", f"before saving {SECRET}", source="test")
        assert f"before saving {SECRET}" in log_file(host.paths).read_text()  # not a secret yet
        await host.settings.set("reports_server_token", SECRET, "global")
        vis.log("warn", f"now {SECRET}")
        assert "WARN  [vis] now [REDACTED]" in log_file(host.paths).read_text()
        await host.settings.reset("reports_server_token", "global")
        vis.log("warn", f"reset {SECRET}")  # no longer saved: written as it is
        assert f"reset {SECRET}" in log_file(host.paths).read_text()
    finally:
        await host.close()


async def test_the_log_writes_control_characters_as_text(workspace: Path) -> None:
    """``cat vis.log`` acted on the terminal: an extension's line, its traceback and a record
    of Vis's own (quoting a file name, a server's words) were written with ESC, OSC and bidi
    characters as they came."""
    import logging

    host = await open_host(workspace)
    try:
        write_log(
            "warn", "title\x1b]0;pwned\x07 red\x1b[31m", source="ext\x1b[2J", detail="a\x1b[1mb"
        )
        logging.getLogger("vis_core.test").warning("file %s", "evil\u202etxt.py\x1b[8m")
        text = log_file(host.paths).read_text(encoding="utf-8")
    finally:
        await host.close()
    assert "[ext\\x1b[2J] title\\x1b]0;pwned\\x07 red\\x1b[31m" in text
    assert "    a\\x1b[1mb" in text
    assert "file evil<U+202E>txt.py\\x1b[8m" in text
    assert not any(c < " " and c not in "\n" for c in text)
