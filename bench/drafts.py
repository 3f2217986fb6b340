"""Benchmark of entering a draft of this repository, beside ``git worktree add`` in the same run.

A local clone of the repository (with a few uncommitted changes and an untracked file, as a
person's workspace has) is drafted ``--runs`` times: the time ``Drafts.create`` takes and the
disk its working copy holds (allocated blocks; a reflink clone shares them with the live
files where the filesystem can), then the same for a plain ``git worktree add``. Targets:
entering ≤ 1 s, disk ≈ the files changed (where the filesystem clones; elsewhere a copy).
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
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="vis-bench-drafts-") as tmp:
        base = Path(tmp)
        os.environ["VIS_HOME"] = str(base / "vis-home")
        from vis_core.drafts import Drafts
        from vis_core.paths import VisPaths
        from vis_core.store import Store

        live = base / "live"
        subprocess.run(["git", "clone", "-q", "--local", str(args.repo), str(live)], check=True)
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
        for run in range(args.runs):
            started = time.perf_counter()
            draft = drafts.create(live, f"bench-{run}", f"b{run}")
            draft_times.append(time.perf_counter() - started)
            draft_disk.append(allocated(drafts.tree(draft))[0])
            drafts.discard(draft)

        worktree_times: list[float] = []
        worktree_disk: list[int] = []
        for run in range(args.runs):
            target = base / f"wt-{run}"
            started = time.perf_counter()
            git(live, "worktree", "add", "-q", "-b", f"plain-{run}", str(target), "HEAD")
            worktree_times.append(time.perf_counter() - started)
            worktree_disk.append(allocated(target)[0])
            git(live, "worktree", "remove", "--force", str(target))

        mib = 1 / 2**20
        print(f"repository: {args.repo} ({tree_files} files, {tree_bytes * mib:.1f} MiB on disk)")
        print(f"filesystem clones files: {shared_extents(paths.data_dir)}")
        print(f"uncommitted changes carried: {len(changed) + 1} files, {changed_bytes:,} bytes")
        print(
            f"enter a draft (Drafts.create):  median {statistics.median(draft_times) * 1000:7.1f}"
            f" ms, max {max(draft_times) * 1000:7.1f} ms;"
            f" disk {statistics.median(draft_disk) * mib:6.1f} MiB"
        )
        print(
            f"git worktree add (no changes):  median "
            f"{statistics.median(worktree_times) * 1000:7.1f} ms, max "
            f"{max(worktree_times) * 1000:7.1f} ms; disk "
            f"{statistics.median(worktree_disk) * mib:6.1f} MiB"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
