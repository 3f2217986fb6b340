"""What the trust check read is what loads: links are hashed by content, and a swap of the
control files between the check and the load changes nothing that runs."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

import vis_core.paths as paths_module
from vis_core.events import BlockFinished, Event
from vis_core.host import Host, HostOptions
from vis_core.paths import TrustStore, VisPaths

EXTENSION = '''\
import vis_core.extension as vis

VERSION = "{version}"
{extra}

def which_version() -> str:
    """Which version of this extension runs."""
    return VERSION


vis.register_extension(vis.Extension(
    name="linked", alias="linked", description=VERSION + " version",
    symbols=[vis.Symbol(which_version)],
))
'''
PACKAGE = '''\
import vis_core.extension as vis

from .helper import VALUE


def helper_value() -> str:
    """The helper module's value."""
    return VALUE


vis.register_extension(vis.Extension(
    name="packaged", alias="packaged", description="a package",
    symbols=[vis.Symbol(helper_value)],
))
'''


def _extension(version: str, marker: Path | None = None) -> str:
    extra = "" if marker is None else f"open({str(marker)!r}, 'w').write('ran')"
    return EXTENSION.format(version=version, extra=extra)


def _script(path: Path, code: str) -> Path:
    path.write_text(yaml.safe_dump([{"code": code}, {"text": "done"}]), encoding="utf-8")
    return path


async def _printed(host: Host) -> str:
    session = await host.new_session()
    events: list[Event] = []
    session.subscribe(events.append)
    await session.submit("go")
    (block,) = [e for e in events if isinstance(e, BlockFinished)]
    assert block.error is None, block.error
    return block.stdout.strip()


async def _open(workspace: Path, script: Path) -> Host:
    return await Host.open(HostOptions(workspace=workspace, provider="scripted", script=script))


async def test_a_linked_extension_is_trusted_for_its_content_not_its_link_text(
    workspace: Path, tmp_path: Path
) -> None:
    """A jailed block can write the workspace file a `.vis/` link points to (not `.vis/`):
    the next start must not run the changed code under the old trust."""
    source = workspace / "src" / "linked.py"
    source.parent.mkdir()
    source.write_text(_extension("trusted"), encoding="utf-8")
    (workspace / ".vis" / "extensions").mkdir(parents=True)
    os.symlink("../../src/linked.py", workspace / ".vis" / "extensions" / "linked.py")
    TrustStore(VisPaths.from_env()).trust(workspace)
    script = _script(tmp_path / "s.yaml", "print(await which_version())")
    host = await _open(workspace, script)
    try:
        assert host.space.trusted
        assert await _printed(host) == "trusted"
    finally:
        await host.close()

    marker = tmp_path / "evil-ran.txt"
    source.write_text(_extension("evil", marker), encoding="utf-8")  # the link stays as it was
    host = await _open(workspace, script)
    try:
        assert not host.space.trusted and host.space.trust_changed
        assert host.catalog.loaded.get("linked") is None
        assert any("changed since you trusted it" in note for note in host.startup_notes())
    finally:
        await host.close()
    assert not marker.exists()


class _SwapAfterHashing(list[Path]):
    """The control files, listed for the trust check; once the check has hashed the last
    one, ``swap`` runs: another process replacing them before Vis loads them."""

    def __init__(self, items: list[Path], swap) -> None:  # type: ignore[no-untyped-def]
        super().__init__(items)
        self._swap = swap

    def __iter__(self) -> Iterator[Path]:
        yield from super().__iter__()
        self._swap()


async def test_files_swapped_between_the_trust_check_and_the_load_do_not_load(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    extensions = workspace / ".vis" / "extensions"
    (extensions / "packaged").mkdir(parents=True)
    (extensions / "linked.py").write_text(_extension("trusted"), encoding="utf-8")
    (extensions / "packaged" / "__init__.py").write_text(PACKAGE, encoding="utf-8")
    (extensions / "packaged" / "helper.py").write_text('VALUE = "trusted"\n', encoding="utf-8")
    (workspace / ".vis" / "settings.toml").write_text('[settings]\nmax_iterations = "25"\n')
    (workspace / "vis.yml").write_text("environment:\n  NAME: trusted\n", encoding="utf-8")
    (workspace / ".env").write_text("FROM_DOTENV=trusted\n", encoding="utf-8")
    servers = {"mcpServers": {"trusted": {"command": "true", "enabled": False}}}
    (workspace / ".vis" / "mcp.json").write_text(json.dumps(servers), encoding="utf-8")
    TrustStore(VisPaths.from_env()).trust(workspace)
    marker = tmp_path / "evil-ran.txt"

    def swap() -> None:
        (extensions / "linked.py").write_text(_extension("evil", marker), encoding="utf-8")
        (extensions / "packaged" / "helper.py").write_text(
            f'VALUE = "evil"\nopen({str(marker)!r}, "w").write("ran")\n', encoding="utf-8"
        )
        (extensions / "added.py").write_text(_extension("added", marker), encoding="utf-8")
        (workspace / ".vis" / "settings.toml").write_text('[settings]\nmax_iterations = "200"\n')
        (workspace / "vis.yml").write_text("environment:\n  NAME: evil\n", encoding="utf-8")
        (workspace / ".env").write_text("FROM_DOTENV=evil\n", encoding="utf-8")
        evil = {"mcpServers": {"evil": {"command": "true", "enabled": False}}}
        (workspace / ".vis" / "mcp.json").write_text(json.dumps(evil), encoding="utf-8")

    real = paths_module.control_files
    swaps = [swap]

    def listed(project: Path) -> list[Path]:
        found = real(project)
        return _SwapAfterHashing(found, swaps.pop()) if swaps else found

    monkeypatch.setattr(paths_module, "control_files", listed)
    code = "print(await which_version(), await helper_value())"
    host = await _open(workspace, _script(tmp_path / "s.yaml", code))
    try:
        assert not swaps  # the swap happened, right after the check hashed the files
        linked = host.catalog.loaded.get("linked")
        assert linked is not None and linked.declaration is not None
        assert linked.declaration.description == "trusted version"
        assert host.catalog.loaded.get("added") is None
        assert host.settings.get("max_iterations", None) == "25"
        assert host.space.project_values() == {"NAME": "trusted", "FROM_DOTENV": "trusted"}
        config = host.mcp.config()
        assert config is not None and [s.name for s in config.servers] == ["trusted"]
        # the session's extension worker loads the checked bytes too, not the files
        assert await _printed(host) == "trusted trusted"
    finally:
        await host.close()
    assert not marker.exists()


@pytest.mark.parametrize("link", [".vis/extensions/packaged", ".vis/extensions"])
async def test_a_linked_folder_in_vis_is_not_followed_and_the_person_is_told(
    workspace: Path, tmp_path: Path, link: str
) -> None:
    """What a linked folder points to can change after trust (a jailed block writes the
    workspace): it is neither hashed by content nor loaded."""
    real = workspace / "src" / "exts"
    (real / "packaged").mkdir(parents=True)
    (real / "packaged" / "__init__.py").write_text(PACKAGE, encoding="utf-8")
    (real / "packaged" / "helper.py").write_text('VALUE = "linked"\n', encoding="utf-8")
    (workspace / ".vis" / "extensions").parent.mkdir(parents=True, exist_ok=True)
    if link == ".vis/extensions":
        os.symlink("../src/exts", workspace / ".vis" / "extensions")
    else:
        (workspace / ".vis" / "extensions").mkdir()
        os.symlink("../../src/exts/packaged", workspace / link)
    TrustStore(VisPaths.from_env()).trust(workspace)
    host = await _open(workspace, _script(tmp_path / "s.yaml", "print(1)"))
    try:
        assert host.space.trusted
        assert host.catalog.loaded.get("packaged") is None
        notes = "\n".join(host.startup_notes())
        assert f"{link} is a link to a folder; Vis does not follow" in notes
    finally:
        await host.close()


def test_a_project_never_trusted_is_not_hashed_only_its_settings_read(workspace: Path) -> None:
    """A checkout's large files in `.vis/` must not make every start read them."""
    (workspace / ".vis").mkdir()
    with open(workspace / ".vis" / "blob", "wb") as blob:
        blob.truncate(1 << 40)  # sparse: a terabyte no start should read
    (workspace / ".vis" / "settings.toml").write_text("[settings]\njail = false\n")
    snapshot, trusted = TrustStore(VisPaths.from_env()).verified(workspace)
    assert not trusted and snapshot.fingerprint == ""
    assert ".vis/blob" not in snapshot.digests
    assert snapshot.read(".vis/settings.toml") == b"[settings]\njail = false\n"
