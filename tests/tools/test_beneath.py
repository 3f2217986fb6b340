"""Reads and writes beneath a root: links inside it are followed, links and ``..`` out are not."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from vis_core.tools import beneath as module
from vis_core.tools.beneath import Beneath, Escape


@pytest.fixture(params=["openat2", "walk"])
def kernel(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each test runs with openat2 (where the kernel has it) and with the O_NOFOLLOW walk."""
    if request.param == "walk":
        monkeypatch.setattr(module._openat2, "usable", False)
    elif not module._openat2.usable:
        pytest.skip("this kernel has no openat2")
    return request.param


@pytest.fixture
def tree(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "root"
    (root / "a" / "b").mkdir(parents=True)
    (root / "a" / "b" / "f.txt").write_text("inside\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret").write_text("secret\n")
    return root, outside


def test_plain_paths_read_and_list(kernel: str, tree: tuple[Path, Path]) -> None:
    root, _ = tree
    files = Beneath(root)
    assert files.read_bytes("a/b/f.txt") == b"inside\n"
    assert files.read_bytes(root / "a" / "b" / "f.txt") == b"inside\n"
    assert files.read_bytes("a/./b/../b/f.txt") == b"inside\n"
    assert [e.name for e in files.listdir("a")] == ["b"]
    assert files.listdir(".")[0].is_dir


@pytest.mark.parametrize("how", ["relative", "absolute"])
def test_a_link_in_the_middle_inside_the_root_is_followed(
    kernel: str, tree: tuple[Path, Path], how: str
) -> None:
    root, _ = tree
    os.symlink("a/b" if how == "relative" else str(root / "a" / "b"), root / "link")
    files = Beneath(root)
    assert files.read_bytes("link/f.txt") == b"inside\n"
    assert files.walked("link/f.txt") == root / "a" / "b" / "f.txt"
    assert files.write_atomic("link/new.txt", b"made\n") == "a/b/new.txt"
    assert (root / "a" / "b" / "new.txt").read_bytes() == b"made\n"


@pytest.mark.parametrize("how", ["relative", "absolute"])
def test_a_link_in_the_middle_leading_out_is_refused(
    kernel: str, tree: tuple[Path, Path], how: str
) -> None:
    root, outside = tree
    os.symlink("../outside" if how == "relative" else str(outside), root / "link")
    files = Beneath(root)
    with pytest.raises(Escape):
        files.read_bytes("link/secret")
    with pytest.raises(Escape):
        files.write_atomic("link/planted.py", b"import os\n")
    with pytest.raises(Escape):
        files.listdir("link")
    with pytest.raises(Escape):
        files.mkdirs("link/deeper")
    assert sorted(p.name for p in outside.iterdir()) == ["secret"]


def test_dot_dot_above_the_root_is_refused(kernel: str, tree: tuple[Path, Path]) -> None:
    root, outside = tree
    files = Beneath(root)
    for path in ("../outside/secret", "a/../../outside/secret", str(outside / "secret")):
        with pytest.raises(Escape):
            files.read_bytes(path)
    with pytest.raises(Escape):
        files.write_atomic("a/../../outside/planted.py", b"x")
    assert sorted(p.name for p in outside.iterdir()) == ["secret"]


def test_a_link_at_the_last_component(kernel: str, tree: tuple[Path, Path]) -> None:
    root, outside = tree
    os.symlink("a/b/f.txt", root / "inner")
    os.symlink(str(outside / "secret"), root / "outer")
    os.symlink(str(outside / "new.py"), root / "dangling")
    files = Beneath(root)
    assert files.read_bytes("inner") == b"inside\n"
    assert files.stat("inner").st_size == len(b"inside\n")
    assert files.stat("inner", follow=False).st_mode & 0o170000 == 0o120000
    with pytest.raises(Escape):
        files.read_bytes("outer")
    with pytest.raises(Escape):
        files.stat("outer")
    # creating: a link in the way is never written through, inside or out
    with pytest.raises(Escape):
        fd, _ = files.open("dangling", os.O_WRONLY | os.O_CREAT)
    with pytest.raises(FileExistsError):
        files.write_atomic("dangling", b"x", exclusive=True)
    assert not (outside / "new.py").exists()
    # replacing renames over the link itself, never into its target
    files.write_atomic("outer", b"replaced\n")
    assert (outside / "secret").read_text() == "secret\n"
    assert (root / "outer").read_text() == "replaced\n" and not (root / "outer").is_symlink()


def test_a_link_to_a_link_and_a_loop(kernel: str, tree: tuple[Path, Path]) -> None:
    root, outside = tree
    os.symlink("a", root / "one")
    os.symlink("one/b", root / "two")
    os.symlink("loop", root / "loop")
    os.symlink("two/../../../outside", root / "sneaky")
    files = Beneath(root)
    assert files.read_bytes("two/f.txt") == b"inside\n"
    with pytest.raises(OSError, match="too many levels of links"):
        files.read_bytes("loop/x")
    with pytest.raises(Escape):
        files.read_bytes("sneaky/secret")


def test_hidden_folders_are_refused_by_identity(kernel: str, tree: tuple[Path, Path]) -> None:
    root, _ = tree
    home = root / "a" / "b"
    os.symlink("a/b", root / "alias")
    files = Beneath(root, hidden=(home,))
    for path in ("a/b/f.txt", "alias/f.txt", "a/b"):
        with pytest.raises(Escape, match="kept hidden"):
            files.read_bytes(path)
    with pytest.raises(Escape):
        files.write_atomic("alias/planted.py", b"x")
    assert sorted(p.name for p in home.iterdir()) == ["f.txt"]


def test_special_files_are_refused_not_waited_on(kernel: str, tree: tuple[Path, Path]) -> None:
    root, _ = tree
    os.mkfifo(root / "pipe")
    files = Beneath(root)
    with pytest.raises(OSError, match="not a regular file"):
        files.read_bytes("pipe")
    with pytest.raises(IsADirectoryError):
        files.read_bytes("a")


def test_write_modes_and_check(kernel: str, tree: tuple[Path, Path]) -> None:
    root, _ = tree
    files = Beneath(root)
    files.write_atomic("a/b/f.txt", b"new\n", mode=0o640)
    assert (root / "a" / "b" / "f.txt").stat().st_mode & 0o777 == 0o640
    seen: list[str] = []
    files.write_atomic("x/y/z.txt", b"z", check=seen.append)
    assert seen == ["x/y/z.txt"] and (root / "x" / "y" / "z.txt").read_bytes() == b"z"

    def refuse(path: str) -> None:
        raise PermissionError(path)

    with pytest.raises(PermissionError):
        files.write_atomic("a/refused.txt", b"no", check=refuse)
    assert not (root / "a" / "refused.txt").exists()
    assert not [p for p in root.rglob("*") if p.name.endswith(".vis-tmp")]
    files.replace("x/y/z.txt", "a/moved.txt")
    assert (root / "a" / "moved.txt").read_bytes() == b"z"
    files.unlink("a/moved.txt")
    assert not (root / "a" / "moved.txt").exists()


def test_chmod_changes_the_file_never_a_link_s_target(kernel: str, tree: tuple[Path, Path]) -> None:
    """``/undo`` puts a mode back through ``chmod``: a link the model swapped in for the file,
    or a folder link leading out, leaves the file outside as it was."""
    root, outside = tree
    files = Beneath(root)
    (outside / "secret").chmod(0o600)
    files.chmod("a/b/f.txt", 0o000)  # a mode that denies reading is no obstacle
    assert (root / "a" / "b" / "f.txt").stat().st_mode & 0o777 == 0
    files.chmod("a/b/f.txt", 0o755)
    assert (root / "a" / "b" / "f.txt").stat().st_mode & 0o777 == 0o755
    (root / "link").symlink_to(outside / "secret")
    (root / "out").symlink_to(outside)
    (root / "a" / "b" / "dir").mkdir()
    for path in ("link", "out/secret", "a/b/dir"):
        with pytest.raises(OSError):
            files.chmod(path, 0o777)
    assert (outside / "secret").stat().st_mode & 0o777 == 0o600
    assert (root / "a" / "b" / "dir").stat().st_mode & 0o777 != 0o777


def test_a_link_is_made_and_removed_through_no_link(kernel: str, tree: tuple[Path, Path]) -> None:
    """``symlink`` and ``remove_link`` (what /undo makes and removes links with) refuse any
    link on the way, in the root or out; neither replaces nor removes anything but the link
    they were asked about, and a target is text, never resolved."""
    root, outside = tree
    (root / "in").symlink_to("a", target_is_directory=True)
    (root / "out").symlink_to(outside, target_is_directory=True)
    b = Beneath(root)
    b.symlink("../../../etc/shadow", "a/new/l")  # the folder made, the target only text
    assert os.readlink(root / "a" / "new" / "l") == "../../../etc/shadow"
    for through in ("in/l", "out/l", "in/b/l", "out/sub/l"):
        with pytest.raises(Escape, match="is a link; not followed here"):
            b.symlink("x", through)
        with pytest.raises(Escape, match="is a link; not followed here"):
            b.remove_link(through, "x")
    assert sorted(p.name for p in outside.iterdir()) == ["secret"]
    assert not (root / "a" / "l").exists()
    with pytest.raises(FileExistsError):
        b.symlink("x", "a/b/f.txt")  # never over what is there
    with pytest.raises(FileExistsError, match="no longer a link"):
        b.remove_link("a/b/f.txt", "x")
    with pytest.raises(FileExistsError, match="now links elsewhere"):
        b.remove_link("a/new/l", "x")
    assert (root / "a" / "b" / "f.txt").read_text() == "inside\n"
    b.remove_link("out", str(outside))  # the link itself: what it leads to stays
    assert not (root / "out").is_symlink() and outside.is_dir()
