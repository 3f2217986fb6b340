"""Benchmark of entering a draft of this repository, beside ``git worktree add`` in the same run.

A local clone of the repository (with a few uncommitted changes and an untracked file, as a
person's workspace has) is drafted ``--runs`` times: the time ``Drafts.create`` takes and the
disk it costs, then the same for a plain ``git worktree add``. Disk is measured twice: the
blocks the working copy's files list (``st_blocks``; a reflink clone lists blocks it shares
with the live files) and the space the filesystem really lost (free blocks before and after,
synced), which is what a clone saves. Targets: entering ≤ 1 s; disk ≈ the files changed,
reached where the filesystem clones files (XFS, btrfs, bcachefs); on ext4 a draft is a copy.
``--tmp DIR`` puts the clone and Vis's data folder on another filesystem, e.g. an XFS loop
mount, to measure it there.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def allocated(folder: Path) -> tuple[int, int]:
    """(allocated bytes, file count) beneath ``folder``, ``.git`` left out."""
    total = count = 0
    for root, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in files:
            st = os.lstat(os.path.join(root, name))
            total += st.st_blocks * 512
            count += 1
    return total, count


def used_bytes(folder: Path) -> int:
    """Bytes in use on ``folder``'s filesystem (after a sync, so delayed allocation counts)."""
    os.sync()
    st = os.statvfs(folder)
    return (st.f_blocks - st.f_bfree) * st.f_frsize


def shared_extents(folder: Path) -> str:
    """Whether the filesystem clones files (FICLONE) here."""
    import fcntl

    from vis_core.drafts.files import FICLONE

    a, b = folder / ".probe-a", folder / ".probe-b"
    a.write_bytes(b"x" * 65536)
    try:
        with open(a, "rb") as src, open(b, "wb") as dst:
            fcntl.ioctl(dst.fileno(), FICLONE, src.fileno())
        return "yes (reflink)"
    except OSError as exc:
        return f"no ({exc.strerror}): unchanged files are copied"
    finally:
        a.unlink(missing_ok=True)
        b.unlink(missing_ok=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--repo", type=Path, default=HERE)
    parser.add_argument("--tmp", type=Path, default=None, help="where the clone and data go")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="vis-bench-drafts-", dir=args.tmp) as tmp:
        base = Path(tmp)
        os.environ["VIS_HOME"] = str(base / "vis-home")
        from vis_core.drafts import Drafts
        from vis_core.paths import VisPaths
        from vis_core.store import Store

        live = base / "live"
        subprocess.run(
            ["git", "clone", "-q", "--no-hardlinks", str(args.repo), str(live)], check=True
        )
        git(live, "config", "user.email", "bench@example.com")
        git(live, "config", "user.name", "Bench")
        tracked = git(live, "ls-files").splitlines()
        changed = [name for name in tracked if name.endswith(".py")][:3]
        for name in changed:
            with open(live / name, "a", encoding="utf-8") as out:
                out.write("\n# an uncommitted change\n")
        (live / "untracked_note.md").write_text("not committed yet\n")
        changed_bytes = sum((live / n).stat().st_size for n in [*changed, "untracked_note.md"])
        tree_bytes, tree_files = allocated(live)

        paths = VisPaths.from_env().ensure()
        drafts = Drafts(Store(paths.db_file), paths.data_dir)
        draft_times: list[float] = []
        draft_disk: list[int] = []
        draft_lost: list[int] = []
        for run in range(args.runs):
            before = used_bytes(base)
            started = time.perf_counter()
            draft = drafts.create(live, f"bench-{run}", f"b{run}")
            draft_times.append(time.perf_counter() - started)
            draft_lost.append(used_bytes(base) - before)
            draft_disk.append(allocated(drafts.tree(draft))[0])
            drafts.discard(draft)

        worktree_times: list[float] = []
        worktree_disk: list[int] = []
        worktree_lost: list[int] = []
        for run in range(args.runs):
            target = base / f"wt-{run}"
            before = used_bytes(base)
            started = time.perf_counter()
            git(live, "worktree", "add", "-q", "-b", f"plain-{run}", str(target), "HEAD")
            worktree_times.append(time.perf_counter() - started)
            worktree_lost.append(used_bytes(base) - before)
            worktree_disk.append(allocated(target)[0])
            git(live, "worktree", "remove", "--force", str(target))

        mib = 1 / 2**20
        print(f"repository: {args.repo} ({tree_files} files, {tree_bytes * mib:.1f} MiB on disk)")
        print(f"filesystem clones files: {shared_extents(paths.data_dir)}")
        print(f"uncommitted changes carried: {len(changed) + 1} files, {changed_bytes:,} bytes")
        for name, times, disk, lost in (
            ("enter a draft (Drafts.create)", draft_times, draft_disk, draft_lost),
            ("git worktree add (no changes)", worktree_times, worktree_disk, worktree_lost),
        ):
            print(
                f"{name}: median {statistics.median(times) * 1000:7.1f} ms, max "
                f"{max(times) * 1000:7.1f} ms; files list {statistics.median(disk) * mib:6.1f}"
                f" MiB; the filesystem lost {statistics.median(lost) * mib:6.2f} MiB"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
