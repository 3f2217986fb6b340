"""The model's ``attach(path)`` reads what ``cat`` may read: the jail's roots, Vis's folders
hidden, the ``fs_access`` op hooks, and no link that leads out of the workspace."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from sandbox.hostile import BWRAP_PROBLEM

GUARD = """
import vis_core.extension as vis

def no_secrets(call):
    if call["path"].endswith("private.txt"):
        raise PermissionError("private.txt is private")

vis.register_extension(vis.Extension(
    name="guard",
    description="Keeps private.txt from the file tools.",
    op_hooks=[vis.OpHook("fs_access", no_secrets)],
))
"""

ATTACH = """
for source in {sources!r}:
    try:
        found = await attach(source)
        print("attached", source, await read_attachment(found))
    except Exception as exc:
        print("refused", source, type(exc).__name__, str(exc).splitlines()[0])
"""


@pytest.mark.skipif(BWRAP_PROBLEM is not None, reason=str(BWRAP_PROBLEM))
async def test_attach_obeys_the_jail_hooks_and_links(
    extension, scripted, workspace: Path, vis_home: Path, tmp_path: Path
) -> None:
    extension("guard", GUARD)
    (vis_home / "config.toml").write_text("jail = true\n")
    (vis_home / "secrets").write_text('{"token": "vis-secret-77"}\n')
    elsewhere = tmp_path / "other-project"
    elsewhere.mkdir()
    (elsewhere / "notes.txt").write_text("other-project-notes\n")
    (workspace / "open.txt").write_text("hello\n")
    (workspace / "private.txt").write_text("hunter2\n")
    os.symlink(vis_home / "secrets", workspace / "link-to-secrets")
    os.symlink(elsewhere, workspace / "link-to-elsewhere")
    sources = [
        "open.txt",
        "private.txt",
        str(vis_home / "secrets"),
        str(elsewhere / "notes.txt"),
        "link-to-secrets",
        "link-to-elsewhere/notes.txt",
    ]
    run = await scripted([{"code": ATTACH.format(sources=sources)}, {"text": "done"}])
    session = await run.session()
    await session.submit("attach")
    (block,) = run.blocks()
    assert block.error is None, block.error
    printed = block.stdout
    assert "attached open.txt b'hello\\n'" in printed, printed
    assert "refused private.txt PermissionError attach" not in printed  # the hook's own words
    assert "private.txt is private" in printed
    for secret in ("hunter2", "vis-secret-77", "other-project-notes"):
        assert secret not in printed, printed
    assert sum(line.startswith("refused") for line in printed.splitlines()) == 5, printed
    assert printed.count("OutsideWorkspace") == 4, printed
