"""Saving a setting edits the file in place: comments and layout stay, a broken file is kept."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from warm_servers import vis_command

from vis_core.config import ConfigFile
from vis_core.settings.storage import GlobalFile, ProjectFiles, SettingsFileError

CONFIG = """# my settings
model = "anthropic/claude"   # the one I like

[extensions]
# todo is noisy
disabled = ["todo"]
"""


def test_vis_settings_set_keeps_comments_and_formatting(workspace: Path, vis_home: Path) -> None:
    (vis_home / "config.toml").write_text(CONFIG)
    env = {**os.environ, "VIS_HOME": str(vis_home)}
    done = subprocess.run(
        [*vis_command(env=env), "settings", "set", "jail", "true"],
        cwd=workspace,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    text = (vis_home / "config.toml").read_text()
    assert text.startswith('# my settings\nmodel = "anthropic/claude"   # the one I like\n')
    assert "jail = true" in text and "# todo is noisy\ndisabled" in text
    GlobalFile(vis_home / "config.toml").set_disabled("git", True)
    assert "# todo is noisy" in (vis_home / "config.toml").read_text()


def test_project_settings_keep_comments(workspace: Path) -> None:
    files = ProjectFiles(workspace)
    files.settings_file.parent.mkdir()
    files.settings_file.write_text("# team defaults\n[settings]\nintrospection = true  # keep\n")
    files.write("max_iterations", "100")
    text = files.settings_file.read_text()
    assert text.startswith("# team defaults\n[settings]\nintrospection = true  # keep\n")
    assert 'max_iterations = "100"' in text


@pytest.mark.parametrize("content", [b"jail = [\n", b"model = '\xff'\n"], ids=["toml", "utf8"])
def test_a_broken_file_is_never_rewritten(vis_home: Path, content: bytes) -> None:
    path = vis_home / "config.toml"
    path.write_bytes(content)
    with pytest.raises(SettingsFileError) as caught:
        GlobalFile(path).write("jail", True)
    assert str(path) in str(caught.value)
    assert path.read_bytes() == content


def test_config_put_in_place_with_the_same_size_and_time_is_read_again(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text('model = "a/one"\n')
    config = ConfigFile(path)
    was = path.stat()
    other = tmp_path / "new.toml"
    other.write_text('model = "a/two"\n')  # as long, saved by renaming over it
    os.utime(other, ns=(was.st_atime_ns, was.st_mtime_ns))
    os.replace(other, path)
    assert config.reread() and config.current().data["model"] == "a/two"
