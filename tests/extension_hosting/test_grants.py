"""``vis.Grant`` validation; a refused grant makes the extension a load failure."""

from __future__ import annotations

from pathlib import Path

import pytest

import vis_core.extension as vis
from vis_core.extension_host.loader import load_extensions

from .harness import install_extension

REFUSED = """
import vis_core.extension as vis

vis.register_extension(vis.Extension(
    name="greedy", description="Wants the whole home.",
    grants=[vis.Grant("~", reason="Everything.")],
))
"""

ALLOWED = """
import vis_core.extension as vis

vis.register_extension(vis.Extension(
    name="java-tools", description="Java build tools.",
    grants=[
        vis.Grant("/opt/jdk", reason="Run the JDK."),
        vis.Grant("~/.m2/repository", "read_write", reason="Fill the Maven cache."),
    ],
))
"""


def test_a_refused_grant_fails_the_extension_load(vis_home: Path) -> None:
    install_extension(vis_home, "greedy", REFUSED)
    install_extension(vis_home, "java_tools", ALLOWED)
    loaded = load_extensions(bundled=None, include_packages=False)
    assert loaded.get("greedy") is None
    (error,) = loaded.errors
    assert "greedy.py" in str(error.path)
    assert "covers your home folder" in error.message
    java = loaded.get("java-tools")
    assert java is not None and java.declaration is not None
    read, write = java.declaration.grants
    assert (read.mode, write.mode) == ("read", "read_write")
    assert write.expanded == Path.home() / ".m2" / "repository"


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("/", "covers the filesystem root"),
        ("relative/jdk", "absolute after '~' expansion"),
        ("~", "covers your home folder"),
        ("~/.vis", "covers the Vis home"),
    ],
)
def test_grant_paths_are_refused(path: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        vis.Grant(path, reason="Needed.")


def test_grant_inside_vis_home_and_arguments(vis_home: Path) -> None:
    with pytest.raises(ValueError, match="covers the Vis home"):
        vis.Grant(str(vis_home), reason="All of it.")
    assert vis.Grant(str(vis_home / "cache"), reason="A folder inside.").mode == "read"
    with pytest.raises(ValueError, match="give a reason"):
        vis.Grant("/opt/jdk", reason=" ")
    with pytest.raises(ValueError, match="mode 'write' is unknown"):
        vis.Grant("/opt/jdk", "write", reason="x")
    with pytest.raises(ValueError, match=r"grants\[0\] is str"):
        vis.Extension(name="x", description="y", grants=["/opt/jdk"])


def test_a_folder_above_home_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "users" / "me"))
    with pytest.raises(ValueError, match="covers your home folder"):
        vis.Grant(str(tmp_path / "users"), reason="Every user.")
    assert vis.Grant("~/.sdkman/candidates/java/current", reason="JDK.").expanded == (
        tmp_path / "users" / "me" / ".sdkman" / "candidates" / "java" / "current"
    )


def test_a_link_to_a_refused_folder_is_refused(
    tmp_path: Path, vis_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The jail binds a grant's target (it follows a link, as the spec says), so a grant of a
    link to the root, the home folder or the Vis home covers them as a grant of them does."""
    home = tmp_path / "home"
    (home / "tools").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    for name, target, message in (
        ("to-root", Path("/"), "covers the filesystem root"),
        ("to-home", home, "covers your home folder"),
        ("to-vis", vis_home, "covers the Vis home"),
    ):
        link = tmp_path / name
        link.symlink_to(target)
        with pytest.raises(ValueError, match=f"it links to {target}, which {message}"):
            vis.Grant(str(link), reason="Needed.")
    toolchain = tmp_path / "current"
    toolchain.symlink_to(home / "tools")  # a link to a folder inside home is a toolchain
    assert vis.Grant(str(toolchain), reason="Run the JDK.").expanded == toolchain
